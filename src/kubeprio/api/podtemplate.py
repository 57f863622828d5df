"""core/v1 PodTemplate: a stored, namespaced pod template other objects can copy.

Mirrors ``k8s.io/api/core/v1/types.go`` (``PodTemplate``: ``metadata`` and ``template``,
a ``PodTemplateSpec``, no spec or status). Nothing in kubeprio creates pods from it;
it is served so that manifests and dumps that carry PodTemplates load, and ``kubectl
get podtemplates`` works. Upstream's strategy counts template changes in
``metadata.generation`` (``apiserver.strategy``). Defaults: the template's pod spec
gets ``SetDefaults_PodSpec`` (``api.defaults``); validation: ``ValidatePodTemplate``
(``api.validation.podtemplate``). Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodTemplate:
    """A v1 PodTemplate."""

    api_version: str | None = "v1"
    kind: str | None = "PodTemplate"
    metadata: ObjectMeta = ObjectMeta()
    template: PodTemplateSpec | None = None
    extra: JsonDict = extra_field()
