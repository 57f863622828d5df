"""The root CA certificate publisher: the ``kube-root-ca.crt`` ConfigMap in every namespace.

Mirrors ``pkg/controller/certificates/rootcacertpublisher/publisher.go``: pods find the
cluster's CA (to verify the API server's certificate) in this ConfigMap, key ``ca.crt``,
which the kubelet projects into service account token volumes. Here the CA is the one
``kubeprio serve`` signs its serving certificate with (``serve.pki``), handed in as PEM.

* a namespace that is added, or updated while ``Active``, is queued; so is the namespace
  of a ``kube-root-ca.crt`` ConfigMap that is updated or deleted, so a user who edits or
  deletes it sees it restored at once, as on a real cluster;
* ``syncNamespace``: a missing ConfigMap is created with ``data: {ca.crt: <PEM>}`` and
  upstream's ``kubernetes.io/description`` annotation (a namespace that is gone or
  terminating is not retried, ``AlreadyExists`` is); an existing one whose ``data`` differs, or that lost the
  annotation, gets both back (its other annotations and labels stay); one that is right
  is left alone.

Event-driven, one informer lookup per sync. Serve wires it (``serve.server``);
simulations run without it. Must not import ``apiserver``, ``store``, ``admission``.
"""

from __future__ import annotations

import random
from typing import Final

from kubeprio.api import errors
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller
from kubeprio.controllers.serviceaccount import is_active

ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"
CA_KEY: Final = "ca.crt"
DESCRIPTION_ANNOTATION: Final = "kubernetes.io/description"
DESCRIPTION: Final = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)
"""The annotation upstream's publisher writes (``Description``): what users see in ``-o yaml``."""


class RootCACertPublisher(Controller):
    """``Publisher``: keeps ``kube-root-ca.crt`` in every namespace, holding the cluster CA."""

    name = "root-ca-cert-publisher"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        root_ca: bytes,
        namespaces: Informer[Namespace],
        config_maps: Informer[ConfigMap],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.data = {CA_KEY: root_ca.decode("utf-8", "surrogateescape")}
        self.namespaces = namespaces
        self.config_maps = config_maps
        namespaces.add_handler(
            FuncHandler(on_add=self._namespace_added, on_update=self._namespace_updated)
        )
        config_maps.add_handler(
            FuncHandler(
                on_update=lambda _old, cm: self._config_map_changed(cm),
                on_delete=self._config_map_changed,
            )
        )

    def _namespace_added(self, namespace: Namespace) -> None:
        self.queue.add(namespace.metadata.name or "")

    def _namespace_updated(self, _old: Namespace, namespace: Namespace) -> None:
        phase = namespace.status.phase if namespace.status is not None else None
        if phase == "Active":
            self.queue.add(namespace.metadata.name or "")

    def _config_map_changed(self, config_map: ConfigMap) -> None:
        if config_map.metadata.name == ROOT_CA_CONFIG_MAP:
            self.queue.add(config_map.metadata.namespace or "")

    def event_target(self, key: str) -> ApiObject | None:
        """The namespace."""
        return self.namespaces.get(key)

    def reconcile(self, key: str) -> None:
        """``syncNamespace``: create or restore the namespace's root CA ConfigMap."""
        current = self.config_maps.get(ROOT_CA_CONFIG_MAP, key)
        if current is None:
            desired = ConfigMap(
                metadata=ObjectMeta(
                    name=ROOT_CA_CONFIG_MAP,
                    namespace=key,
                    annotations={DESCRIPTION_ANNOTATION: DESCRIPTION},
                ),
                data=dict(self.data),
            )
            try:
                # AlreadyExists (the informer lags the store) is retried, as upstream does:
                # the next sync checks the existing ConfigMap's data.
                self.client.create(desired)
            except (errors.ForbiddenError, errors.NotFoundError):
                # Upstream does not retry a create in a namespace that is gone or terminating.
                if is_active(self.namespaces.get(key)):
                    raise
            return
        annotations = dict(current.metadata.annotations or {})
        if dict(current.data or {}) == self.data and annotations.get(DESCRIPTION_ANNOTATION):
            return
        annotations[DESCRIPTION_ANNOTATION] = DESCRIPTION
        self.client.update(
            evolve(
                current,
                data=dict(self.data),
                metadata=evolve(current.metadata, annotations=annotations),
            )
        )
