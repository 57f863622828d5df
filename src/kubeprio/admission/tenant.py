"""The ``TenantPriorityClass`` admission plugin: per-tenant PriorityClass allowlists.

kubeprio's own plugin (the model of seed 004, in the spirit of Capsule's
``priorityClasses`` allowlist); the ``Tenant`` kind is described in ``api.tenant``. A
Tenant owns namespaces, listed by name in ``spec.namespaces`` or selected by
``spec.namespaceSelector`` (matched against the Namespace's labels; when several
tenants own a namespace the first by name applies). For objects in those namespaces:

* **mutating, pods, CREATE** — *before* ``Priority`` (``admission.defaults`` orders the
  chain): a pod that names no class gets the tenant's ``default`` class, with the
  class's priority and preemptionPolicy when the pod leaves them unset, so the
  Priority plugin's consistency rules hold for the rewritten pod exactly as for a pod
  that named the class itself. The global default only applies when the tenant has
  no default.
* **validating, pods CREATE; Deployments, ReplicaSets, ReplicationControllers, DaemonSets, StatefulSets, Jobs and CronJobs CREATE/UPDATE** —
  *after* ``Priority`` resolved the pod (so a class that came from the tenant or global
  default is checked too): the class must be in ``allowed`` or match ``allowedRegex``
  as a whole, and the priority must not exceed ``maxValue``. For workloads the pod
  template is resolved the same way (template class, else tenant default, else global
  default), so a forbidden class is refused when the Deployment is applied, not later
  when the ReplicaSet controller's pods fail. A pod with no class at all (no tenant
  or global default) uses none and passes the allowlist.

A violation is 403 Forbidden naming the class and the allowed ones; with
``enforcement: Audit`` the object is admitted and the violation is reported as a
warning (``Warning:`` header) and a Warning Event on the object. Subresources and
DELETE are ignored. The plugin reads through ``Listers`` only and never writes.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.admission.priority import default_priority_class, request_name
from kubeprio.api import errors, kinds, selectors
from kubeprio.api.batch import workload_pod_template
from kubeprio.api.core import Event, EventSource, ObjectReference, Pod, PodSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.tenant import AUDIT, Tenant, TenantPriorityClasses
from kubeprio.api.validation import tenant as tenant_rules

PLUGIN_NAME: Final = "TenantPriorityClass"
EVENT_REASON_NOT_ALLOWED: Final = "PriorityClassNotAllowed"
EVENT_REASON_ABOVE_MAXIMUM: Final = "PriorityAboveTenantMaximum"
EVENT_COMPONENT: Final = "tenant-priorityclass-admission"


def tenant_owns(tenant: Tenant, namespace: str, labels: dict[str, str]) -> bool:
    """Whether ``tenant`` lists ``namespace`` or selects it by its labels."""
    spec = tenant.spec
    if spec is None:
        return False
    if namespace in (spec.namespaces or ()):
        return True
    if spec.namespace_selector is None:
        return False
    try:
        selector = selectors.label_selector_as_selector(spec.namespace_selector)
    except selectors.SelectorError:
        return False  # validation refuses such tenants; an old stored one selects nothing
    return selector.matches(labels)


def owning_tenant(listers: Listers, namespace: str) -> Tenant | None:
    """The tenant that owns ``namespace`` (first by name when several do), or None."""
    if not namespace:
        return None
    ns = listers.namespaces.get(namespace)
    labels = dict(ns.metadata.labels or {}) if ns is not None else {}
    for tenant in listers.tenants.list():
        if tenant_owns(tenant, namespace, labels):
            return tenant
    return None


def _allowlist(tenant: Tenant | None) -> TenantPriorityClasses | None:
    return tenant.spec.priority_classes if tenant is not None and tenant.spec else None


def describe_allowed(allowlist: TenantPriorityClasses) -> str:
    """The allowed classes as a message lists them: sorted names, then the pattern."""
    parts = sorted(set(allowlist.allowed or ()))
    if allowlist.allowed_regex is not None:
        parts.append(f'names matching "{allowlist.allowed_regex}"')
    return ", ".join(parts) if parts else "none"


def violation(
    tenant: Tenant, namespace: str, class_name: str, priority: int | None
) -> tuple[str, str] | None:
    """The (event reason, message) of a pod that breaks ``tenant``'s rules, or None."""
    allowlist = _allowlist(tenant)
    if allowlist is None:
        return None
    tenant_name = tenant.metadata.name or ""
    where = f'in namespace "{namespace}" (tenant "{tenant_name}")'
    if (
        class_name
        and tenant_rules.allowlist_active(allowlist)
        and not tenant_rules.class_allowed(allowlist, class_name)
    ):
        return (
            EVENT_REASON_NOT_ALLOWED,
            f'PriorityClass "{class_name}" is not allowed {where}; '
            f"allowed: {describe_allowed(allowlist)}",
        )
    maximum = allowlist.max_value
    if maximum is not None and priority is not None and priority > maximum:
        of_class = f' of PriorityClass "{class_name}"' if class_name else ""
        return (
            EVENT_REASON_ABOVE_MAXIMUM,
            f"priority {priority}{of_class} exceeds the maximum {maximum} allowed {where}",
        )
    return None


def _template_spec(obj: object) -> PodSpec | None:
    template = workload_pod_template(obj)
    return template.spec if template is not None and template.spec is not None else None


def resolve_template_class(
    listers: Listers, tenant: Tenant | None, spec: PodSpec
) -> tuple[str, int | None]:
    """The class and priority a pod from this template would get (priority None: unknown class)."""
    class_name = spec.priority_class_name or ""
    allowlist = _allowlist(tenant)
    if not class_name and allowlist is not None and allowlist.default:
        class_name = allowlist.default
    if not class_name:
        pc = default_priority_class(listers)
        if pc is None:
            return "", 0
        return pc.metadata.name or "", pc.value or 0
    found = listers.priority_classes.get(class_name)
    return class_name, (found.value or 0) if found is not None else None


class TenantPriorityClassPlugin:
    """Tenant defaulting (mutating) and allowlist enforcement (validating)."""

    admits_kinds = (Pod,)
    validates_kinds = (Pod, *kinds.WORKLOAD_KINDS)
    ignores_subresources = True

    def __init__(self, listers: Listers) -> None:
        self._listers = listers

    @property
    def name(self) -> str:
        """``TenantPriorityClass``."""
        return PLUGIN_NAME

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Give a new pod that names no class its tenant's default class."""
        obj = request.obj
        if (
            request.subresource
            or request.operation is not Operation.CREATE
            or not isinstance(obj, Pod)
        ):
            return obj
        spec = obj.spec or PodSpec()
        if spec.priority_class_name:
            return obj
        allowlist = _allowlist(owning_tenant(self._listers, request.namespace))
        if allowlist is None or not allowlist.default:
            return obj
        changes: dict[str, Any] = {"priority_class_name": allowlist.default}
        pc = self._listers.priority_classes.get(allowlist.default)
        if pc is not None:
            # Fill, never overwrite: a conflicting client value is Priority's to refuse.
            if spec.priority is None:
                changes["priority"] = pc.value or 0
            if spec.preemption_policy is None and pc.preemption_policy is not None:
                changes["preemption_policy"] = pc.preemption_policy
        return evolve(obj, spec=evolve(spec, **changes))

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Refuse (or, in Audit mode, report) pods and workloads outside the allowlist."""
        obj = request.obj
        if request.subresource or request.operation is Operation.DELETE:
            return
        if isinstance(obj, Pod):
            if request.operation is not Operation.CREATE:
                return
            tenant = owning_tenant(self._listers, request.namespace)
            if tenant is None:
                return
            spec = obj.spec or PodSpec()
            found = violation(
                tenant, request.namespace, spec.priority_class_name or "", spec.priority
            )
            prefix = ""
        elif isinstance(obj, kinds.WORKLOAD_KINDS):
            template = _template_spec(obj)
            tenant = owning_tenant(self._listers, request.namespace)
            if template is None or tenant is None:
                return
            class_name, priority = resolve_template_class(self._listers, tenant, template)
            found = violation(tenant, request.namespace, class_name, priority)
            prefix = "pod template: "
        else:
            return
        if found is None:
            return
        reason, detail = found
        if tenant.spec is not None and tenant.spec.enforcement == AUDIT:
            outcome.warnings.append(f"{prefix}{detail} (admitted: tenant enforcement is Audit)")
            outcome.events.append(_warning_event(request, obj, reason, f"{prefix}{detail}"))
            return
        raise errors.forbidden_error(
            request.resource.plural,
            request.resource.group,
            request_name(request),
            f"{prefix}{detail}",
        )


def _warning_event(request: AdmissionRequest, obj: Any, reason: str, message: str) -> Event:
    """A Warning Event about ``obj``; the API service stamps its times and name."""
    name = request_name(request)
    return Event(
        metadata=ObjectMeta(generate_name=f"{name}.", namespace=request.namespace),
        involved_object=ObjectReference(
            kind=request.resource.kind,
            namespace=request.namespace,
            name=name,
            uid=obj.metadata.uid,
            api_version=request.resource.api_version,
        ),
        reason=reason,
        message=message,
        type="Warning",
        source=EventSource(component=EVENT_COMPONENT),
        reporting_component=EVENT_COMPONENT,
    )
