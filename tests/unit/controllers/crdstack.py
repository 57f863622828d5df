"""A CRD's life in process: an ApiService behind the HTTP app, with the CRD naming and
finalizer controllers over one informer, driven step by step on a manual clock."""

from __future__ import annotations

import random
from typing import Any

from starlette.testclient import TestClient

from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.crinstances import StoredCustomResources
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.crdfinalizer import CrdFinalizerController
from kubeprio.controllers.crdnaming import CrdNamingController
from tests.conftest import ManualClock
from tests.unit.apiserver.http_helpers import make_client

CRD_NAME = "widgets.example.com"
WIDGETS = "/apis/example.com/v1/namespaces/{ns}/widgets"
CRD_URL = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}"

CRD_DOCUMENT: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "listKind": "WidgetList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer", "maximum": 10},
                                    "color": {"type": "string"},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "selector": {"type": "string"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str, ns: str, **extra: Any) -> dict[str, Any]:
    """A Widget body."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns, **extra.pop("metadata", {})},
        **extra,
    }


class CrdStack:
    """The API, its HTTP client and the two apiextensions controllers."""

    def __init__(self, api: ApiService, clock: ManualClock) -> None:
        self.api = api
        self.clock = clock
        self.http: TestClient = make_client(api)
        self.crds: Informer[CustomResourceDefinition] = Informer(api, CustomResourceDefinition)
        self.instances = StoredCustomResources(api.store, clock=clock)
        self.naming = CrdNamingController(api, clock=clock, rng=random.Random(1), crds=self.crds)
        self.finalizer = CrdFinalizerController(
            api, clock=clock, rng=random.Random(2), crds=self.crds, instances=self.instances
        )
        self.crds.start()
        for ns in ("a", "b"):
            api.create_object(Namespace(metadata=ObjectMeta(name=ns)))

    def settle(self) -> None:
        """Run informer and controllers until nothing is due now."""
        for _ in range(50):
            worked = self.crds.pump() + self.naming.run_once() + self.finalizer.run_once()
            if not worked:
                return
        raise AssertionError("controllers did not settle")

    def create_crd(self, *, establish: bool = True) -> None:
        """Create the Widget CRD (and let the naming controller establish it)."""
        self.api.create_object(from_dict(CustomResourceDefinition, CRD_DOCUMENT))
        if establish:
            self.settle()

    def crd(self) -> CustomResourceDefinition | None:
        """The stored CRD, or None once it is gone."""
        self.crds.pump()
        return self.crds.get(CRD_NAME)

    def terminating(self) -> tuple[str | None, str | None, str | None]:
        """(status, reason, message) of the CRD's Terminating condition."""
        crd = self.crd()
        assert crd is not None
        assert crd.status is not None
        for condition in crd.status.conditions or ():
            if condition.type == "Terminating":
                return condition.status, condition.reason, condition.message
        raise AssertionError("no Terminating condition")
