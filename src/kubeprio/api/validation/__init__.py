"""Validation: every field error of an object, collected, never stopping at the first.

``validate_create`` and ``validate_update`` return a list of ``FieldError``; the API
service raises one ``InvalidError`` (422) with all of them as causes. Object metadata
rules live in ``validation.meta``; each kind's rules live in a module named after its
API group (``validation.core``, ``validation.apps``, ``validation.batch`` (CronJobs in ``validation.cronjob``), ``validation.autoscaling``,
``validation.coordination``, ``validation.policy``, ``validation.scheduling``, ...; Services
in ``validation.service``, DaemonSets and ControllerRevisions in ``validation.daemonset``,
StatefulSets in ``validation.statefulset``, ReplicationControllers in ``validation.replicationcontroller``, Endpoints and EndpointSlices in ``validation.endpoints``, ResourceQuotas in
``validation.resourcequota``, LimitRanges in ``validation.limitrange``, PersistentVolumes, claims and StorageClasses in ``validation.storage``, RuntimeClasses in ``validation.node``, PodTemplates in ``validation.podtemplate``, CSIDrivers, CSINodes and VolumeAttachments in ``validation.csi``, CSIStorageCapacities in ``validation.storagecapacity``, APIServices in ``validation.apiregistration``, Ingresses and IngressClasses in ``validation.ingress``, NetworkPolicies in ``validation.networkpolicy``, RBAC kinds in ``validation.rbac``, FlowSchemas in ``validation.flowcontrol``, PriorityLevelConfigurations in ``validation.prioritylevel``, ConfigMaps, Secrets and ServiceAccounts in
``validation.configmap``, ``validation.secret`` and ``validation.serviceaccount``; Events
written through events.k8s.io/v1 in ``validation.events``; a pod's
``ephemeralcontainers`` writes in ``validation.ephemeral``) and are
listed in the tables
below, the one place that maps a model class to its validators. The pod-spec rules
shared by pods and workload templates live in ``validation.podspec``.

Upstream runs ``ValidateObjectMeta`` on create and ``ValidateObjectMetaUpdate`` on
update; a pod update also re-runs ``ValidateObjectMeta`` (inside
``validatePodMetadataAndSpec``), and core/v1 Events skip the object-metadata rules
altogether (``legacyValidateEvent``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.core import Event, Pod
from kubeprio.api.csi import CSINode, VolumeAttachment
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.errors import FieldError
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.ingress import Ingress, IngressClass
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS, ResourceInfo
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.statefulset import StatefulSet
from kubeprio.api.tenant import Tenant

# The per-group modules import validation.meta, so they come after it.
from kubeprio.api.validation import (
    admissionpolicy,
    apiextensions,
    apiregistration,
    apps,
    autoscaling,
    batch,
    certificates,
    configmap,
    coordination,
    core,
    cronjob,
    csi,
    daemonset,
    endpoints,
    ephemeral,
    events,
    flowcontrol,
    ingress,
    limitrange,
    networkpolicy,
    node,
    podtemplate,
    policy,
    prioritylevel,
    rbac,
    replicationcontroller,
    resourcequota,
    scheduling,
    secret,
    service,
    serviceaccount,
    statefulset,
    storage,
    storagecapacity,
    tenant,
    webhookconfiguration,
)
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindUpdateWarnings,
    KindValidator,
    KindWarnings,
    validate_object_meta,
    validate_object_meta_update,
)

KindValidatorAt = Callable[[Any, ResourceInfo], list[FieldError]]
"""A create validator that needs the kind's resource row (its metadata rules)."""

CREATE_VALIDATORS: Final[dict[type[Any], KindValidator]] = {
    **apiextensions.CREATE,
    **core.CREATE,
    **apps.CREATE,
    **replicationcontroller.CREATE,
    **daemonset.CREATE,
    **statefulset.CREATE,
    **batch.CREATE,
    **cronjob.CREATE,
    **autoscaling.CREATE,
    **policy.CREATE,
    **coordination.CREATE,
    **service.CREATE,
    **endpoints.CREATE,
    **resourcequota.CREATE,
    **limitrange.CREATE,
    **configmap.CREATE,
    **secret.CREATE,
    **storage.CREATE,
    **csi.CREATE,
    **storagecapacity.CREATE,
    **apiregistration.CREATE,
    **node.CREATE,
    **podtemplate.CREATE,
    **ingress.CREATE,
    **networkpolicy.CREATE,
    **rbac.CREATE,
    **flowcontrol.CREATE,
    **prioritylevel.CREATE,
    **certificates.CREATE,
    **admissionpolicy.CREATE,
    **webhookconfiguration.CREATE,
    PriorityClass: scheduling.validate_priority_class,
    Tenant: tenant.validate_tenant,
}
"""Model class -> validation of a new object (beyond metadata)."""

UPDATE_VALIDATORS: Final[dict[type[Any], KindUpdateValidator]] = {
    **apiextensions.UPDATE,
    **core.UPDATE,
    **apps.UPDATE,
    **replicationcontroller.UPDATE,
    **daemonset.UPDATE,
    **statefulset.UPDATE,
    **batch.UPDATE,
    **cronjob.UPDATE,
    **autoscaling.UPDATE,
    **policy.UPDATE,
    **service.UPDATE,
    **endpoints.UPDATE,
    **resourcequota.UPDATE,
    **limitrange.UPDATE,
    **configmap.UPDATE,
    **secret.UPDATE,
    **storage.UPDATE,
    **csi.UPDATE,
    **storagecapacity.UPDATE,
    **apiregistration.UPDATE,
    **node.UPDATE,
    **podtemplate.UPDATE,
    **ingress.UPDATE,
    **networkpolicy.UPDATE,
    **rbac.UPDATE,
    **flowcontrol.UPDATE,
    **prioritylevel.UPDATE,
    **certificates.UPDATE,
    **admissionpolicy.UPDATE,
    **webhookconfiguration.UPDATE,
    PriorityClass: scheduling.validate_priority_class_update,
}
"""Model class -> validation of an update (beyond metadata); defaults to the create rules."""

STATUS_VALIDATORS: Final[dict[type[Any], KindUpdateValidator]] = {
    **apiextensions.STATUS,
    **core.STATUS_UPDATE,
    **apps.STATUS_UPDATE,
    **replicationcontroller.STATUS_UPDATE,
    **daemonset.STATUS_UPDATE,
    **statefulset.STATUS_UPDATE,
    **batch.STATUS_UPDATE,
    **cronjob.STATUS_UPDATE,
    **autoscaling.STATUS_UPDATE,
    **policy.STATUS_UPDATE,
    **service.STATUS_UPDATE,
    **resourcequota.STATUS_UPDATE,
    **storage.STATUS_UPDATE,
    **csi.STATUS_UPDATE,
    **apiregistration.STATUS_UPDATE,
    **ingress.STATUS_UPDATE,
    **flowcontrol.STATUS_UPDATE,
    **prioritylevel.STATUS_UPDATE,
    **certificates.STATUS_UPDATE,
    **admissionpolicy.STATUS_UPDATE,
}
"""Model class -> validation of a ``status`` subresource update (beyond metadata)."""

APPROVAL_VALIDATORS: Final[dict[type[Any], KindUpdateValidator]] = {
    **certificates.APPROVAL_UPDATE,
}
"""Model class -> validation of an ``approval`` subresource update (CertificateSigningRequests)."""

WARNINGS: Final[dict[type[Any], KindWarnings]] = {
    **core.WARNINGS,
    **apps.WARNINGS,
    **replicationcontroller.WARNINGS,
    **daemonset.WARNINGS,
    **statefulset.WARNINGS,
    **batch.WARNINGS,
    **cronjob.WARNINGS,
    **secret.WARNINGS,
    **serviceaccount.WARNINGS,
}
"""Model class -> the warnings a write returns (upstream ``WarningsOnCreate/Update``)."""

UPDATE_WARNINGS: Final[dict[type[Any], KindUpdateWarnings]] = {
    **serviceaccount.UPDATE_WARNINGS,
    **cronjob.UPDATE_WARNINGS,
}
"""Model class -> the warnings of an update, for kinds whose warnings depend on the old
object (upstream ``WarningsOnUpdate``); the others warn as on create."""

_NO_OBJECT_META: Final = frozenset({Event})
"""Kinds whose (core/v1) validation does not run the object-metadata rules."""

_REVALIDATE_META_ON_UPDATE: Final = frozenset(
    {Pod, DaemonSet, StatefulSet, RuntimeClass, Ingress, IngressClass, CSINode, VolumeAttachment}
    | {FlowSchema, PriorityLevelConfiguration}
    # ValidatingAdmissionPolicy kinds: their update validation calls ValidateObjectMeta.
    | {ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding}
    | webhookconfiguration.REVALIDATE_META_ON_UPDATE
    | apiregistration.REVALIDATE_META_ON_UPDATE
)
"""Kinds whose update validation re-runs the create-time metadata rules (a DaemonSet or
StatefulSet update calls ``ValidateDaemonSet``/``ValidateStatefulSet``, a RuntimeClass
update ``ValidateRuntimeClass``, an Ingress or an IngressClass update
``validateIngress``/``ValidateIngressClass``, a FlowSchema or PriorityLevelConfiguration
update ``ValidateFlowSchema``/``ValidatePriorityLevelConfiguration``, which check the
object metadata as on create)."""


STRICT_VERSIONS: Final[dict[tuple[str, type[Any]], tuple[KindValidatorAt, KindUpdateValidator]]] = {
    ("events.k8s.io", Event): (events.validate_event_create, events.validate_event_update),
}
"""(request group, model class) -> the create and update rules of a kind whose rules
depend on the API a write came through (upstream's event strategy reads the request's
group version): these replace the kind's usual rules, metadata included."""


def _strict(
    obj: object, served: ResourceInfo | None
) -> tuple[KindValidatorAt, KindUpdateValidator] | None:
    if served is None or not served.storage_version:
        return None
    return STRICT_VERSIONS.get((served.group, type(obj)))


def validate_create(
    obj: object, info: ResourceInfo, *, served: ResourceInfo | None = None
) -> list[FieldError]:
    """All field errors of a new object; ``served`` is the resource row the request came
    through, when it is a version served by conversion."""
    strict = _strict(obj, served)
    if strict is not None:
        return strict[0](obj, info)
    found: list[FieldError] = []
    if type(obj) not in _NO_OBJECT_META:
        found.extend(validate_object_meta(obj.metadata, info))  # type: ignore[attr-defined]
    validator = CREATE_VALIDATORS.get(type(obj))
    if validator is not None:
        found.extend(validator(obj))
    return found


def validate_update(
    new: object,
    old: object,
    info: ResourceInfo,
    *,
    subresource: str = "",
    served: ResourceInfo | None = None,
) -> list[FieldError]:
    """All field errors of an update (object rules plus immutability rules).

    ``subresource="status"`` runs the kind's status-update rules instead of its spec rules;
    ``"ephemeralcontainers"`` a pod's ``ValidatePodEphemeralContainersUpdate``; ``served``
    is as for ``validate_create``.
    """
    strict = _strict(new, served)
    if strict is not None:
        return strict[1](new, old)
    kind = type(new)
    found: list[FieldError] = []
    if kind not in _NO_OBJECT_META:
        found.extend(validate_object_meta_update(new.metadata, old.metadata))  # type: ignore[attr-defined]
        if kind in _REVALIDATE_META_ON_UPDATE and subresource != "status":
            found.extend(validate_object_meta(new.metadata, info))  # type: ignore[attr-defined]
    if subresource == "status":
        status_validator = STATUS_VALIDATORS.get(kind)
        if status_validator is not None:
            found.extend(status_validator(new, old))
        return found
    if subresource == "approval":
        approval_validator = APPROVAL_VALIDATORS.get(kind)
        if approval_validator is not None:
            found.extend(approval_validator(new, old))
        return found
    if subresource == EPHEMERAL_CONTAINERS:
        ephemeral_validator = ephemeral.UPDATE.get(kind)
        if ephemeral_validator is not None:
            found.extend(ephemeral_validator(new, old))
        return found
    update_validator = UPDATE_VALIDATORS.get(kind)
    if update_validator is not None:
        found.extend(update_validator(new, old))
    else:
        validator = CREATE_VALIDATORS.get(kind)
        if validator is not None:
            found.extend(validator(new))
    return found


def warnings(obj: object, old: object | None = None) -> list[str]:
    """The warnings a create (or, with ``old``, an update) of ``obj`` returns
    (``Warning:`` headers)."""
    if old is not None:
        update_producer = UPDATE_WARNINGS.get(type(obj))
        if update_producer is not None:
            return update_producer(obj, old)
    producer = WARNINGS.get(type(obj))
    return [] if producer is None else producer(obj)
