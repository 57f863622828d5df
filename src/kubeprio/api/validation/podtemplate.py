"""PodTemplate validation (core/v1).

Mirrors v1.32's ``ValidatePodTemplate`` and ``ValidatePodTemplateUpdate``
(``pkg/apis/core/validation/validation.go``): the object metadata (a namespaced
DNS-subdomain name, ``validation.meta``), then ``ValidatePodTemplateSpec`` of
``template`` (labels, annotations, the pod spec as a template's: no ephemeral
containers), on create and again on every update. Unlike a workload, a PodTemplate
does not need ``restartPolicy: Always``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.errors import FieldError
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.validation.meta import KindUpdateValidator, KindValidator
from kubeprio.api.validation.podspec import validate_pod_template_spec


def validate_pod_template(pod_template: PodTemplate) -> list[FieldError]:
    """``ValidatePodTemplate`` beyond metadata."""
    return validate_pod_template_spec(pod_template.template, "template")


def validate_pod_template_update(new: PodTemplate, old: PodTemplate) -> list[FieldError]:
    """``ValidatePodTemplateUpdate`` beyond metadata: the template as on create."""
    return validate_pod_template_spec(new.template, "template")


CREATE: Final[dict[type[Any], KindValidator]] = {PodTemplate: validate_pod_template}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {PodTemplate: validate_pod_template_update}
