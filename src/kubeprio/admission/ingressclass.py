"""The DefaultIngressClass admission plugin: a new Ingress without a class gets the default.

Mirrors upstream v1.32 ``plugin/pkg/admission/network/defaultingressclass``: on by
default, mutating only, acting on create only (``admission.NewHandler(admission.Create)``)
and never on subresources. A new Ingress that names no class (no
``spec.ingressClassName`` and no ``kubernetes.io/ingress.class`` annotation) gets the
name of the IngressClass annotated ``ingressclass.kubernetes.io/is-default-class:
"true"``; several such classes: the newest wins, equal times by name (``getDefaultClass``,
``api.ingress.default_class``). No default class: the Ingress stays class-less. Updates
are never defaulted.

Driven by ``admission.chain``; pure (reads IngressClasses through the listers).
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.api.ingress import INGRESS_CLASS_ANNOTATION, Ingress, IngressSpec, default_class
from kubeprio.api.model import evolve

PLUGIN_NAME: Final = "DefaultIngressClass"


class DefaultIngressClassPlugin:
    """Upstream ``DefaultIngressClass`` (``classDefaulterPlugin``): mutating only."""

    admits_kinds = (Ingress,)
    ignores_subresources = True

    name = PLUGIN_NAME

    def __init__(self, listers: Listers) -> None:
        self._classes = listers.ingress_classes

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> Any:
        """Give a new class-less Ingress the default class."""
        ingress = request.obj
        if (
            request.operation != Operation.CREATE
            or request.subresource
            or not isinstance(ingress, Ingress)
        ):
            return ingress
        spec = ingress.spec or IngressSpec()
        annotations = ingress.metadata.annotations or {}
        if spec.ingress_class_name is not None or INGRESS_CLASS_ANNOTATION in annotations:
            return ingress
        chosen = default_class(self._classes.list())
        if chosen is None:
            return ingress
        return evolve(ingress, spec=evolve(spec, ingress_class_name=chosen.metadata.name))
