"""An HPA whose ``scaleTargetRef`` names a custom kind: upstream's HPA controller maps any
group/kind with a ``scale`` subresource (``horizontal.go``, ``scaleForResourceMappings``),
so a CR's Scale (``apiextensions-apiserver/pkg/registry/customresource/etcd.go``) is read
for its selector and replicas, and written with the new size, as a Deployment's is.
The HPA controller reaches custom kinds through ``controllers.scaletargets``'s injected
lookup, wired here to ``apiserver.crscaletargets`` as serve wires it."""

from __future__ import annotations

import pytest

from kubeprio.api import errors
from kubeprio.api.apps import Deployment, ScaleSpec
from kubeprio.api.manifest import decode_object as decode
from kubeprio.api.model import evolve
from kubeprio.apiserver.crscaletargets import CustomResourceScales
from kubeprio.apiserver.http import KubeApp
from kubeprio.apiserver.service import ApiService
from kubeprio.controllers.horizontal import HpaError
from kubeprio.controllers.scaletargets import ClientScaleTarget
from tests.conftest import ManualClock
from tests.unit.controllers.crdstack import CrdStack
from tests.unit.controllers.test_horizontal import Rig, hpa_doc

WIDGET_TARGET = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "g"}


@pytest.fixture
def stacks(api: ApiService, clock: ManualClock) -> tuple[Rig, CrdStack]:
    crd = CrdStack(api, clock)
    crd.create_crd()
    rig = Rig(api, clock)
    kube: KubeApp = crd.http.app.state.kube  # type: ignore[attr-defined]
    rig.controller.custom_scales = CustomResourceScales(kube.custom, kube.custom_rest)
    return rig, crd


def _widget(stack: CrdStack, replicas: int) -> None:
    body = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"replicas": replicas},
    }
    url = "/apis/example.com/v1/namespaces/default/widgets"
    created = stack.http.post(url, json=body).json()
    created["status"] = {"replicas": replicas, "selector": "app=web"}
    assert stack.http.put(f"{url}/g/status", json=created).status_code == 200


def _replicas(stack: CrdStack) -> int:
    body = stack.http.get("/apis/example.com/v1/namespaces/default/widgets/g").json()
    replicas: int = body["spec"]["replicas"]
    return replicas


def test_a_custom_resource_is_scaled_on_its_pods_metrics(stacks):
    rig, crd = stacks
    rig.pods_using("900m", "900m")
    rig.api.delete(Deployment, "web", "default")
    _widget(crd, 2)
    rig.api.create(decode(hpa_doc(scaleTargetRef=WIDGET_TARGET)))
    rig.advance(15)
    # 90 % of request against a 50 % target over the scale's selector: ceil(2 * 1.8) = 4.
    assert _replicas(crd) == 4
    assert rig.events("SuccessfulRescale") == [
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    ]


def test_a_kind_no_crd_serves_is_no_match(stacks):
    rig, _crd = stacks
    with pytest.raises(HpaError, match=r'^no matches for kind "Gizmo" in group "example\.com"$'):
        rig.controller._scale_target("example.com", "Gizmo")
    assert isinstance(rig.controller._scale_target("apps", "Deployment"), ClientScaleTarget)


def test_the_custom_scale_round_trips_through_the_rest(stacks):
    rig, crd = stacks
    _widget(crd, 1)
    target = rig.controller._scale_target("example.com", "Widget")
    scale = target.get_scale("g", "default")
    assert scale.spec == ScaleSpec(replicas=1)
    assert scale.status is not None
    assert scale.status.selector == "app=web"
    written = target.update_scale(evolve(scale, spec=ScaleSpec(replicas=3)))
    assert written.spec == ScaleSpec(replicas=3)
    assert _replicas(crd) == 3
    # The Scale's resourceVersion is a precondition: the old one is now stale.
    with pytest.raises(errors.ConflictError):
        target.update_scale(evolve(scale, spec=ScaleSpec(replicas=5)))
    with pytest.raises(errors.NotFoundError):
        target.get_scale("nope", "default")
