"""The resource table: one row per kind drives URLs, verbs, scope, names and models.

Like lightkube's ``ApiInfo``: the API server builds its routes and discovery from these
rows, the client builds URLs from them, the manifest loader picks the model class for an
``apiVersion``/``kind`` from them. Older API versions seen in real dumps (for example
``scheduling.k8s.io/v1beta1`` from a 1.12 cluster) are accepted on input and stored as
the current version. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.admissionpolicy import GROUP as ADMISSION_POLICY_GROUP
from kubeprio.api.admissionpolicy import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.apiregistration import GROUP as APIREGISTRATION_GROUP
from kubeprio.api.apiregistration import APIService
from kubeprio.api.apps import Deployment, ReplicaSet, Scale
from kubeprio.api.autoscaling import HorizontalPodAutoscaler
from kubeprio.api.batch import CronJob, Job
from kubeprio.api.certificates import CertificateSigningRequest
from kubeprio.api.componentstatus import ComponentStatus
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.coordination import Lease
from kubeprio.api.core import Binding, Event, Namespace, Node, Pod
from kubeprio.api.csi import CSIDriver, CSINode, VolumeAttachment
from kubeprio.api.daemonset import DaemonSet
from kubeprio.api.discovery import EndpointSlice
from kubeprio.api.endpoints import Endpoints
from kubeprio.api.flowcontrol import GROUP as FLOWCONTROL_GROUP
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.ingress import Ingress, IngressClass
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.meta import Status
from kubeprio.api.networkpolicy import NetworkPolicy
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.policy import Eviction, PodDisruptionBudget
from kubeprio.api.rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from kubeprio.api.replicationcontroller import ReplicationController
from kubeprio.api.resourcemetrics import GROUP as METRICS_GROUP
from kubeprio.api.resourcemetrics import VERSION as METRICS_VERSION
from kubeprio.api.resourcemetrics import NodeMetrics, PodMetrics
from kubeprio.api.resourcequota import ResourceQuota
from kubeprio.api.reviews import (
    AUTHENTICATION_GROUP,
    AUTHORIZATION_GROUP,
    LocalSubjectAccessReview,
    SelfSubjectAccessReview,
    SelfSubjectReview,
    SelfSubjectRulesReview,
    SubjectAccessReview,
    TokenReview,
)
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.secret import Secret
from kubeprio.api.service import Service
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.statefulset import StatefulSet
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.api.storageclass import StorageClass
from kubeprio.api.tenant import Tenant
from kubeprio.api.tokenrequest import TokenRequest
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)

ALL_VERBS: Final = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


@dataclass(frozen=True, slots=True)
class Subresource:
    """A subresource such as ``pods/binding``: its name, response kind and verbs."""

    name: str
    group: str
    version: str
    kind: str
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """Everything the system needs to know about one kind."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[Any]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[Subresource, ...] = ()
    legacy_versions: tuple[str, ...] = ()
    storage_version: str = ""
    """For a row of ``ALTERNATE_VERSIONS``: the version its objects are stored (and
    modelled) as; requests at this version are converted at the REST edge."""

    @property
    def schema_key(self) -> str:
        """The kind's key in the upstream schema tables: ``Kind``, or ``Kind@apiVersion``
        for a version served by conversion (``HorizontalPodAutoscaler@autoscaling/v1``,
        ``Event@events.k8s.io/v1``: the group too, as core/v1 Event is also v1)."""
        return f"{self.kind}@{self.api_version}" if self.storage_version else self.kind

    @property
    def api_version(self) -> str:
        """``v1`` for core, ``group/version`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def verbs_by_subresource(self) -> dict[str, tuple[str, ...]]:
        """``{"": verbs, "status": its verbs, ...}``: what each path of the kind serves."""
        return {"": self.verbs, **{sub.name: sub.verbs for sub in self.subresources}}

    def has_subresource(self, name: str) -> bool:
        """Whether the kind serves the subresource ``name`` (``status``, ``scale``, ...)."""
        return any(sub.name == name for sub in self.subresources)

    @property
    def group_resource(self) -> str:
        """``pods`` or ``priorityclasses.scheduling.k8s.io`` (used in messages)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        """``Pod`` or ``PriorityClass.scheduling.k8s.io`` (used in Invalid messages)."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def accepts_api_version(self, api_version: str) -> bool:
        """Whether a manifest with ``api_version`` is this kind (current or legacy version)."""
        if api_version == self.api_version:
            return True
        return any(
            api_version == (f"{self.group}/{v}" if self.group else v) for v in self.legacy_versions
        )


EPHEMERAL_CONTAINERS: Final = "ephemeralcontainers"
"""The pod subresource that adds ephemeral containers (``kubectl debug``)."""

_POD_SUBRESOURCES: Final = (
    Subresource("attach", "", "v1", "PodAttachOptions", ("create", "get")),
    Subresource("binding", "", "v1", "Binding", ("create",)),
    Subresource(EPHEMERAL_CONTAINERS, "", "v1", "Pod", ("get", "patch", "update")),
    Subresource("eviction", "policy", "v1", "Eviction", ("create",)),
    Subresource("exec", "", "v1", "PodExecOptions", ("create", "get")),
    Subresource("log", "", "v1", "Pod", ("get",)),
    Subresource("portforward", "", "v1", "PodPortForwardOptions", ("create", "get")),
    Subresource("status", "", "v1", "Pod", ("get", "patch", "update")),
)

RESOURCES: Final[tuple[ResourceInfo, ...]] = (
    ResourceInfo("", "v1", "Namespace", "namespaces", "namespace", False, Namespace, ("ns",),
                 verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
                 subresources=(Subresource("status", "", "v1", "Namespace", ("get", "patch", "update")),)),
    ResourceInfo("", "v1", "Node", "nodes", "node", False, Node, ("no",),
                 subresources=(Subresource("status", "", "v1", "Node", ("get", "patch", "update")),)),
    ResourceInfo("", "v1", "Pod", "pods", "pod", True, Pod, ("po",), ("all",),
                 subresources=_POD_SUBRESOURCES),
    ResourceInfo("", "v1", "Event", "events", "event", True, Event, ("ev",)),
    ResourceInfo("", "v1", "PodTemplate", "podtemplates", "podtemplate", True, PodTemplate),
    ResourceInfo("", "v1", "Service", "services", "service", True, Service, ("svc",), ("all",),
                 subresources=(Subresource("status", "", "v1", "Service", ("get", "patch", "update")),)),
    ResourceInfo("", "v1", "Endpoints", "endpoints", "endpoints", True, Endpoints, ("ep",)),
    ResourceInfo("", "v1", "ResourceQuota", "resourcequotas", "resourcequota", True, ResourceQuota,
                 ("quota",),
                 subresources=(Subresource("status", "", "v1", "ResourceQuota",
                                           ("get", "patch", "update")),)),
    ResourceInfo("", "v1", "LimitRange", "limitranges", "limitrange", True, LimitRange,
                 ("limits",)),
    ResourceInfo("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", False,
                 PersistentVolume, ("pv",),
                 subresources=(Subresource("status", "", "v1", "PersistentVolume",
                                           ("get", "patch", "update")),)),
    ResourceInfo("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims",
                 "persistentvolumeclaim", True, PersistentVolumeClaim, ("pvc",),
                 subresources=(Subresource("status", "", "v1", "PersistentVolumeClaim",
                                           ("get", "patch", "update")),)),
    ResourceInfo("", "v1", "ReplicationController", "replicationcontrollers",
                 "replicationcontroller", True, ReplicationController, ("rc",), ("all",),
                 subresources=(Subresource("scale", "autoscaling", "v1", "Scale",
                                           ("get", "patch", "update")),
                               Subresource("status", "", "v1", "ReplicationController",
                                           ("get", "patch", "update")))),
    ResourceInfo("", "v1", "ConfigMap", "configmaps", "configmap", True, ConfigMap, ("cm",)),
    ResourceInfo("", "v1", "Secret", "secrets", "secret", True, Secret),
    ResourceInfo("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True,
                 ServiceAccount, ("sa",),
                 subresources=(Subresource("token", AUTHENTICATION_GROUP, "v1", "TokenRequest",
                                           ("create",)),)),
    # apiregistration.k8s.io: the first group upstream's /apis lists (the aggregator's own);
    # the local APIServices are kept by apiserver.autoregister.
    ResourceInfo(APIREGISTRATION_GROUP, "v1", "APIService", "apiservices", "apiservice", False,
                 APIService, (), ("api-extensions",),
                 subresources=(Subresource("status", APIREGISTRATION_GROUP, "v1", "APIService",
                                           ("get", "patch", "update")),)),
    ResourceInfo("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "priorityclass",
                 False, PriorityClass, ("pc",), legacy_versions=("v1beta1", "v1alpha1")),
    ResourceInfo("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets",
                 "poddisruptionbudget", True, PodDisruptionBudget, ("pdb",),
                 subresources=(Subresource("status", "policy", "v1", "PodDisruptionBudget",
                                           ("get", "patch", "update")),),
                 legacy_versions=("v1beta1",)),
    ResourceInfo("apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision",
                 True, ControllerRevision, legacy_versions=("v1beta1", "v1beta2")),
    ResourceInfo("apps", "v1", "DaemonSet", "daemonsets", "daemonset", True, DaemonSet,
                 ("ds",), ("all",),
                 subresources=(Subresource("status", "apps", "v1", "DaemonSet",
                                           ("get", "patch", "update")),),
                 legacy_versions=("v1beta2",)),
    ResourceInfo("apps", "v1", "Deployment", "deployments", "deployment", True, Deployment,
                 ("deploy",), ("all",),
                 subresources=(Subresource("scale", "autoscaling", "v1", "Scale",
                                           ("get", "patch", "update")),
                               Subresource("status", "apps", "v1", "Deployment",
                                           ("get", "patch", "update"))),
                 legacy_versions=("v1beta1", "v1beta2")),
    ResourceInfo("apps", "v1", "ReplicaSet", "replicasets", "replicaset", True, ReplicaSet,
                 ("rs",), ("all",),
                 subresources=(Subresource("scale", "autoscaling", "v1", "Scale",
                                           ("get", "patch", "update")),
                               Subresource("status", "apps", "v1", "ReplicaSet",
                                           ("get", "patch", "update"))),
                 legacy_versions=("v1beta1", "v1beta2")),
    ResourceInfo("apps", "v1", "StatefulSet", "statefulsets", "statefulset", True, StatefulSet,
                 ("sts",), ("all",),
                 subresources=(Subresource("scale", "autoscaling", "v1", "Scale",
                                           ("get", "patch", "update")),
                               Subresource("status", "apps", "v1", "StatefulSet",
                                           ("get", "patch", "update"))),
                 legacy_versions=("v1beta1", "v1beta2")),
    ResourceInfo("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                 "horizontalpodautoscaler", True, HorizontalPodAutoscaler, ("hpa",), ("all",),
                 subresources=(Subresource("status", "autoscaling", "v2", "HorizontalPodAutoscaler",
                                           ("get", "patch", "update")),),
                 legacy_versions=("v2beta2",)),
    ResourceInfo("batch", "v1", "CronJob", "cronjobs", "cronjob", True, CronJob, ("cj",), ("all",),
                 subresources=(Subresource("status", "batch", "v1", "CronJob",
                                           ("get", "patch", "update")),),
                 legacy_versions=("v1beta1",)),
    ResourceInfo("batch", "v1", "Job", "jobs", "job", True, Job, (), ("all",),
                 subresources=(Subresource("status", "batch", "v1", "Job",
                                           ("get", "patch", "update")),)),
    ResourceInfo("coordination.k8s.io", "v1", "Lease", "leases", "lease", True, Lease),
    ResourceInfo("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", False,
                 StorageClass, ("sc",), legacy_versions=("v1beta1",)),
    # CSI objects (storage.k8s.io/v1): drivers, per-node driver registrations, attachments.
    ResourceInfo("storage.k8s.io", "v1", "CSIDriver", "csidrivers", "csidriver", False, CSIDriver),
    ResourceInfo("storage.k8s.io", "v1", "CSINode", "csinodes", "csinode", False, CSINode),
    ResourceInfo("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities",
                 "csistoragecapacity", True, CSIStorageCapacity),
    ResourceInfo("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments",
                 "volumeattachment", False, VolumeAttachment,
                 subresources=(Subresource("status", "storage.k8s.io", "v1", "VolumeAttachment",
                                           ("get", "patch", "update")),)),
    ResourceInfo("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", "runtimeclass", False,
                 RuntimeClass, legacy_versions=("v1beta1",)),
    ResourceInfo("networking.k8s.io", "v1", "IngressClass", "ingressclasses", "ingressclass",
                 False, IngressClass),
    ResourceInfo("networking.k8s.io", "v1", "Ingress", "ingresses", "ingress", True, Ingress,
                 ("ing",),
                 subresources=(Subresource("status", "networking.k8s.io", "v1", "Ingress",
                                           ("get", "patch", "update")),)),
    ResourceInfo("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", "networkpolicy",
                 True, NetworkPolicy, ("netpol",)),
    ResourceInfo("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice",
                 True, EndpointSlice),
    ResourceInfo("certificates.k8s.io", "v1", "CertificateSigningRequest",
                 "certificatesigningrequests", "certificatesigningrequest", False,
                 CertificateSigningRequest, ("csr",),
                 subresources=(Subresource("approval", "certificates.k8s.io", "v1",
                                           "CertificateSigningRequest", ("get", "patch", "update")),
                               Subresource("status", "certificates.k8s.io", "v1",
                                           "CertificateSigningRequest", ("get", "patch", "update"))),
                 legacy_versions=("v1beta1",)),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
                 "clusterrolebinding", False, ClusterRoleBinding),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole",
                 False, ClusterRole),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding",
                 True, RoleBinding),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "Role", "roles", "role", True, Role),
    # API Priority and Fairness (api.flowcontrol); bootstrap objects in apiserver.flowcontrolbootstrap.
    ResourceInfo(FLOWCONTROL_GROUP, "v1", "FlowSchema", "flowschemas", "flowschema", False,
                 FlowSchema,
                 subresources=(Subresource("status", FLOWCONTROL_GROUP, "v1", "FlowSchema",
                                           ("get", "patch", "update")),)),
    ResourceInfo(FLOWCONTROL_GROUP, "v1", "PriorityLevelConfiguration",
                 "prioritylevelconfigurations", "prioritylevelconfiguration", False,
                 PriorityLevelConfiguration,
                 subresources=(Subresource("status", FLOWCONTROL_GROUP, "v1",
                                           "PriorityLevelConfiguration",
                                           ("get", "patch", "update")),)),
    # admissionregistration.k8s.io/v1: ValidatingAdmissionPolicy and its Binding.
    ResourceInfo(ADMISSION_POLICY_GROUP, "v1", "ValidatingAdmissionPolicy",
                 "validatingadmissionpolicies", "validatingadmissionpolicy", False,
                 ValidatingAdmissionPolicy, (), ("api-extensions",),
                 subresources=(Subresource("status", ADMISSION_POLICY_GROUP, "v1",
                                           "ValidatingAdmissionPolicy", ("get", "patch", "update")),)),
    ResourceInfo(ADMISSION_POLICY_GROUP, "v1", "ValidatingAdmissionPolicyBinding",
                 "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", False,
                 ValidatingAdmissionPolicyBinding, (), ("api-extensions",)),
    # admissionregistration.k8s.io webhook configurations (api.webhookconfiguration).
    ResourceInfo("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
                 "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", False,
                 MutatingWebhookConfiguration),
    ResourceInfo("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
                 "validatingwebhookconfigurations", "validatingwebhookconfiguration", False,
                 ValidatingWebhookConfiguration),
    ResourceInfo("kubeprio.io", "v1alpha1", "Tenant", "tenants", "tenant", False, Tenant, ("tnt",)),
    # apiextensions.k8s.io: the CRDs; the custom resources they declare are served from
    # rows built at run time (apiserver.customresources), not from this table.
    ResourceInfo("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                 "customresourcedefinitions", "customresourcedefinition", False,
                 CustomResourceDefinition, ("crd", "crds"), ("api-extensions",),
                 subresources=(Subresource("status", "apiextensions.k8s.io", "v1",
                                           "CustomResourceDefinition", ("get", "patch", "update")),),
                 legacy_versions=("v1beta1",)),
)  # fmt: skip
"""Every stored kind, in discovery order (core first, then groups)."""

ALTERNATE_VERSIONS: Final[tuple[ResourceInfo, ...]] = (
    ResourceInfo("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
                 "horizontalpodautoscaler", True, HorizontalPodAutoscaler, ("hpa",), ("all",),
                 subresources=(Subresource("status", "autoscaling", "v1", "HorizontalPodAutoscaler",
                                           ("get", "patch", "update")),),
                 storage_version="v2"),
    ResourceInfo("events.k8s.io", "v1", "Event", "events", "event", True, Event, ("ev",),
                 storage_version="v1"),
)  # fmt: skip
"""Versions served by converting to and from a stored kind's version (``api.autoscalingv1``,
``api.eventsv1``: events.k8s.io/v1 serves the stored core/v1 Events); discovery lists them
after the stored version, which stays the preferred one."""

REVIEWS: Final[tuple[ResourceInfo, ...]] = (
    ResourceInfo(AUTHENTICATION_GROUP, "v1", "SelfSubjectReview", "selfsubjectreviews",
                 "selfsubjectreview", False, SelfSubjectReview, verbs=("create",)),
    ResourceInfo(AUTHENTICATION_GROUP, "v1", "TokenReview", "tokenreviews", "tokenreview",
                 False, TokenReview, verbs=("create",)),
    ResourceInfo(AUTHORIZATION_GROUP, "v1", "LocalSubjectAccessReview",
                 "localsubjectaccessreviews", "localsubjectaccessreview", True,
                 LocalSubjectAccessReview, verbs=("create",)),
    ResourceInfo(AUTHORIZATION_GROUP, "v1", "SelfSubjectAccessReview",
                 "selfsubjectaccessreviews", "selfsubjectaccessreview", False,
                 SelfSubjectAccessReview, verbs=("create",)),
    ResourceInfo(AUTHORIZATION_GROUP, "v1", "SelfSubjectRulesReview",
                 "selfsubjectrulesreviews", "selfsubjectrulesreview", False,
                 SelfSubjectRulesReview, verbs=("create",)),
    ResourceInfo(AUTHORIZATION_GROUP, "v1", "SubjectAccessReview", "subjectaccessreviews",
                 "subjectaccessreview", False, SubjectAccessReview, verbs=("create",)),
)  # fmt: skip
"""Create-only kinds answered at once and never stored (``apiserver.reviews``)."""

RESOURCE_METRICS: Final[tuple[ResourceInfo, ...]] = (
    ResourceInfo(METRICS_GROUP, METRICS_VERSION, "NodeMetrics", "nodes", "", False, NodeMetrics,
                 verbs=("get", "list")),
    ResourceInfo(METRICS_GROUP, METRICS_VERSION, "PodMetrics", "pods", "", True, PodMetrics,
                 verbs=("get", "list")),
)  # fmt: skip
"""Read-only kinds computed on request (``apiserver.resourcemetrics``), as metrics-server
registers them: no singular name (its storage's ``GetSingularName`` is empty), no short
names, only ``get`` and ``list``."""

LEGACY_BINDINGS: Final = ResourceInfo(
    "", "v1", "Binding", "bindings", "binding", True, Binding, verbs=("create",)
)
"""``/api/v1/namespaces/<ns>/bindings``: the pre-subresource way to bind a pod, which
upstream still serves (``LegacyBindingREST``): a POST naming the pod in the body's
``metadata.name``, otherwise ``pods/binding``."""

COMPONENT_STATUSES: Final = ResourceInfo(
    "",
    "v1",
    "ComponentStatus",
    "componentstatuses",
    "componentstatus",
    False,
    ComponentStatus,
    ("cs",),
    verbs=("get", "list"),
)
"""``/api/v1/componentstatuses``: deprecated, read-only, computed on request
(``apiserver.componentstatus``); upstream's storage serves only ``get`` and ``list``."""

SERVED: Final[tuple[ResourceInfo, ...]] = (
    RESOURCES
    + ALTERNATE_VERSIONS
    + (LEGACY_BINDINGS,)
    + (COMPONENT_STATUSES,)
    + REVIEWS
    + RESOURCE_METRICS
)
"""Every kind the API server serves (routes, discovery, authorization)."""

NON_STORED_KINDS: Final[dict[str, type[Any]]] = {
    "Binding": Binding,
    "Eviction": Eviction,
    "Scale": Scale,
    "Status": Status,
    "TokenRequest": TokenRequest,
}
"""Kinds that travel over the API but are not stored objects."""

WORKLOAD_KINDS: Final = (
    Deployment,
    ReplicaSet,
    ReplicationController,
    DaemonSet,
    StatefulSet,
    Job,
    CronJob,
)
"""The kinds that carry a pod template (``batch.workload_pod_template``): what the
priority-class admission plugins and ``kubeprio check`` treat as the pods to come."""

_BY_MODEL: Final = {info.model: info for info in RESOURCES}
_BY_KIND: Final = {info.kind: info for info in RESOURCES}
_BY_NAME: Final = {
    name: info
    for info in RESOURCES
    for name in (info.plural, info.singular, *info.short_names, info.kind.lower())
}


class UnknownKindError(LookupError):
    """No row in the table for this kind, model or name."""


def for_model(model: type[Any]) -> ResourceInfo:
    """Return the row of a model class (``Pod`` -> pods)."""
    try:
        return _BY_MODEL[model]
    except KeyError:
        raise UnknownKindError(f"no resource for model {model.__name__}") from None


def for_object(obj: object) -> ResourceInfo:
    """Return the row of a model instance."""
    return for_model(type(obj))


def for_kind(api_version: str, kind: str) -> ResourceInfo:
    """Return the row for ``apiVersion``/``kind``, accepting legacy versions."""
    info = _BY_KIND.get(kind)
    if info is None or not info.accepts_api_version(api_version):
        raise UnknownKindError(f'no kind "{kind}" is registered for version "{api_version}"')
    return info


def for_name(name: str) -> ResourceInfo:
    """Return the row for a plural, singular, short name or lower-case kind (``pc``, ``pods``)."""
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise UnknownKindError(f'the server doesn\'t have a resource type "{name}"') from None
