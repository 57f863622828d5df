"""What ``kubectl explain`` says about a kind or field: kubeprio's own descriptions.

What it is: the ``description`` and ``enum`` texts of the OpenAPI component schemas
(``apiserver.openapi``). The schema shapes are upstream's (generated from the official
client); the texts are written here, for the kinds and fields this project is about —
priority, preemption, disruption budgets, tenants — and say what kubeprio does, which is
what upstream does unless ``docs/`` says otherwise. A field without an entry is shown by
kubectl as ``<no description>``.

Keys are upstream's short type names (the last part of the schema name: ``PodSpec``), and
``(type, field)`` pairs. ``ROOT_FIELDS`` describe the fields every kind has.

Who drives it: ``apiserver.openapi``. Rules: data only; the enums are the validators' own
constants.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.batch import CONCURRENCY_POLICIES
from kubeprio.api.daemonset import UPDATE_STRATEGIES
from kubeprio.api.validation.podspec import RESTART_POLICIES
from kubeprio.api.validation.policy import UNHEALTHY_POD_EVICTION_POLICIES
from kubeprio.api.validation.scheduling import PREEMPTION_POLICIES
from kubeprio.api.validation.tenant import ENFORCEMENT_MODES

TYPES: Final[dict[str, str]] = {
    "Pod": (
        "A Pod is one or more containers scheduled together onto a node. Pending pods are "
        "scheduled highest priority first; a pod that fits nowhere may preempt pods of "
        "lower priority (see spec.priority and spec.preemptionPolicy)."
    ),
    "PodSpec": "The desired state of a Pod: its containers, where it may run, and its priority.",
    "PodStatus": (
        "The most recently observed state of a Pod, written by the scheduler and the kubelet."
    ),
    "PriorityClass": (
        "A PriorityClass maps a class name to an integer priority. A pod names its class in "
        "spec.priorityClassName; Priority admission then sets the pod's spec.priority to the "
        "class value and spec.preemptionPolicy to the class policy. A pod without a class "
        "gets the global default class, or priority 0 if there is none. Class values above "
        "1000000000 are reserved for the system classes."
    ),
    "PodDisruptionBudget": (
        "A PodDisruptionBudget limits how many of the pods it selects may be down at once "
        "because of voluntary disruptions. Evictions (pods/eviction, kubectl drain) are "
        "refused with 429 when they would break it. The scheduler prefers preemption "
        "victims that keep every budget, but may break one when no other choice makes room."
    ),
    "PodDisruptionBudgetSpec": "What a PodDisruptionBudget protects and how much disruption it allows.",
    "PodDisruptionBudgetStatus": "The disruption controller's last count of the selected pods.",
    "Node": "A Node is a machine that runs pods; kubeprio simulates one kubelet per Node.",
    "Namespace": "A Namespace groups names; a Tenant may own namespaces and limit their classes.",
    "Event": "An Event reports something that happened to an object, such as Scheduled or Preempted.",
    "Deployment": "A Deployment manages ReplicaSets to keep a number of pod replicas running.",
    "ReplicaSet": (
        "A ReplicaSet keeps a number of pods from its template running; a preempted pod is "
        "replaced by a new one, which goes back through the scheduling queue."
    ),
    "ReplicationController": (
        "A ReplicationController keeps a number of pods from its template running, like a "
        "ReplicaSet with a plain label map for its selector; a preempted pod is replaced by "
        "a new one, which goes back through the scheduling queue."
    ),
    "SubjectAccessReview": (
        "Asks whether a user (or a set of groups) may make a request, as the API server's "
        "authorizers would decide it; the answer comes back in status and nothing is stored."
    ),
    "LocalSubjectAccessReview": (
        "A SubjectAccessReview asked inside one namespace: its resource attributes must name "
        "that namespace; the answer comes back in status and nothing is stored."
    ),
    "Job": (
        "A Job runs pods until a number of them succeed. Preempted pods are retried; whether "
        "they count against backoffLimit depends on podFailurePolicy."
    ),
    "CronJob": (
        "A CronJob creates a Job from its jobTemplate at each time of its cron schedule. The "
        "Jobs' pods take the template's priorityClassName, so a run preempts, or is "
        "preempted by, other pods like any pod of its class."
    ),
    "HorizontalPodAutoscaler": (
        "A HorizontalPodAutoscaler sets the replicas of a Deployment, ReplicaSet, "
        "ReplicationController or StatefulSet (through its scale subresource) from the pods' resource usage every "
        "15 seconds. The pods it adds are scheduled like any other and may preempt pods "
        "of lower priority."
    ),
    "HorizontalPodAutoscalerSpec": (
        "The target to scale, the replica bounds, the metrics to follow and how fast to scale."
    ),
    "HorizontalPodAutoscalerStatus": (
        "What the autoscaler last saw and decided, written by its controller."
    ),
    "CronJobSpec": "The schedule, the Job template and how runs may overlap.",
    "CronJobStatus": "The Jobs running now and when the CronJob last scheduled and succeeded.",
    "JobTemplateSpec": "The metadata and spec of each Job the CronJob creates.",
    "Tenant": (
        "A kubeprio Tenant owns namespaces and limits which PriorityClasses pods in them may "
        "use. Pods and workloads asking for a class outside the allowlist are refused at "
        "admission (or, with enforcement Audit, admitted with a warning)."
    ),
    "Lease": (
        "A Lease is a renewable claim held by one holder. Every kubelet keeps a Lease named "
        "after its Node in the kube-node-lease namespace and renews it every 10 seconds: "
        "its node heartbeat, shown by kubectl describe node."
    ),
    "LeaseSpec": "Who holds a Lease, for how long, and when it was acquired and renewed.",
    "Service": (
        "A Service gives the pods its selector matches one stable virtual IP (its cluster IP, "
        "from the service range) and, for NodePort and LoadBalancer Services, a port on every "
        "node. The endpoints controller lists the Ready pods behind it in its Endpoints and "
        "EndpointSlice."
    ),
    "ServiceSpec": "The Service's type, ports, pod selector and allocated addresses.",
    "ServicePort": "A port of a Service, the pods' port it forwards to, and its node port.",
    "Endpoints": (
        "The addresses of the pods behind a Service (same name as the Service), kept by the "
        "endpoints controller: Ready pods in addresses, the others in notReadyAddresses."
    ),
    "EndpointSlice": (
        "A slice of a Service's endpoints (label kubernetes.io/service-name), kept by the "
        "endpointslice controller; kubectl describe service reads it."
    ),
    "ResourceQuota": (
        "A ResourceQuota caps what the objects of its namespace may consume (spec.hard), "
        "optionally only for pods of some scopes, such as PriorityClass In [high]. The "
        "ResourceQuota admission plugin charges each new pod against status.used and refuses "
        "one that would exceed status.hard; the quota controller recounts status.used."
    ),
    "LimitRange": (
        "A LimitRange bounds the resources of each new pod or container in its namespace "
        "(min, max, maxLimitRequestRatio) and gives containers that set none its default "
        "limits and requests (LimitRanger admission, which annotates the pod "
        "kubernetes.io/limit-ranger). The defaults decide where the pod fits and who it "
        "preempts, and count against ResourceQuotas."
    ),
    "PersistentVolume": (
        "A PersistentVolume is a piece of storage in the cluster (spec.capacity, "
        "spec.accessModes, spec.storageClassName), made by an administrator or provisioned "
        "for a claim. A bound volume names its claim in spec.claimRef; spec.nodeAffinity "
        "limits the nodes that can reach it, and so where the claim's pods are scheduled."
    ),
    "PersistentVolumeClaim": (
        "A PersistentVolumeClaim asks for storage of a class, size and access mode. A pod "
        "that names a claim in its volumes is scheduled only where the claim's volume can "
        "be used; a claim in use by a pod is not removed until the pod is gone "
        "(kubernetes.io/pvc-protection)."
    ),
    "StorageClass": (
        "A StorageClass names a provisioner and how its volumes are made and bound: "
        "reclaimPolicy, volumeBindingMode (Immediate, or WaitForFirstConsumer to bind when "
        "the first pod is scheduled), allowedTopologies. The class annotated "
        "storageclass.kubernetes.io/is-default-class=true is given to claims that name none."
    ),
    # ComponentStatus and API Priority and Fairness.
    "ComponentStatus": (
        "The health of one control-plane component (deprecated since v1.19, still served): "
        "kubeprio serve reports its scheduler and controller loops and its store (etcd-0), "
        "probed when asked."
    ),
    "FlowSchema": (
        "A FlowSchema sorts API requests: the matching schema with the lowest "
        "matchingPrecedence assigns a request to its priority level. kubeprio serve keeps "
        "the bootstrap schemas, marks schemas whose level is missing Dangling and names the "
        "matched schema in the X-Kubernetes-PF-FlowSchema-UID response header."
    ),
    "PriorityLevelConfiguration": (
        "A priority level for API requests: Exempt, or Limited to a share of the server's "
        "concurrency with queuing or rejection beyond it. kubeprio serves and validates the "
        "levels and names the matched one in the X-Kubernetes-PF-PriorityLevel-UID header; "
        "it does not limit or queue requests."
    ),
    # CSI objects (storage.k8s.io/v1).
    "CSIDriver": (
        "A CSIDriver describes a CSI volume driver installed in the cluster, named after the "
        "driver: whether its volumes need attaching, whether it wants pod information on "
        "mount, its fsGroup policy and volume lifecycle modes. Every unset flag is defaulted."
    ),
    "CSINode": (
        "A CSINode lists the CSI drivers registered on the node of the same name. A driver's "
        "allocatable.count is how many of its volumes the node may have attached: the "
        "NodeVolumeLimits scheduler plugin keeps pods off nodes that would exceed it."
    ),
    "VolumeAttachment": (
        "A VolumeAttachment asks the attacher (a CSI driver) to attach a volume to a node; its "
        "spec is immutable and its status, written through the status subresource, says "
        "whether the volume is attached. kubeprio serves it; nothing attaches volumes."
    ),
    "CSIStorageCapacity": (
        "A CSIStorageCapacity records one CSI GetCapacity answer: the capacity a StorageClass "
        "has on the nodes nodeTopology selects. kubeprio stores and serves it; its "
        "VolumeBinding scheduler plugin does not consult it."
    ),
    "APIService": (
        "An APIService says which server answers one API group/version, named "
        "<version>.<group>. kubeprio keeps a local APIService (no spec.service, always "
        "Available) for each group/version it serves, CRD ones included; it does not proxy "
        "to aggregated API servers, so one naming a service is stored and reported "
        "unavailable."
    ),
    "CustomResourceDefinition": (
        "A CustomResourceDefinition declares a new kind: its group, names, scope and the "
        "versions it is served at, each with an OpenAPI v3 schema that validates, prunes and "
        "defaults its objects. Once Established its resources are served at "
        "/apis/<group>/<version>/<plural>."
    ),
    "RuntimeClass": (
        "A RuntimeClass names a container runtime configuration (handler) that pods select "
        "with spec.runtimeClassName. RuntimeClass admission copies overhead.podFixed into a "
        "new pod's spec.overhead, which scheduling and ResourceQuotas count on top of the "
        "containers' requests, and merges scheduling.nodeSelector and scheduling.tolerations "
        "into the pod."
    ),
    # ValidatingAdmissionPolicy kinds (admissionregistration.k8s.io/v1).
    "ValidatingAdmissionPolicy": (
        "A ValidatingAdmissionPolicy holds CEL validations that writes matching "
        "spec.matchConstraints must pass (for example: only kube-system pods may use "
        "system-cluster-critical). It takes effect through ValidatingAdmissionPolicyBindings, "
        "which say where it applies, with which parameters, and whether a failure denies "
        "the write, warns, or is audited."
    ),
    "ValidatingAdmissionPolicyBinding": (
        "A ValidatingAdmissionPolicyBinding puts a ValidatingAdmissionPolicy (spec.policyName) "
        "in force for the writes spec.matchResources selects, with the parameter objects of "
        "spec.paramRef; spec.validationActions (Deny, Warn, Audit) say what a failed "
        "validation does."
    ),
    "PodTemplate": (
        "A PodTemplate stores a pod template (metadata and spec) for other objects to copy. "
        "kubeprio serves and validates it; nothing creates pods from it."
    ),
    "Ingress": (
        "An Ingress routes HTTP traffic for hosts and paths (spec.rules) to Services in its "
        "namespace, optionally over TLS (spec.tls); spec.ingressClassName names the "
        "IngressClass whose controller serves it. kubeprio stores Ingresses and runs no "
        "ingress controller: status.loadBalancer stays empty unless a client writes it."
    ),
    "IngressClass": (
        "An IngressClass names the controller (spec.controller) that implements Ingresses of "
        "the class. The class annotated ingressclass.kubernetes.io/is-default-class=true is "
        "given to new Ingresses that name none (the DefaultIngressClass admission plugin)."
    ),
    "NetworkPolicy": (
        "A NetworkPolicy says which traffic the pods matched by spec.podSelector may receive "
        "(spec.ingress) and send (spec.egress). kubeprio simulates no pod network: policies "
        "are stored and validated and change nothing about scheduling."
    ),
    "Role": (
        "A Role lists what may be done in its namespace: verbs on API groups' resources, "
        "optionally by name. A RoleBinding grants it; kubeprio's RBAC authorizer allows a "
        "request one of the caller's roles allows, beside the tenant policy."
    ),
    "ClusterRole": (
        "A ClusterRole lists verbs on resources (in every namespace, or in one through a "
        "RoleBinding) or on non-resource URLs. With an aggregationRule its rules are the "
        "union of the rules of the ClusterRoles its selectors match."
    ),
    "RoleBinding": (
        "A RoleBinding grants the rules of a Role or ClusterRole to users, groups and service "
        "accounts, in the binding's namespace. Its roleRef cannot change."
    ),
    "ClusterRoleBinding": (
        "A ClusterRoleBinding grants the rules of a ClusterRole to users, groups and service "
        "accounts in every namespace and at the cluster scope. Its roleRef cannot change."
    ),
    "PolicyRule": "Verbs on resources of API groups (optionally by name), or on non-resource URLs.",
    "Subject": "Who a binding grants to: a User, a Group or a ServiceAccount.",
    "RoleRef": "The Role or ClusterRole a binding grants.",
    "AggregationRule": "Label selectors of the ClusterRoles whose rules are gathered.",
    "LimitRangeItem": "Bounds and defaults for one type of object: Pod, Container or PersistentVolumeClaim.",
    "LimitRangeSpec": "The limit items, at most one per type.",
    "ResourceQuotaSpec": "The limits, and the scopes of the pods they apply to.",
    "ResourceQuotaStatus": "The enforced limits and the usage observed against them.",
    "ScopeSelector": "Scope tests that must all hold for the quota to track a pod.",
    "ScopedResourceSelectorRequirement": (
        "One scope test: a scope name (PriorityClass, BestEffort, Terminating...), an "
        "operator (In, NotIn, Exists, DoesNotExist) and, for In and NotIn, values."
    ),
    "DaemonSet": (
        "A DaemonSet runs one pod from its template on every node that matches the template's "
        "nodeSelector and required node affinity and whose taints it tolerates. Each pod is "
        "pinned to its node by node affinity and placed by the scheduler, so on a full node a "
        "daemon pod of higher priority preempts pods of lower priority there."
    ),
    "DaemonSetSpec": "The pods' template and selector, and how template changes roll out.",
    "DaemonSetStatus": "The DaemonSet controller's last count of nodes and their daemon pods.",
    "DaemonSetUpdateStrategy": (
        "RollingUpdate (default: replace the pods node by node) or OnDelete (new pods only "
        "where old ones were deleted)."
    ),
    "StatefulSet": (
        "A StatefulSet runs pods named <name>-<ordinal> with stable identities. With "
        "OrderedReady it creates them one at a time, each once the one before is Running and "
        "Ready; a pod that is preempted or evicted comes back with the same name once the old "
        "one is gone, and waits for the scheduler like a new pod. No claims are made from "
        "volumeClaimTemplates."
    ),
    "StatefulSetSpec": "The pods' template, selector and count, their order and updates.",
    "StatefulSetStatus": "The StatefulSet controller's last count of pods and revisions.",
    "StatefulSetUpdateStrategy": (
        "RollingUpdate (default: replace pods from the highest ordinal down to the "
        "partition, one at a time) or OnDelete (new pods only where old ones were deleted)."
    ),
    "ControllerRevision": (
        "An immutable snapshot of a pod template, kept by the DaemonSet and StatefulSet "
        "controllers for kubectl rollout history and undo."
    ),
    "ConfigMap": (
        "A ConfigMap holds configuration for pods by key: text in data, bytes in binaryData "
        "(no key in both, at most 1 MiB in all). Set immutable to freeze it for good. Every "
        "namespace has kube-root-ca.crt, the cluster CA kept by the root CA publisher."
    ),
    "Secret": (
        "A Secret holds sensitive data by key (base64 in data; stringData is merged into data "
        "on write and never returned). Its type, Opaque by default and fixed at creation, "
        "says which keys it must hold, such as tls.crt and tls.key for kubernetes.io/tls."
    ),
    "ServiceAccount": (
        "A ServiceAccount is an identity for the processes in pods. Every namespace has one "
        "named default, kept by the service account controller. kubectl create token "
        "issues it a signed token (the serviceaccounts/token subresource) that authenticates "
        "as system:serviceaccount:<namespace>:<name>; pods get its token volume, but "
        "simulated containers read nothing."
    ),
    # certificates.k8s.io
    "CertificateSigningRequest": (
        "A CertificateSigningRequest asks a signer (spec.signerName) for an x509 certificate "
        "for the PEM request in spec.request. The server records who asked (spec.username, "
        "groups); an approver adds the Approved condition (kubectl certificate approve, the "
        "approval subresource, which needs the approve verb on the signer); the signer then "
        "writes status.certificate. kubeprio serve signs kubernetes.io/kube-apiserver-client "
        "requests with its CA, so the certificate logs in as the request's CN and O."
    ),
    "TenantSpec": "The namespaces a Tenant owns, who acts as it, and its class allowlist.",
    "TenantPriorityClasses": "The PriorityClasses a Tenant's pods may use.",
    # admissionregistration.k8s.io webhook configurations (docs/admission.md).
    "MutatingWebhookConfiguration": (
        "A MutatingWebhookConfiguration lists webhooks the API server (kubeprio serve) calls "
        "over HTTPS with an admission.k8s.io/v1 AdmissionReview for the writes their rules "
        "match, after the built-in mutating plugins; a webhook may change the object with a "
        "JSONPatch or refuse it."
    ),
    "ValidatingWebhookConfiguration": (
        "A ValidatingWebhookConfiguration lists webhooks the API server (kubeprio serve) calls "
        "over HTTPS with an admission.k8s.io/v1 AdmissionReview for the writes their rules "
        "match, once the object is final; a webhook may refuse it or add warnings."
    ),
    "MutatingWebhook": "One mutating webhook: where it listens, what it sees, how failures count.",
    "ValidatingWebhook": "One validating webhook: where it listens, what it sees, how failures count.",
    "RuleWithOperations": (
        "Operations on resources (group, version, resource[/subresource], scope) a webhook sees."
    ),
    "WebhookClientConfig": "How to reach a webhook: a url or a service, and the CA to trust.",
}

ROOT_FIELDS: Final[dict[str, str]] = {
    "apiVersion": "The versioned schema of this object, such as v1 or scheduling.k8s.io/v1.",
    "kind": "The kind of this object, such as Pod or PriorityClass.",
    "metadata": "Standard object metadata: name, namespace, labels, annotations, owners.",
    "spec": "The desired state of the object.",
    "status": "The most recently observed state of the object, written by the system.",
}

FIELDS: Final[dict[tuple[str, str], str]] = {
    # ComponentStatus and API Priority and Fairness.
    ("ComponentStatus", "conditions"): "One Healthy condition: True, False or Unknown.",
    ("ComponentCondition", "error"): "Why the component could not be probed.",
    ("FlowSchemaSpec", "matchingPrecedence"): (
        "Schemas are tried from the lowest value (1 is the exempt schema's) to the highest "
        "(10000); defaults to 1000."
    ),
    ("FlowSchemaSpec", "priorityLevelConfiguration"): "The priority level matched requests get.",
    ("FlowSchemaSpec", "distinguisherMethod"): (
        "How matched requests are split into flows: ByUser or ByNamespace; none means one flow."
    ),
    ("FlowSchemaSpec", "rules"): (
        "The schema matches a request when a rule names its user, group or service account "
        "and one of its resource or non-resource rules."
    ),
    ("PriorityLevelConfigurationSpec", "type"): "Exempt (never limited) or Limited.",
    ("LimitedPriorityLevelConfiguration", "nominalConcurrencyShares"): (
        "This level's share of the server's concurrency; defaults to 30, 0 is allowed."
    ),
    ("QueuingConfiguration", "handSize"): (
        "How many queues a flow is dealt (shuffle sharding); at most queues; defaults to 8."
    ),
    ("PriorityClass", "value"): (
        "The priority of pods of this class. Higher values are scheduled first and may "
        "preempt lower ones. User classes may use at most 1000000000; larger values are "
        "reserved for system-node-critical and system-cluster-critical. Immutable."
    ),
    ("PriorityClass", "globalDefault"): (
        "Whether pods without a priorityClassName get this class. At most one class may "
        "set it; with none, such pods get priority 0."
    ),
    ("PriorityClass", "description"): "Free text saying when to use this class.",
    ("PriorityClass", "preemptionPolicy"): (
        "Whether pods of this class may preempt lower-priority pods. PreemptLowerPriority "
        "(the default) allows it; Never queues the pods ahead of lower priorities but never "
        "evicts anyone for them. Immutable."
    ),
    ("PodSpec", "priority"): (
        "The pod's priority, set by Priority admission from its PriorityClass; a value given "
        "by the user must equal the class value or the pod is refused."
    ),
    ("PodSpec", "priorityClassName"): (
        "The PriorityClass of this pod. system-node-critical and system-cluster-critical are "
        "built in; other names must exist. Empty means the global default class, if any."
    ),
    ("PodSpec", "preemptionPolicy"): (
        "Copied from the pod's PriorityClass by Priority admission: PreemptLowerPriority or Never."
    ),
    ("PodSpec", "nodeName"): (
        "The node this pod is bound to. The scheduler sets it through pods/binding; a pod "
        "created with it set skips the scheduler."
    ),
    ("PodSpec", "runtimeClassName"): (
        "The RuntimeClass this pod runs with; RuntimeClass admission sets spec.overhead and "
        "merges the class's nodeSelector and tolerations into the pod. The class must exist."
    ),
    ("PodSpec", "overhead"): (
        "The resources the pod's runtime costs on top of its containers, set at admission "
        "from its RuntimeClass (overhead.podFixed). Counted by the scheduler and by quotas."
    ),
    ("CSINodeDriver", "allocatable"): (
        "How many volumes of this driver the node may have attached (count); enforced by the "
        "scheduler's NodeVolumeLimits plugin. Unset means no limit."
    ),
    ("CSINodeDriver", "name"): "The CSI driver's name, as in its CSIDriver object.",
    ("CSINodeDriver", "nodeID"): "The node's ID as the driver knows it.",
    ("VolumeNodeResources", "count"): (
        "The largest number of this driver's unique volumes used by pods on the node."
    ),
    ("CSIDriverSpec", "attachRequired"): (
        "Whether volumes of this driver must be attached before mounting (default true; immutable)."
    ),
    ("VolumeAttachmentSpec", "attacher"): "The CSI driver that must handle this attachment.",
    ("VolumeAttachmentSpec", "nodeName"): "The node the volume should be attached to.",
    ("VolumeAttachmentStatus", "attached"): "Whether the volume is attached (set by the attacher).",
    ("RuntimeClass", "handler"): (
        "The CRI handler that runs pods of this class (a DNS-1123 label); immutable."
    ),
    ("RuntimeClass", "overhead"): "The fixed resource cost of a pod running with this class.",
    ("RuntimeClass", "scheduling"): (
        "The nodes that support this class: a node selector and tolerations merged into "
        "each pod of the class at admission."
    ),
    ("Overhead", "podFixed"): (
        "The resources every pod of the class costs on top of its containers' requests."
    ),
    ("Scheduling", "nodeSelector"): (
        "Labels nodes must have for pods of this class; merged into the pod's nodeSelector "
        "(a conflicting value refuses the pod)."
    ),
    ("Scheduling", "tolerations"): (
        "Tolerations added to pods of this class (a toleration another one covers is kept once)."
    ),
    ("PodTemplate", "template"): "The pod template: labels, annotations and pod spec.",
    ("PodSpec", "nodeSelector"): "Labels a node must have for this pod to be placed on it.",
    ("PodSpec", "tolerations"): "The node taints this pod tolerates.",
    ("PodSpec", "affinity"): "Node affinity, pod affinity and pod anti-affinity rules.",
    ("PodSpec", "terminationGracePeriodSeconds"): (
        "Seconds a deleted or preempted pod may take to stop (default 30). It keeps its "
        "node resources until then, so a preemptor waits for its victims to terminate."
    ),
    ("PodSpec", "containers"): "The containers of the pod; their requests decide where it fits.",
    ("PodSpec", "schedulerName"): "The scheduler that places this pod (default-scheduler).",
    ("PodStatus", "nominatedNodeName"): (
        "The node where this pod preempted pods and expects to run once they are gone. The "
        "node's room is held for it against pods of lower or equal priority. It is not a "
        "binding: the pod may still be placed elsewhere."
    ),
    ("PodStatus", "phase"): "Pending, Running, Succeeded, Failed or Unknown.",
    ("PodStatus", "conditions"): (
        "PodScheduled (False with reason Unschedulable while no node fits), Ready, and "
        "DisruptionTarget, set with reason PreemptionByScheduler on a preemption victim "
        "before it is deleted."
    ),
    ("PodStatus", "startTime"): (
        "When the kubelet accepted the pod. Among preemption candidates the scheduler "
        "prefers the node whose highest-priority victims started latest."
    ),
    ("PodStatus", "reason"): "A short reason for the phase, such as Evicted or OutOfcpu.",
    ("PodStatus", "message"): "A human-readable explanation of the phase.",
    ("ResourceRequirements", "requests"): (
        "The resources the scheduler reserves for the container on its node."
    ),
    ("ResourceRequirements", "limits"): (
        "The most the container may use; requests default to limits when only limits are set."
    ),
    ("PodDisruptionBudgetSpec", "minAvailable"): (
        "The number or percentage of selected pods that must stay available. Exclusive with "
        "maxUnavailable."
    ),
    ("PodDisruptionBudgetSpec", "maxUnavailable"): (
        "The number or percentage of selected pods that may be unavailable. Exclusive with "
        "minAvailable."
    ),
    ("PodDisruptionBudgetSpec", "selector"): "The pods this budget protects.",
    ("PodDisruptionBudgetSpec", "unhealthyPodEvictionPolicy"): (
        "When pods that are running but not ready may be evicted: IfHealthyBudget (only "
        "while the budget has healthy pods to spare) or AlwaysAllow."
    ),
    ("PodDisruptionBudgetStatus", "disruptionsAllowed"): (
        "How many selected pods may be disrupted now; an eviction needs it above 0."
    ),
    ("PodDisruptionBudgetStatus", "currentHealthy"): "Selected pods that are ready now.",
    ("PodDisruptionBudgetStatus", "desiredHealthy"): "Selected pods that must stay ready.",
    ("PodDisruptionBudgetStatus", "expectedPods"): "Selected pods counted by the budget.",
    ("NodeStatus", "allocatable"): "The resources pods may request on this node.",
    ("NodeStatus", "capacity"): "The node's total resources.",
    ("NodeSpec", "unschedulable"): "Cordoned: no new pods are placed on the node.",
    ("NodeSpec", "taints"): "Taints that repel pods which do not tolerate them.",
    ("ObjectMeta", "deletionTimestamp"): (
        "Set when the object is deleted with a grace period; the object stays until then. "
        "A terminating victim still holds its node resources."
    ),
    ("DeploymentSpec", "replicas"): "How many pods to keep running (default 1).",
    ("ReplicaSetSpec", "replicas"): "How many pods to keep running (default 1).",
    ("DaemonSetSpec", "template"): (
        "The pod template; its priorityClassName decides whom the daemon pods may preempt."
    ),
    (
        "DaemonSetSpec",
        "revisionHistoryLimit",
    ): "How many old ControllerRevisions to keep (default 10).",
    ("RollingUpdateDaemonSet", "maxUnavailable"): (
        "How many nodes (or what percentage) may be without an available daemon pod during a "
        "rolling update (default 1). Exclusive with maxSurge."
    ),
    ("RollingUpdateDaemonSet", "maxSurge"): (
        "How many nodes (or what percentage) may run a new pod next to the old one during a "
        "rolling update (default 0). Exclusive with maxUnavailable."
    ),
    ("ControllerRevision", "data"): "A strategic merge patch that restores the template.",
    ("ControllerRevision", "revision"): "The snapshot's place in its controller's history.",
    ("JobSpec", "backoffLimit"): "How many failed pods the Job allows before it fails.",
    ("JobSpec", "podFailurePolicy"): (
        "Rules on failed pods; a rule matching the DisruptionTarget condition can make "
        "preempted pods not count against backoffLimit."
    ),
    ("CronJobSpec", "schedule"): (
        "A cron schedule: five fields (minute hour day-of-month month day-of-week) or a "
        "descriptor such as @hourly or @every 90m, read as robfig/cron v3 reads it."
    ),
    ("CronJobSpec", "timeZone"): (
        "The IANA time zone the schedule is read in (default UTC). TZ= and CRON_TZ= in the "
        "schedule are refused in its favour."
    ),
    ("CronJobSpec", "startingDeadlineSeconds"): (
        "How late a run may still start; a run missed by more is skipped with a MissSchedule event."
    ),
    ("CronJobSpec", "concurrencyPolicy"): (
        "Allow (default) runs Jobs side by side; Forbid skips a run while a Job is active; "
        "Replace deletes the active Jobs and starts the new one."
    ),
    ("CronJobSpec", "suspend"): "When true, no new runs start; running Jobs go on.",
    ("CronJobSpec", "jobTemplate"): (
        "The Job to create at each run; its pod template's priorityClassName is admitted "
        "under the tenant allowlist like any workload's."
    ),
    ("CronJobSpec", "successfulJobsHistoryLimit"): "How many completed Jobs to keep (default 3).",
    ("CronJobSpec", "failedJobsHistoryLimit"): "How many failed Jobs to keep (default 1).",
    ("CronJobStatus", "active"): "References to the Jobs running now.",
    ("CronJobStatus", "lastScheduleTime"): "The scheduled time of the last Job created.",
    ("CronJobStatus", "lastSuccessfulTime"): "When the last successful Job completed.",
    ("TenantSpec", "namespaces"): "Namespaces the Tenant owns, by name.",
    ("TenantSpec", "namespaceSelector"): "Namespaces the Tenant owns, by label.",
    ("TenantSpec", "priorityClasses"): "The class allowlist of the Tenant's pods.",
    ("TenantSpec", "enforcement"): (
        "Enforce refuses pods outside the allowlist; Audit admits them with a warning and an event."
    ),
    ("TenantSpec", "users"): "Users who act as this Tenant in kubeprio serve.",
    ("TenantSpec", "groups"): "Groups whose members act as this Tenant in kubeprio serve.",
    ("TenantPriorityClasses", "allowed"): "Class names the Tenant's pods may use.",
    ("TenantPriorityClasses", "allowedRegex"): (
        "A regular expression; class names matching it whole are allowed too."
    ),
    ("TenantPriorityClasses", "default"): "The class given to the Tenant's pods that name none.",
    ("TenantPriorityClasses", "maxValue"): "The highest class value the Tenant's pods may use.",
    ("LeaseSpec", "holderIdentity"): "Who holds the lease (a kubelet: its node's name).",
    ("LeaseSpec", "leaseDurationSeconds"): (
        "How long, after renewTime, others must wait before taking the lease over (> 0)."
    ),
    ("LeaseSpec", "acquireTime"): "When the current holder acquired the lease.",
    ("LeaseSpec", "renewTime"): "When the current holder last renewed the lease.",
    ("LeaseSpec", "leaseTransitions"): "How many times the lease changed holders (>= 0).",
    ("LeaseSpec", "strategy"): "The coordinated leader-election strategy (OldestEmulationVersion).",
    ("LeaseSpec", "preferredHolder"): "The holder a coordinated election wants next.",
    ("ServiceSpec", "type"): (
        "ClusterIP (default), NodePort, LoadBalancer (no load balancer exists here: its "
        "address stays <pending>) or ExternalName."
    ),
    ("ServiceSpec", "clusterIP"): (
        "The virtual IP: allocated from the service range when empty, refused when taken or "
        "outside the range; None makes a headless Service. Immutable."
    ),
    ("ServiceSpec", "selector"): "The labels of the pods behind the Service.",
    ("ConfigMap", "immutable"): (
        "When true, data and binaryData can no longer change and immutable cannot be unset "
        "(only metadata can); delete and recreate the ConfigMap instead."
    ),
    ("Secret", "stringData"): (
        "Write-only text values, merged into data (UTF-8 bytes, overwriting the same keys) "
        "on every write; never stored or returned."
    ),
    ("Secret", "type"): (
        "Opaque (default) or a kubernetes.io/ type that requires keys: service-account-token, "
        "dockercfg, dockerconfigjson, basic-auth, ssh-auth, tls. Immutable."
    ),
    ("Secret", "immutable"): (
        "When true, data can no longer change and immutable cannot be unset (only metadata can)."
    ),
    ("ServicePort", "nodePort"): (
        "The port on every node (NodePort and LoadBalancer): allocated from 30000-32767 when empty."
    ),
    ("CertificateSigningRequestSpec", "signerName"): (
        "The signer to ask: kubernetes.io/kube-apiserver-client (API server client "
        "certificates), kubernetes.io/kube-apiserver-client-kubelet, "
        "kubernetes.io/kubelet-serving, or a domain/name of your own (not signed by kubeprio)."
    ),
    ("CertificateSigningRequestSpec", "expirationSeconds"): (
        "The validity asked for, at least 600; the signer caps it at its maximum "
        "(--cluster-signing-duration, one year by default)."
    ),
    ("CertificateSigningRequestSpec", "username"): (
        "Who created the request: set by the server from the request's user, never from the body."
    ),
    ("CertificateSigningRequestStatus", "certificate"): (
        "The issued certificate (PEM), written by the signer once the request is approved."
    ),
    ("ServicePort", "targetPort"): (
        "The pods' port (a number or a container port name); defaults to port."
    ),
    # events.k8s.io/v1 Event (a view of the stored core/v1 Event; core's fields in brackets).
    ("Event", "eventTime"): "When the event first happened, in microseconds. Required.",
    ("Event", "series"): (
        "Set when the event repeated: how many times, and when it was last seen."
    ),
    ("Event", "note"): "What happened, for people to read; at most 1024 bytes [message].",
    ("Event", "regarding"): "The object the event is about [involvedObject].",
    ("Event", "related"): ("A second object involved, such as the preemptor of a Preempted pod."),
    ("Event", "reportingController"): (
        "The controller that reported the event, such as default-scheduler [reportingComponent]."
    ),
    ("Event", "reportingInstance"): "Which instance of that controller reported it.",
    ("Event", "action"): (
        "What the reporter did or failed to do, such as Scheduling, Binding or Preempting."
    ),
    ("Event", "deprecatedSource"): "The core/v1 source, kept for old readers [source].",
    ("Event", "deprecatedFirstTimestamp"): "The core/v1 firstTimestamp, kept for old readers.",
    ("Event", "deprecatedLastTimestamp"): "The core/v1 lastTimestamp, kept for old readers.",
    ("Event", "deprecatedCount"): "The core/v1 count, kept for old readers.",
    ("EventSeries", "count"): "How many times the event has happened (at least 2).",
    ("EventSeries", "lastObservedTime"): "When it last happened.",
    # admissionregistration.k8s.io webhook configurations.
    ("MutatingWebhook", "failurePolicy"): (
        "Fail (default) refuses the write when the webhook cannot be called; Ignore goes on."
    ),
    ("ValidatingWebhook", "failurePolicy"): (
        "Fail (default) refuses the write when the webhook cannot be called; Ignore goes on."
    ),
    ("MutatingWebhook", "reinvocationPolicy"): (
        "IfNeeded calls the webhook once more when a later webhook changed the object; "
        "Never (default) does not."
    ),
    ("MutatingWebhook", "timeoutSeconds"): "Seconds to wait for the webhook (1-30, default 10).",
    ("ValidatingWebhook", "timeoutSeconds"): "Seconds to wait for the webhook (1-30, default 10).",
    ("WebhookClientConfig", "url"): "An https URL to call (no user, query or fragment).",
    ("WebhookClientConfig", "caBundle"): (
        "PEM CA certificates the webhook's serving certificate must chain to; the system "
        "roots when empty."
    ),
    ("WebhookClientConfig", "service"): (
        "A Service to call at https://<name>.<namespace>.svc:<port><path>; kubeprio dials the "
        "first address of its Endpoints (or an ExternalName's host)."
    ),
}

# Listed sorted, as upstream's schemas list them.
ENUMS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("PriorityClass", "preemptionPolicy"): tuple(sorted(PREEMPTION_POLICIES)),
    ("PodSpec", "preemptionPolicy"): tuple(sorted(PREEMPTION_POLICIES)),
    ("PodSpec", "restartPolicy"): tuple(sorted(RESTART_POLICIES)),
    ("PodStatus", "phase"): ("Failed", "Pending", "Running", "Succeeded", "Unknown"),
    ("PodDisruptionBudgetSpec", "unhealthyPodEvictionPolicy"): tuple(
        sorted(UNHEALTHY_POD_EVICTION_POLICIES)
    ),
    ("TenantSpec", "enforcement"): tuple(sorted(ENFORCEMENT_MODES)),
    ("DaemonSetUpdateStrategy", "type"): tuple(sorted(UPDATE_STRATEGIES)),
    ("CronJobSpec", "concurrencyPolicy"): tuple(sorted(CONCURRENCY_POLICIES)),
}
