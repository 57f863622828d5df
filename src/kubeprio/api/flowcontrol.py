"""flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration (API Priority
and Fairness), with their v1 defaults.

Mirrors ``k8s.io/api/flowcontrol/v1/types.go``. A FlowSchema sorts requests: the schema
with the lowest ``matchingPrecedence`` whose rules match (a subject, then a resource or
non-resource rule) assigns the request to its priority level and names how flows are
told apart (``distinguisherMethod``). A PriorityLevelConfiguration is ``Exempt`` (never
limited) or ``Limited`` (a share of the server's concurrency, with queuing or rejection
beyond it). Both kinds are cluster-scoped and have a ``status`` subresource with
conditions (``Dangling`` on a FlowSchema whose priority level is missing).

Defaults (``pkg/apis/flowcontrol/v1/defaults.go``): ``matchingPrecedence`` 0 is 1000; an
exempt level's ``nominalConcurrencyShares`` and ``lendablePercent`` nil are 0; a limited
level's ``nominalConcurrencyShares`` nil is 30 (0 is kept since v1.29) and
``lendablePercent`` nil is 0; a queuing configuration's zero ``queues``, ``handSize`` and
``queueLengthLimit`` are 64, 8 and 50. Validation is in ``api.validation.flowcontrol``,
the bootstrap objects in ``apiserver.flowcontrolbootstrap``. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve, extra_field, fast_init, json_name

GROUP: Final = "flowcontrol.apiserver.k8s.io"
API_VERSION: Final = f"{GROUP}/v1"
AUTOUPDATE_ANNOTATION: Final = "apf.kubernetes.io/autoupdate-spec"
"""``AutoUpdateAnnotationKey``: ``"true"`` lets the API server keep the object's spec
at the bootstrap value."""
CONDITION_DANGLING: Final = "Dangling"
EXEMPT: Final = "exempt"
CATCH_ALL: Final = "catch-all"
"""The names of the mandatory schemas and priority levels."""
TYPE_EXEMPT: Final = "Exempt"
TYPE_LIMITED: Final = "Limited"
LIMIT_QUEUE: Final = "Queue"
LIMIT_REJECT: Final = "Reject"
BY_USER: Final = "ByUser"
BY_NAMESPACE: Final = "ByNamespace"
SUBJECT_USER: Final = "User"
SUBJECT_GROUP: Final = "Group"
SUBJECT_SERVICE_ACCOUNT: Final = "ServiceAccount"
ALL: Final = "*"
"""The wildcard of verbs, groups, resources, namespaces, URLs and subject names."""
MAX_MATCHING_PRECEDENCE: Final = 10000
HEADER_FLOW_SCHEMA_UID: Final = "X-Kubernetes-PF-FlowSchema-UID"
HEADER_PRIORITY_LEVEL_UID: Final = "X-Kubernetes-PF-PriorityLevel-UID"

DEFAULT_MATCHING_PRECEDENCE: Final = 1000
DEFAULT_NOMINAL_CONCURRENCY_SHARES: Final = 30
DEFAULT_QUEUES: Final = 64
DEFAULT_HAND_SIZE: Final = 8
DEFAULT_QUEUE_LENGTH_LIMIT: Final = 50


# --- FlowSchema --------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityLevelConfigurationReference:
    """The priority level a schema assigns its requests to, by name."""

    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FlowDistinguisherMethod:
    """How requests of a schema are split into flows: ``ByUser`` or ``ByNamespace``."""

    type: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class UserSubject:
    """A user by name (``*`` for any)."""

    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSubject:
    """A group by name (``*`` for any)."""

    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceAccountSubject:
    """A service account by namespace and name (``*`` for any in the namespace)."""

    namespace: str | None = None
    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FlowSubject:
    """``Subject``: a union keyed by ``kind`` (``User``, ``Group``, ``ServiceAccount``)."""

    kind: str | None = None
    user: UserSubject | None = None
    group: GroupSubject | None = None
    service_account: ServiceAccountSubject | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourcePolicyRule:
    """Matches resource requests by verb, API group, resource and namespace (or cluster
    scope)."""

    verbs: tuple[str, ...] | None = None
    api_groups: tuple[str, ...] | None = json_name("apiGroups")
    resources: tuple[str, ...] | None = None
    cluster_scope: bool | None = None
    namespaces: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NonResourcePolicyRule:
    """Matches non-resource requests by verb and URL path (``/healthz``, ``/apis/*``)."""

    verbs: tuple[str, ...] | None = None
    non_resource_urls: tuple[str, ...] | None = json_name("nonResourceURLs")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRulesWithSubjects:
    """A rule: one of ``subjects`` making a request one of the rules describe."""

    subjects: tuple[FlowSubject, ...] | None = None
    resource_rules: tuple[ResourcePolicyRule, ...] | None = None
    non_resource_rules: tuple[NonResourcePolicyRule, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FlowSchemaSpec:
    """What a schema matches and where it sends it."""

    priority_level_configuration: PriorityLevelConfigurationReference | None = None
    matching_precedence: int | None = None
    distinguisher_method: FlowDistinguisherMethod | None = None
    rules: tuple[PolicyRulesWithSubjects, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FlowSchemaCondition:
    """A FlowSchema condition (``Dangling``)."""

    type: str | None = None
    status: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FlowSchemaStatus:
    """A FlowSchema's conditions."""

    conditions: tuple[FlowSchemaCondition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FlowSchema:
    """A flowcontrol.apiserver.k8s.io/v1 FlowSchema (cluster-scoped)."""

    api_version: str | None = API_VERSION
    kind: str | None = "FlowSchema"
    metadata: ObjectMeta = ObjectMeta()
    spec: FlowSchemaSpec | None = None
    status: FlowSchemaStatus | None = None
    extra: JsonDict = extra_field()


# --- PriorityLevelConfiguration -----------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class QueuingConfiguration:
    """Shuffle-sharded queues: how many, the hand dealt per flow, each queue's length."""

    queues: int | None = None
    hand_size: int | None = None
    queue_length_limit: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LimitResponse:
    """What happens to a request that cannot run now: ``Queue`` or ``Reject``."""

    type: str | None = None
    queuing: QueuingConfiguration | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LimitedPriorityLevelConfiguration:
    """A limited level: its share of the server's concurrency and what is lent or
    borrowed."""

    nominal_concurrency_shares: int | None = None
    limit_response: LimitResponse | None = None
    lendable_percent: int | None = None
    borrowing_limit_percent: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ExemptPriorityLevelConfiguration:
    """An exempt level's nominal share (for borrowing only) and what it lends."""

    nominal_concurrency_shares: int | None = None
    lendable_percent: int | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityLevelConfigurationSpec:
    """``Exempt`` or ``Limited``, with the matching configuration."""

    type: str | None = None
    limited: LimitedPriorityLevelConfiguration | None = None
    exempt: ExemptPriorityLevelConfiguration | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityLevelConfigurationCondition:
    """A PriorityLevelConfiguration condition."""

    type: str | None = None
    status: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityLevelConfigurationStatus:
    """A PriorityLevelConfiguration's conditions."""

    conditions: tuple[PriorityLevelConfigurationCondition, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityLevelConfiguration:
    """A flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration (cluster-scoped)."""

    api_version: str | None = API_VERSION
    kind: str | None = "PriorityLevelConfiguration"
    metadata: ObjectMeta = ObjectMeta()
    spec: PriorityLevelConfigurationSpec | None = None
    status: PriorityLevelConfigurationStatus | None = None
    extra: JsonDict = extra_field()


# --- defaults (pkg/apis/flowcontrol/v1/defaults.go) ---------------------------------------


def default_flow_schema(schema: FlowSchema) -> FlowSchema:
    """``SetDefaults_FlowSchemaSpec``; Go's decoder leaves an absent spec and status as
    empty structs, written back as ``{}``."""
    spec = schema.spec or FlowSchemaSpec()
    if not spec.matching_precedence:
        spec = evolve(spec, matching_precedence=DEFAULT_MATCHING_PRECEDENCE)
    status = schema.status or FlowSchemaStatus()
    if spec is schema.spec and status is schema.status:
        return schema
    return evolve(schema, spec=spec, status=status)


def _default_queuing(queuing: QueuingConfiguration) -> QueuingConfiguration:
    """``SetDefaults_QueuingConfiguration``: zero counts take the defaults."""
    changes = {
        name: default
        for name, default in (
            ("queues", DEFAULT_QUEUES),
            ("hand_size", DEFAULT_HAND_SIZE),
            ("queue_length_limit", DEFAULT_QUEUE_LENGTH_LIMIT),
        )
        if not getattr(queuing, name)
    }
    return evolve(queuing, **changes) if changes else queuing


def _default_limited(
    limited: LimitedPriorityLevelConfiguration,
) -> LimitedPriorityLevelConfiguration:
    """``SetDefaults_LimitedPriorityLevelConfiguration`` and the queuing defaults below it."""
    changes: dict[str, object] = {}
    if limited.nominal_concurrency_shares is None:
        changes["nominal_concurrency_shares"] = DEFAULT_NOMINAL_CONCURRENCY_SHARES
    if limited.lendable_percent is None:
        changes["lendable_percent"] = 0
    response = limited.limit_response or LimitResponse()
    if response.queuing is not None:
        queuing = _default_queuing(response.queuing)
        if queuing is not response.queuing:
            response = evolve(response, queuing=queuing)
    if response is not limited.limit_response:
        changes["limit_response"] = response
    return evolve(limited, **changes) if changes else limited


def _default_exempt(exempt: ExemptPriorityLevelConfiguration) -> ExemptPriorityLevelConfiguration:
    """``SetDefaults_ExemptPriorityLevelConfiguration``: nil shares and lendable are 0."""
    changes = {
        name: 0
        for name in ("nominal_concurrency_shares", "lendable_percent")
        if getattr(exempt, name) is None
    }
    return evolve(exempt, **changes) if changes else exempt


def default_priority_level(level: PriorityLevelConfiguration) -> PriorityLevelConfiguration:
    """``SetObjectDefaults_PriorityLevelConfiguration``: the limited or exempt section's
    defaults; an absent spec or status is an empty one (Go structs)."""
    spec = level.spec or PriorityLevelConfigurationSpec()
    changes: dict[str, object] = {}
    if spec.limited is not None:
        limited = _default_limited(spec.limited)
        if limited is not spec.limited:
            changes["limited"] = limited
    if spec.exempt is not None:
        exempt = _default_exempt(spec.exempt)
        if exempt is not spec.exempt:
            changes["exempt"] = exempt
    if changes:
        spec = evolve(spec, **changes)
    status = level.status or PriorityLevelConfigurationStatus()
    if spec is level.spec and status is level.status:
        return level
    return evolve(level, spec=spec, status=status)
