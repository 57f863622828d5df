"""DaemonSet and ControllerRevision Table rows, as upstream's ``printDaemonSet`` and
``printControllerRevision`` (``pkg/printers/internalversion/printers.go``) print them."""

from __future__ import annotations

from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver import tables
from tests.conftest import EPOCH

STAMP = "2026-01-01T00:00:00Z"


def daemon_set(node_selector: dict[str, str] | None = None) -> DaemonSet:
    spec: dict[str, object] = {
        "containers": [{"name": "fluentd", "image": "fluentd:v1"}, {"name": "side", "image": "s:2"}]
    }
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return from_dict(
        DaemonSet,
        {
            "metadata": {"name": "fluentd", "namespace": "kube-system", "creationTimestamp": STAMP},
            "spec": {
                "selector": {"matchLabels": {"app": "fluentd"}},
                "template": {"metadata": {"labels": {"app": "fluentd"}}, "spec": spec},
            },
            "status": {
                "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 1,
                "numberAvailable": 2,
                "numberMisscheduled": 0,
            },
        },
    )


def test_daemon_set_columns_and_cells() -> None:
    """NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE, wide CONTAINERS
    IMAGES SELECTOR; NODE SELECTOR is labels.FormatLabels (sorted ``k=v``, ``<none>``)."""
    table = tables.build_table(
        DaemonSet,
        [daemon_set({"role": "log", "disk": "ssd"})],
        now=EPOCH + 90,
        resource_version="7",
    )
    columns = [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", "string", 0),
        ("Desired", "integer", 0),
        ("Current", "integer", 0),
        ("Ready", "integer", 0),
        ("Up-to-date", "integer", 0),
        ("Available", "integer", 0),
        ("Node Selector", "string", 0),
        ("Age", "string", 0),
        ("Containers", "string", 1),
        ("Images", "string", 1),
        ("Selector", "string", 1),
    ]
    assert table["rows"][0]["cells"] == [
        "fluentd",
        3,
        3,
        2,
        1,
        2,
        "disk=ssd,role=log",
        "90s",
        "fluentd,side",
        "fluentd:v1,s:2",
        "app=fluentd",
    ]
    (row,) = tables.build_table(DaemonSet, [daemon_set()], now=EPOCH, resource_version="7")["rows"]
    assert row["cells"][6] == "<none>"


def test_controller_revision_shows_its_controller_as_kind_group_name() -> None:
    """CONTROLLER ``daemonset.apps/<name>`` (lower-cased GroupKind), ``<none>`` for none."""
    owned = from_dict(
        ControllerRevision,
        {
            "metadata": {
                "name": "fluentd-5d8b7f9c6",
                "namespace": "kube-system",
                "creationTimestamp": STAMP,
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "DaemonSet",
                        "name": "fluentd",
                        "uid": "u",
                        "controller": True,
                    }
                ],
            },
            "data": {},
            "revision": 3,
        },
    )
    orphan = from_dict(
        ControllerRevision,
        {"metadata": {"name": "x", "creationTimestamp": STAMP}, "data": {}, "revision": 1},
    )
    table = tables.build_table(
        ControllerRevision, [owned, orphan], now=EPOCH + 3600 * 5, resource_version="1"
    )
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Controller",
        "Revision",
        "Age",
    ]
    assert [r["cells"] for r in table["rows"]] == [
        ["fluentd-5d8b7f9c6", "daemonset.apps/fluentd", 3, "5h"],
        ["x", "<none>", 1, "5h"],
    ]
