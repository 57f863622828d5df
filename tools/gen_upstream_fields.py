"""Generate ``src/kubeprio/apiserver/upstream_fields.json`` from the official Python client.

The API server needs the field names and types of upstream's Go structs twice:

* to do what upstream's strict JSON decoder does (``fieldValidation=Strict|Warn``: report
  unknown fields, drop them), in ``apiserver.fieldvalidation``;
* to publish OpenAPI v3 component schemas (``apiserver.openapi``), which ``kubectl
  explain`` walks.

The official ``kubernetes`` Python client (a dev dependency, pinned in pyproject.toml) is
generated from upstream's OpenAPI document, so its models carry every field with its JSON
name, its type and whether it is required. This script walks the types reachable from the
kinds kubeprio serves and writes a compact table of those facts (no descriptions: the
texts kubeprio serves are its own, in ``apiserver.schemadocs``)::

    {"roots": {"Pod": "V1Pod", ...},
     "types": {"V1Pod": {"schema": "io.k8s.api.core.v1.Pod", "required": [...],
                         "fields": {"apiVersion": "string", "metadata": "V1ObjectMeta"}}}}

A field type is a scalar (``string``, ``integer``, ``boolean``, ``date-time``, ``byte``
(base64 ``[]byte``),
``int-or-string``, ``quantity``, ``object`` for free-form JSON), a type name (``V1PodSpec``),
``[]T`` for a list of T or ``{}T`` for a map of T.

The client is newer than the release kubeprio reproduces, so the table is then cut down
to the fields and types Kubernetes v1.32 has, read from the ``types.go`` files of git
mirrors of k8s.io/api and k8s.io/apimachinery at tag ``v0.32.9`` (``upstream_go``); the
script prints what it cut. Run::

    .venv/bin/python tools/gen_upstream_fields.py --api DIR --apimachinery DIR

and review the diff; then run ``gen_upstream_protobuf.py``, which reads this table.
"""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import kubernetes.client as k8s
from upstream_go import GoTypes, release_arguments

ROOTS = {
    "Namespace": "V1Namespace",
    "Node": "V1Node",
    "Pod": "V1Pod",
    "Event": "CoreV1Event",
    "PriorityClass": "V1PriorityClass",
    "PodDisruptionBudget": "V1PodDisruptionBudget",
    "Deployment": "V1Deployment",
    "ReplicaSet": "V1ReplicaSet",
    "ReplicationController": "V1ReplicationController",
    "DaemonSet": "V1DaemonSet",
    "ControllerRevision": "V1ControllerRevision",
    "StatefulSet": "V1StatefulSet",
    "Job": "V1Job",
    "CronJob": "V1CronJob",
    "HorizontalPodAutoscaler": "V2HorizontalPodAutoscaler",
    # A version served by conversion (api.kinds.ALTERNATE_VERSIONS): "Kind@apiVersion".
    "HorizontalPodAutoscaler@autoscaling/v1": "V1HorizontalPodAutoscaler",
    "Event@events.k8s.io/v1": "EventsV1Event",
    "Lease": "V1Lease",
    "Service": "V1Service",
    "Endpoints": "V1Endpoints",
    "EndpointSlice": "V1EndpointSlice",
    "ResourceQuota": "V1ResourceQuota",
    "LimitRange": "V1LimitRange",
    "PersistentVolume": "V1PersistentVolume",
    "PersistentVolumeClaim": "V1PersistentVolumeClaim",
    "StorageClass": "V1StorageClass",
    "RuntimeClass": "V1RuntimeClass",
    "PodTemplate": "V1PodTemplate",
    "CSIDriver": "V1CSIDriver",
    "CSINode": "V1CSINode",
    "VolumeAttachment": "V1VolumeAttachment",
    "CSIStorageCapacity": "V1CSIStorageCapacity",
    "Ingress": "V1Ingress",
    "IngressClass": "V1IngressClass",
    "NetworkPolicy": "V1NetworkPolicy",
    "ConfigMap": "V1ConfigMap",
    "Secret": "V1Secret",
    "ServiceAccount": "V1ServiceAccount",
    "Role": "V1Role",
    "ClusterRole": "V1ClusterRole",
    "RoleBinding": "V1RoleBinding",
    "ClusterRoleBinding": "V1ClusterRoleBinding",
    "Binding": "V1Binding",
    "Eviction": "V1Eviction",
    "Scale": "V1Scale",
    "DeleteOptions": "V1DeleteOptions",
    "SelfSubjectAccessReview": "V1SelfSubjectAccessReview",
    "SelfSubjectRulesReview": "V1SelfSubjectRulesReview",
    "SelfSubjectReview": "V1SelfSubjectReview",
    "SubjectAccessReview": "V1SubjectAccessReview",
    "LocalSubjectAccessReview": "V1LocalSubjectAccessReview",
    "TokenRequest": "AuthenticationV1TokenRequest",
    # Computed on request (apiserver.componentstatus).
    "ComponentStatus": "V1ComponentStatus",
    # API Priority and Fairness.
    "FlowSchema": "V1FlowSchema",
    "PriorityLevelConfiguration": "V1PriorityLevelConfiguration",
    # certificates.k8s.io
    "CertificateSigningRequest": "V1CertificateSigningRequest",
    # admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy kinds.
    "ValidatingAdmissionPolicy": "V1ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding": "V1ValidatingAdmissionPolicyBinding",
    # admissionregistration.k8s.io/v1 webhook configurations.
    "MutatingWebhookConfiguration": "V1MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration": "V1ValidatingWebhookConfiguration",
}
SCALARS = {
    "str": "string",
    "int": "integer",
    "bool": "boolean",
    "datetime": "date-time",
    "bytes": "byte",
}

# resource.Quantity fields: the client types them as plain strings.
QUANTITIES = {
    ("V1ContainerStatus", "allocatedResources"),
    ("V1EmptyDirVolumeSource", "sizeLimit"),
    ("V1LimitRangeItem", "default"),
    ("V1LimitRangeItem", "defaultRequest"),
    ("V1LimitRangeItem", "max"),
    ("V1LimitRangeItem", "maxLimitRequestRatio"),
    ("V1LimitRangeItem", "min"),
    ("V1NodeStatus", "allocatable"),
    ("V1NodeStatus", "capacity"),
    ("V1Overhead", "podFixed"),
    ("V1PodSpec", "overhead"),
    ("V1PodStatus", "allocatedResources"),
    ("V1ResourceFieldSelector", "divisor"),
    ("V1ResourceRequirements", "limits"),
    ("V1ResourceRequirements", "requests"),
    ("V1VolumeResourceRequirements", "limits"),
    ("V1VolumeResourceRequirements", "requests"),
    ("V2MetricTarget", "averageValue"),
    ("V2MetricTarget", "value"),
    ("V2MetricValueStatus", "averageValue"),
    ("V2MetricValueStatus", "value"),
}

# Go packages of upstream's schema names (the explain type is the last dotted part).
META_TYPES = {
    "Condition",
    "DeleteOptions",
    "FieldSelectorRequirement",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "Preconditions",
}
PACKAGES = (
    ("RollingUpdateDeployment", "apps.v1"),
    ("RollingUpdateDaemonSet", "apps.v1"),
    ("DaemonSet", "apps.v1"),
    ("ControllerRevision", "apps.v1"),
    ("StatefulSet", "apps.v1"),
    ("RollingUpdateStatefulSet", "apps.v1"),
    ("Deployment", "apps.v1"),
    ("ReplicaSet", "apps.v1"),
    ("Job", "batch.v1"),
    ("CronJob", "batch.v1"),
    ("PodFailurePolicy", "batch.v1"),
    ("SuccessPolicy", "batch.v1"),
    ("UncountedTerminatedPods", "batch.v1"),
    ("PodDisruptionBudget", "policy.v1"),
    ("Eviction", "policy.v1"),
    ("PriorityClass", "scheduling.v1"),
    ("Lease", "coordination.v1"),
    ("EndpointSlice", "discovery.v1"),
    ("EndpointConditions", "discovery.v1"),
    ("EndpointHints", "discovery.v1"),
    ("ForZone", "discovery.v1"),
    ("ForNode", "discovery.v1"),
    # Before Scale: core's ScaleIO volume sources are not autoscaling's Scale.
    ("ScaleIO", "core.v1"),
    ("Scale", "autoscaling.v1"),
    ("HorizontalPodAutoscaler", "autoscaling.v1"),
    ("CrossVersionObjectReference", "autoscaling.v1"),
    ("SelfSubjectAccessReview", "authorization.v1"),
    ("SelfSubjectRulesReview", "authorization.v1"),
    ("SubjectAccessReview", "authorization.v1"),
    ("LocalSubjectAccessReview", "authorization.v1"),
    ("SubjectRulesReviewStatus", "authorization.v1"),
    ("ResourceAttributes", "authorization.v1"),
    ("NonResourceAttributes", "authorization.v1"),
    ("ResourceRule", "authorization.v1"),
    ("NonResourceRule", "authorization.v1"),
    ("FieldSelectorAttributes", "authorization.v1"),
    ("LabelSelectorAttributes", "authorization.v1"),
    ("SelfSubjectReview", "authentication.v1"),
    ("UserInfo", "authentication.v1"),
    ("TokenRequest", "authentication.v1"),
    ("BoundObjectReference", "authentication.v1"),
    ("StorageClass", "storage.v1"),
    ("RuntimeClass", "node.v1"),
    ("Overhead", "node.v1"),
    ("Scheduling", "node.v1"),
    # CSI objects (the storage group's TokenRequest is told apart by its client prefix).
    ("CSIDriver", "storage.v1"),
    ("CSINode", "storage.v1"),
    ("VolumeAttachment", "storage.v1"),
    ("CSIStorageCapacity", "storage.v1"),
    ("VolumeNodeResources", "storage.v1"),
    ("VolumeError", "storage.v1"),
    # Ingress, IngressClass and their parts; NetworkPolicy and its peers and ports.
    ("Ingress", "networking.v1"),
    ("HTTPIngress", "networking.v1"),
    ("ServiceBackendPort", "networking.v1"),
    ("NetworkPolicy", "networking.v1"),
    ("IPBlock", "networking.v1"),
    # API Priority and Fairness; before RBAC's PolicyRule, a prefix of PolicyRulesWithSubjects.
    ("FlowSchema", "flowcontrol.v1"),
    ("FlowDistinguisherMethod", "flowcontrol.v1"),
    ("PriorityLevelConfiguration", "flowcontrol.v1"),
    ("PolicyRulesWithSubjects", "flowcontrol.v1"),
    ("UserSubject", "flowcontrol.v1"),
    ("GroupSubject", "flowcontrol.v1"),
    ("ServiceAccountSubject", "flowcontrol.v1"),
    ("ResourcePolicyRule", "flowcontrol.v1"),
    ("NonResourcePolicyRule", "flowcontrol.v1"),
    ("LimitedPriorityLevelConfiguration", "flowcontrol.v1"),
    ("ExemptPriorityLevelConfiguration", "flowcontrol.v1"),
    ("LimitResponse", "flowcontrol.v1"),
    ("QueuingConfiguration", "flowcontrol.v1"),
    # ValidatingAdmissionPolicy, its Binding and their parts.
    ("ValidatingAdmissionPolicy", "admissionregistration.v1"),
    ("MatchResources", "admissionregistration.v1"),
    ("NamedRuleWithOperations", "admissionregistration.v1"),
    ("ParamKind", "admissionregistration.v1"),
    ("ParamRef", "admissionregistration.v1"),
    ("Validation", "admissionregistration.v1"),
    ("Variable", "admissionregistration.v1"),
    ("AuditAnnotation", "admissionregistration.v1"),
    ("MatchCondition", "admissionregistration.v1"),
    ("TypeChecking", "admissionregistration.v1"),
    ("ExpressionWarning", "admissionregistration.v1"),
    # After SubjectAccessReview* and SubjectRulesReviewStatus: RBAC's Subject.
    ("Subject", "rbac.v1"),
    ("ClusterRole", "rbac.v1"),
    ("Role", "rbac.v1"),
    ("PolicyRule", "rbac.v1"),
    ("AggregationRule", "rbac.v1"),
    # certificates.k8s.io: the request, its spec, status and conditions.
    ("CertificateSigningRequest", "certificates.v1"),
    # Webhook configurations and their parts (the client-config types carry the group
    # prefix: AdmissionregistrationV1WebhookClientConfig).
    ("MutatingWebhook", "admissionregistration.v1"),
    ("ValidatingWebhook", "admissionregistration.v1"),
    ("RuleWithOperations", "admissionregistration.v1"),
)
OUT = Path(__file__).resolve().parent.parent / "src/kubeprio/apiserver/upstream_fields.json"


def schema_name(client_name: str) -> str:
    """``V1PodSpec`` -> ``io.k8s.api.core.v1.PodSpec`` (upstream's definition name)."""
    match = re.fullmatch(
        r"(Core|Discovery|Authentication|Rbac|Events|Storage|Admissionregistration|Flowcontrol)?"
        r"(V\d+(?:alpha\d+|beta\d+)?)(\w+)",
        client_name,
    )
    assert match, client_name
    version, name = match.group(2).lower(), match.group(3)
    if match.group(1) == "Events":
        return f"io.k8s.api.events.{version}.{name}"
    if match.group(1) == "Flowcontrol":
        # FlowcontrolV1Subject: flowcontrol's Subject, not RBAC's.
        return f"io.k8s.api.flowcontrol.{version}.{name}"
    # The client prefixes the two EndpointPorts with their group; discovery's Endpoint is
    # named exactly (a prefix would also match core's Endpoints and EndpointSubset).
    if match.group(1) == "Discovery" or name == "Endpoint":
        return f"io.k8s.api.discovery.{version}.{name}"
    if match.group(1) == "Storage":
        return f"io.k8s.api.storage.{version}.{name}"
    if match.group(1) == "Admissionregistration":
        return f"io.k8s.api.admissionregistration.{version}.{name}"
    if name in META_TYPES:
        return f"io.k8s.apimachinery.pkg.apis.meta.{version}.{name}"
    if version == "v2":
        return f"io.k8s.api.autoscaling.v2.{name}"
    if version != "v1":
        return f"io.k8s.api.scheduling.{version}.{name}"
    package = next((pkg for prefix, pkg in PACKAGES if name.startswith(prefix)), "core.v1")
    return f"io.k8s.api.{package}.{name}"


def model_field(model: Any, json_name: str) -> Any:
    """The pydantic field behind a JSON name (Python names differ: ``exec`` is ``var_exec``)."""
    for name, info in model.model_fields.items():
        if (info.serialization_alias or name) == json_name:
            return info
    raise KeyError(f"{model.__name__}.{json_name}")


def type_ref(model: Any, attr: str, openapi_type: str, pending: list[str]) -> str:
    """Translate a client type string (``List[V1Container]``) into the table's notation."""
    match = re.fullmatch(r"List\[(.+)\]", openapi_type)
    if match:
        return "[]" + type_ref(model, attr, match.group(1), pending)
    match = re.fullmatch(r"Dict\[str, (.+)\]", openapi_type)
    if match:
        return "{}" + type_ref(model, attr, match.group(1), pending)
    if (model.__name__, model.attribute_map[attr]) in QUANTITIES:
        return "quantity"
    if openapi_type == "object":
        # IntOrString is the only union the client models; anything else is free-form
        # (a required RawExtension such as ControllerRevision.data is a plain Dict).
        annotation = model_field(model, model.attribute_map[attr]).annotation
        union = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Union else ()
        # An optional field is Union[X, None]: only a union of two or more real types is
        # IntOrString (an optional free-form object is still free-form).
        members = [member for member in union if member is not type(None)]
        return "int-or-string" if len(members) > 1 else "object"
    if openapi_type in SCALARS:
        return SCALARS[openapi_type]
    pending.append(openapi_type)
    return openapi_type


def field_type_names(field_type: str) -> str:
    """The type a field refers to, without its ``[]``/``{}`` wrappers."""
    while field_type.startswith(("[]", "{}")):
        field_type = field_type[2:]
    return field_type


def keep_release_fields(types: dict[str, dict[str, Any]], release: GoTypes) -> None:
    """Cut ``types`` down to what the release has: fields its Go structs lack go, then the
    types nothing reaches any more."""
    for name, entry in types.items():
        known = release.json_fields(entry["schema"])
        if known is None:
            continue  # a type the release lacks: unreachable once its fields are cut
        dropped = sorted(set(entry["fields"]) - known)
        if dropped:
            print(f"  {name}: not in {release.ref}: {', '.join(dropped)}")
        entry["fields"] = {k: v for k, v in entry["fields"].items() if k in known}
        entry["required"] = [k for k in entry["required"] if k in known]
    reachable: set[str] = set()
    stack = list(ROOTS.values())
    while stack:
        name = stack.pop()
        if name in reachable:
            continue
        reachable.add(name)
        # A reachable type the release lacks means a wrong schema name, not a new type.
        assert release.json_fields(types[name]["schema"]) is not None, types[name]["schema"]
        stack.extend(
            ref for ref in map(field_type_names, types[name]["fields"].values()) if ref in types
        )
    for name in sorted(set(types) - reachable):
        print(f"  {name}: not in {release.ref}")
        del types[name]


def main() -> None:
    args = release_arguments(__doc__.splitlines()[0])
    types: dict[str, dict[str, Any]] = {}
    pending = list(ROOTS.values())
    while pending:
        name = pending.pop()
        if name in types:
            continue
        model = getattr(k8s, name)
        fields: dict[str, str] = {}
        required: list[str] = []
        for attr, openapi_type in sorted(model.openapi_types.items()):
            json_name = model.attribute_map[attr]
            fields[json_name] = type_ref(model, attr, openapi_type, pending)
            if model_field(model, json_name).is_required():
                required.append(json_name)
        types[name] = {
            "schema": schema_name(name),
            "required": sorted(required),
            "fields": dict(sorted(fields.items())),
        }
    keep_release_fields(types, GoTypes(args.api, args.apimachinery, args.ref))
    names = [entry["schema"] for entry in types.values()]
    assert len(names) == len(set(names)), "two client types map to one schema name"
    table = {"roots": ROOTS, "types": dict(sorted(types.items()))}
    OUT.write_text(json.dumps(table, indent=0, sort_keys=False) + "\n")
    print(f"wrote {OUT} ({len(types)} types)")


if __name__ == "__main__":
    main()
