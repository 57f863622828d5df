"""Discovery documents: ``/version``, aggregated and legacy ``/api`` and ``/apis``.

What it is: the JSON kubectl and the client libraries read to learn which resources exist,
built from ``api.kinds.RESOURCES``. Shapes follow upstream's
``staging/src/k8s.io/apiserver/pkg/endpoints/discovery`` (legacy ``APIVersions``,
``APIGroupList``, ``APIResourceList``) and ``discovery/aggregated`` (``apidiscovery.k8s.io/v2
APIGroupDiscoveryList``), as recorded in ``shared/reference/kubectl-wire.md`` §1-2:

* ``/version`` reports ``minor: "32"``: the kubectl on the test machines is a dispatcher
  that runs the bundled kubectl matching the server's minor version;
* the aggregated form is served only when the ``Accept`` header asks for ``v=v2`` (kubectl
  1.27 asks only for v2beta1 and breaks on v2), with the exact content type
  ``AGGREGATED_CONTENT_TYPE``: served as plain JSON kubectl would read it as legacy
  discovery and find no resources;
* short names, scope, verbs and ``responseKind`` come only from here, so every one is set;
* the legacy per-group-version lists include subresources (``pods/eviction``), which
  ``kubectl drain`` looks up before it evicts (without it, it deletes and ignores PDBs).

Who drives it: ``apiserver.http``. Rules: pure data, no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import serverversion
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.model import JsonDict

AGGREGATED_CONTENT_TYPE: Final = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
)

VERSION_INFO: Final[JsonDict] = {
    "major": serverversion.MAJOR,
    "minor": serverversion.MINOR,
    "gitVersion": serverversion.GIT_VERSION,
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}
"""``/version``: ``minor`` "32" selects kubectl 1.32 in the dispatcher (wire doc §1). The
fields of v1.32's ``version.Info`` (apimachinery ``pkg/version/types.go`` at v0.32), so no
``emulationMajor``/``minCompatibilityMajor`` and the like, which v1.33 added."""


def wants_aggregated(accept: str) -> bool:
    """Whether ``Accept`` lists ``as=APIGroupDiscoveryList`` with ``v=v2`` (not v2beta1)."""
    for entry in accept.split(","):
        params = {
            key.strip(): value.strip()
            for key, _, value in (part.partition("=") for part in entry.split(";")[1:])
        }
        if (
            params.get("as") == "APIGroupDiscoveryList"
            and params.get("g") == "apidiscovery.k8s.io"
            and params.get("v") == "v2"
        ):
            return True
    return False


def _groups(resources: tuple[ResourceInfo, ...]) -> dict[str, list[ResourceInfo]]:
    """Resources by group version, core first, then groups in table order."""
    by_gv: dict[str, list[ResourceInfo]] = {}
    for info in resources:
        by_gv.setdefault(info.api_version, []).append(info)
    return by_gv


def _aggregated_resource(info: ResourceInfo) -> JsonDict:
    entry: JsonDict = {
        "resource": info.plural,
        "responseKind": {"group": info.group, "version": info.version, "kind": info.kind},
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular,
        "verbs": sorted(info.verbs),
    }
    if info.short_names:
        entry["shortNames"] = list(info.short_names)
    if info.categories:
        entry["categories"] = list(info.categories)
    if info.subresources:
        entry["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": {"group": sub.group, "version": sub.version, "kind": sub.kind},
                "verbs": list(sub.verbs),
            }
            for sub in info.subresources
        ]
    return entry


def aggregated(resources: tuple[ResourceInfo, ...], *, core: bool) -> JsonDict:
    """``APIGroupDiscoveryList`` for ``/api`` (``core``) or ``/apis``."""
    items: list[JsonDict] = []
    by_group: dict[str, list[JsonDict]] = {}
    for infos in _groups(resources).values():
        group = infos[0].group
        if (group == "") != core:
            continue
        by_group.setdefault(group, []).append(
            {
                "version": infos[0].version,
                "freshness": "Current",
                "resources": [_aggregated_resource(info) for info in infos],
            }
        )
    for group, versions in by_group.items():
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": versions})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


def api_versions() -> JsonDict:
    """Legacy ``/api``: ``APIVersions``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def api_group_list(resources: tuple[ResourceInfo, ...]) -> JsonDict:
    """Legacy ``/apis``: ``APIGroupList`` of the named groups."""
    groups: dict[str, list[str]] = {}
    for info in resources:
        if info.group:
            versions = groups.setdefault(info.group, [])
            if info.version not in versions:
                versions.append(info.version)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [api_group(group, versions) for group, versions in groups.items()],
    }


def api_group(group: str, versions: list[str]) -> JsonDict:
    """Legacy ``/apis/<group>``: ``APIGroup``."""
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def resource_list(group_version: str, resources: list[ResourceInfo]) -> JsonDict:
    """Legacy ``/api/v1`` or ``/apis/<g>/<v>``: ``APIResourceList`` with subresources."""
    entries: list[JsonDict] = []
    for info in resources:
        entry: JsonDict = {
            "name": info.plural,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": sorted(info.verbs),
        }
        if info.short_names:
            entry["shortNames"] = list(info.short_names)
        if info.categories:
            entry["categories"] = list(info.categories)
        entries.append(entry)
        for sub in info.subresources:
            sub_entry: JsonDict = {
                "name": f"{info.plural}/{sub.name}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": sub.kind,
                "verbs": list(sub.verbs),
            }
            if sub.group != info.group or sub.version != info.version:
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            entries.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    }
