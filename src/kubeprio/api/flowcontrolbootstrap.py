"""The API Priority and Fairness configuration a v1.32 kube-apiserver creates and keeps.

Facts of ``k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go`` (v1.32):

* mandatory: the ``exempt`` priority level (type Exempt, shares 0, lendable 0) and the
  ``catch-all`` one (Limited, 5 shares, lendable 0, Reject); the ``exempt`` schema
  (precedence 1, group ``system:masters``, everything) and the ``catch-all`` schema
  (precedence 10000, ByUser, groups ``system:unauthenticated`` and
  ``system:authenticated``, everything);
* suggested levels ``system`` (30 shares, lendable 33, 64 queues, hand 6),
  ``node-high`` (40, 25, 64, 6), ``leader-election`` (10, 0, 16, 4), ``workload-high``
  (40, 50, 128, 6), ``workload-low`` (100, 90, 128, 6), ``global-default`` (20, 50, 128,
  6), each with queue length limit 50; and eleven suggested schemas from ``probes``
  (precedence 2) to ``global-default`` (9900).

Every object carries ``apf.kubernetes.io/autoupdate-spec: "true"``. The specs here are
already defaulted (``SetObjectDefaults``), as ``internalbootstrap`` hands them to
validation, which requires the mandatory objects' specs to equal them. The ensurer that
writes them is ``apiserver.flowcontrolensure``. Pure data.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.flowcontrol import (
    ALL,
    AUTOUPDATE_ANNOTATION,
    BY_NAMESPACE,
    BY_USER,
    CATCH_ALL,
    EXEMPT,
    LIMIT_QUEUE,
    LIMIT_REJECT,
    SUBJECT_GROUP,
    SUBJECT_SERVICE_ACCOUNT,
    SUBJECT_USER,
    TYPE_EXEMPT,
    TYPE_LIMITED,
    ExemptPriorityLevelConfiguration,
    FlowDistinguisherMethod,
    FlowSchema,
    FlowSchemaSpec,
    FlowSubject,
    GroupSubject,
    LimitedPriorityLevelConfiguration,
    LimitResponse,
    NonResourcePolicyRule,
    PolicyRulesWithSubjects,
    PriorityLevelConfiguration,
    PriorityLevelConfigurationReference,
    PriorityLevelConfigurationSpec,
    QueuingConfiguration,
    ResourcePolicyRule,
    ServiceAccountSubject,
    UserSubject,
)
from kubeprio.api.meta import ObjectMeta

MASTERS: Final = "system:masters"
AUTHENTICATED: Final = "system:authenticated"
UNAUTHENTICATED: Final = "system:unauthenticated"
NODES: Final = "system:nodes"
SERVICE_ACCOUNTS: Final = "system:serviceaccounts"
KUBE_CONTROLLER_MANAGER: Final = "system:kube-controller-manager"
KUBE_SCHEDULER: Final = "system:kube-scheduler"
KUBE_SYSTEM: Final = "kube-system"


def _meta(name: str) -> ObjectMeta:
    return ObjectMeta(name=name, annotations={AUTOUPDATE_ANNOTATION: "true"})


def _level(name: str, spec: PriorityLevelConfigurationSpec) -> PriorityLevelConfiguration:
    return PriorityLevelConfiguration(metadata=_meta(name), spec=spec)


def _queued(shares: int, lendable: int, queues: int, hand: int) -> PriorityLevelConfigurationSpec:
    return PriorityLevelConfigurationSpec(
        type=TYPE_LIMITED,
        limited=LimitedPriorityLevelConfiguration(
            nominal_concurrency_shares=shares,
            lendable_percent=lendable,
            limit_response=LimitResponse(
                type=LIMIT_QUEUE,
                queuing=QueuingConfiguration(queues=queues, hand_size=hand, queue_length_limit=50),
            ),
        ),
    )


def _schema(
    name: str, level: str, precedence: int, method: str, *rules: PolicyRulesWithSubjects
) -> FlowSchema:
    return FlowSchema(
        metadata=_meta(name),
        spec=FlowSchemaSpec(
            priority_level_configuration=PriorityLevelConfigurationReference(name=level),
            matching_precedence=precedence,
            distinguisher_method=FlowDistinguisherMethod(type=method) if method else None,
            rules=rules,
        ),
    )


def _groups(*names: str) -> tuple[FlowSubject, ...]:
    return tuple(FlowSubject(kind=SUBJECT_GROUP, group=GroupSubject(name=n)) for n in names)


def _users(*names: str) -> tuple[FlowSubject, ...]:
    return tuple(FlowSubject(kind=SUBJECT_USER, user=UserSubject(name=n)) for n in names)


def _kube_system_accounts(*names: str) -> tuple[FlowSubject, ...]:
    return tuple(
        FlowSubject(
            kind=SUBJECT_SERVICE_ACCOUNT,
            service_account=ServiceAccountSubject(namespace=KUBE_SYSTEM, name=n),
        )
        for n in names
    )


def _resources(
    verbs: tuple[str, ...], groups: tuple[str, ...], resources: tuple[str, ...], cluster: bool
) -> ResourcePolicyRule:
    return ResourcePolicyRule(
        verbs=verbs,
        api_groups=groups,
        resources=resources,
        cluster_scope=cluster or None,
        namespaces=(ALL,),
    )


EVERY_RESOURCE: Final = _resources((ALL,), (ALL,), (ALL,), True)
EVERY_PATH: Final = NonResourcePolicyRule(verbs=(ALL,), non_resource_urls=(ALL,))
ELECTION_VERBS: Final = ("get", "create", "update")


def _everything(subjects: tuple[FlowSubject, ...]) -> PolicyRulesWithSubjects:
    return PolicyRulesWithSubjects(
        subjects=subjects, resource_rules=(EVERY_RESOURCE,), non_resource_rules=(EVERY_PATH,)
    )


# --- mandatory ----------------------------------------------------------------------------

EXEMPT_LEVEL: Final = _level(
    EXEMPT,
    PriorityLevelConfigurationSpec(
        type=TYPE_EXEMPT,
        exempt=ExemptPriorityLevelConfiguration(nominal_concurrency_shares=0, lendable_percent=0),
    ),
)
CATCH_ALL_LEVEL: Final = _level(
    CATCH_ALL,
    PriorityLevelConfigurationSpec(
        type=TYPE_LIMITED,
        limited=LimitedPriorityLevelConfiguration(
            nominal_concurrency_shares=5,
            lendable_percent=0,
            limit_response=LimitResponse(type=LIMIT_REJECT),
        ),
    ),
)
EXEMPT_SCHEMA: Final = _schema(EXEMPT, EXEMPT, 1, "", _everything(_groups(MASTERS)))
CATCH_ALL_SCHEMA: Final = _schema(
    CATCH_ALL, CATCH_ALL, 10000, BY_USER, _everything(_groups(UNAUTHENTICATED, AUTHENTICATED))
)

MANDATORY_LEVELS: Final = (CATCH_ALL_LEVEL, EXEMPT_LEVEL)
MANDATORY_SCHEMAS: Final = (EXEMPT_SCHEMA, CATCH_ALL_SCHEMA)
MANDATORY_LEVELS_BY_NAME: Final = {level.metadata.name: level for level in MANDATORY_LEVELS}
MANDATORY_SCHEMAS_BY_NAME: Final = {schema.metadata.name: schema for schema in MANDATORY_SCHEMAS}

# --- suggested ----------------------------------------------------------------------------

SUGGESTED_LEVELS: Final = (
    _level("system", _queued(30, 33, 64, 6)),
    _level("node-high", _queued(40, 25, 64, 6)),
    _level("leader-election", _queued(10, 0, 16, 4)),
    _level("workload-high", _queued(40, 50, 128, 6)),
    _level("workload-low", _queued(100, 90, 128, 6)),
    _level("global-default", _queued(20, 50, 128, 6)),
)
_LEASES: Final = _resources(ELECTION_VERBS, ("coordination.k8s.io",), ("leases",), False)
SUGGESTED_SCHEMAS: Final = (
    _schema("system-nodes", "system", 500, BY_USER, _everything(_groups(NODES))),
    _schema(
        "system-node-high",
        "node-high",
        400,
        BY_USER,
        PolicyRulesWithSubjects(
            subjects=_groups(NODES),
            resource_rules=(
                _resources((ALL,), ("",), ("nodes", "nodes/status"), True),
                _resources((ALL,), ("coordination.k8s.io",), ("leases",), False),
            ),
        ),
    ),
    _schema(
        "probes",
        EXEMPT,
        2,
        "",
        PolicyRulesWithSubjects(
            subjects=_groups(UNAUTHENTICATED, AUTHENTICATED),
            non_resource_rules=(
                NonResourcePolicyRule(
                    verbs=("get",), non_resource_urls=("/healthz", "/readyz", "/livez")
                ),
            ),
        ),
    ),
    _schema(
        "system-leader-election",
        "leader-election",
        100,
        BY_USER,
        PolicyRulesWithSubjects(
            subjects=(
                *_users(KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER),
                *_kube_system_accounts(ALL),
            ),
            resource_rules=(_LEASES,),
        ),
    ),
    _schema(
        "workload-leader-election",
        "leader-election",
        200,
        BY_USER,
        PolicyRulesWithSubjects(
            subjects=_kube_system_accounts(ALL),
            resource_rules=(
                _resources(ELECTION_VERBS, ("",), ("endpoints", "configmaps"), False),
                _LEASES,
            ),
        ),
    ),
    _schema(
        "endpoint-controller",
        "workload-high",
        150,
        BY_USER,
        PolicyRulesWithSubjects(
            subjects=(
                *_users(KUBE_CONTROLLER_MANAGER),
                *_kube_system_accounts("endpoint-controller", "endpointslicemirroring-controller"),
            ),
            resource_rules=(_resources(ELECTION_VERBS, ("",), ("endpoints",), False),),
        ),
    ),
    _schema(
        "kube-controller-manager",
        "workload-high",
        800,
        BY_NAMESPACE,
        _everything(_users(KUBE_CONTROLLER_MANAGER)),
    ),
    _schema(
        "kube-scheduler", "workload-high", 800, BY_NAMESPACE, _everything(_users(KUBE_SCHEDULER))
    ),
    _schema(
        "kube-system-service-accounts",
        "workload-high",
        900,
        BY_NAMESPACE,
        _everything(_kube_system_accounts(ALL)),
    ),
    _schema(
        "service-accounts", "workload-low", 9000, BY_USER, _everything(_groups(SERVICE_ACCOUNTS))
    ),
    _schema(
        "global-default",
        "global-default",
        9900,
        BY_USER,
        _everything(_groups(UNAUTHENTICATED, AUTHENTICATED)),
    ),
)
"""In upstream's order (``SuggestedFlowSchemas``)."""
