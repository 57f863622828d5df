"""The custom kinds an HPA can target: their ``scale`` subresource, served in process.

What it is: ``CustomResourceScales`` satisfies ``controllers.scaletargets``'s
``CustomScaleTargets`` over the served custom resources (``apiserver.customresources``):
a kind is found by group and kind among the served versions (upstream's REST mapper
over discovery), and its Scale is read and written through the same REST as
``GET``/``PUT .../<plural>/<name>/scale`` (``apiserver.crrest``, ``apiserver.crscale``),
so the HPA controller meets the errors a scale client would (404 for a version without
the subresource, 409 on a stale Scale, the schema's 422).

Who drives it: the HPA controller, wired by ``serve.server``.
"""

from __future__ import annotations

import orjson

from kubeprio.api.apps import Scale
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.apiserver.crrest import CustomResourceRest
from kubeprio.apiserver.customresources import CustomResourceRegistry, CustomVersion
from kubeprio.apiserver.restmessages import Reply, RestRequest
from kubeprio.apiserver.routes import Target


class CustomResourceScales:
    """Looks custom kinds up among the served ones."""

    def __init__(self, registry: CustomResourceRegistry, rest: CustomResourceRest) -> None:
        self.registry = registry
        self.rest = rest

    def lookup(self, group: str, kind: str) -> CustomScale | None:
        """The scale of the first served version of ``kind`` in ``group``."""
        for info in self.registry.served():
            if info.group == group and info.kind == kind:
                versions = self.registry.versions_of(group, info.plural)
                if versions:
                    return CustomScale(self.rest, versions[0])
        return None


class CustomScale:
    """One custom kind's ``scale`` subresource."""

    def __init__(self, rest: CustomResourceRest, found: CustomVersion) -> None:
        self.rest = rest
        self.found = found

    def _call(self, method: str, name: str, namespace: str | None, body: bytes = b"") -> Scale:
        target = Target(self.found.info, namespace, name, "scale")
        request = RestRequest(
            method=method, target=target, query={}, content_type="application/json", body=body
        )
        reply = self.rest.handle(request, self.found)
        assert isinstance(reply, Reply)
        assert isinstance(reply.body, dict)
        scale = from_dict(Scale, reply.body)
        assert isinstance(scale, Scale)
        return scale

    def get_scale(self, name: str, namespace: str | None) -> Scale:
        """GET ``<plural>/<name>/scale``."""
        return self._call("GET", name, namespace)

    def update_scale(self, scale: Scale) -> Scale:
        """PUT ``<plural>/<name>/scale``."""
        meta = scale.metadata
        body = orjson.dumps(to_dict(scale))
        # The HPA's write waits on admission webhooks off the loop, as its built-in
        # targets' (``apiserver.controllerwebhooks``): the PUT is retried once answered.
        return self.rest.service.deferrable(
            f"scale\0{self.found.info.group}\0{self.found.info.plural}\0{meta.namespace}\0{meta.name}",
            lambda: self._call("PUT", meta.name or "", meta.namespace, body),
        )
