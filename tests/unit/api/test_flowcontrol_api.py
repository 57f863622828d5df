"""FlowSchema and PriorityLevelConfiguration through the API service, without admission.

Upstream v1.32: ``pkg/apis/flowcontrol/v1/defaults.go`` (``SetDefaults_FlowSchemaSpec``,
``SetDefaults_ExemptPriorityLevelConfiguration``,
``SetDefaults_LimitedPriorityLevelConfiguration``, ``SetDefaults_QueuingConfiguration``),
``pkg/apis/flowcontrol/validation/validation.go`` (every text below, word for word, as
``field.Error`` prints it), ``pkg/registry/flowcontrol/*/strategy.go`` (status reset on
create, generation, ``AllowZeroLimitedNominalConcurrencyShares``) and
``k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go`` (the fixed specs).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import serialization
from kubeprio.api.errors import InvalidError
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.flowcontrolbootstrap import (
    MANDATORY_LEVELS,
    MANDATORY_SCHEMAS,
    SUGGESTED_LEVELS,
    SUGGESTED_SCHEMAS,
)
from kubeprio.api.model import evolve
from kubeprio.api.validation.prioritylevel import required_entropy_bits
from kubeprio.apiserver.service import ApiService

SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
RULE = {
    "subjects": [{"kind": "User", "user": {"name": "bob"}}],
    "resourceRules": [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}
    ],
}


def schema(name: str = "web", rules: Any = (RULE,), **spec: Any) -> FlowSchema:
    body = {"priorityLevelConfiguration": {"name": "workload"}, "rules": list(rules), **spec}
    return serialization.from_dict(FlowSchema, {"metadata": {"name": name}, "spec": body})


def level(name: str = "workload", **spec: Any) -> PriorityLevelConfiguration:
    body = spec or {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}
    return serialization.from_dict(
        PriorityLevelConfiguration, {"metadata": {"name": name}, "spec": body}
    )


def queued(queuing: dict[str, Any], **limited: Any) -> dict[str, Any]:
    return {
        "type": "Limited",
        "limited": {"limitResponse": {"type": "Queue", "queuing": queuing}, **limited},
    }


def causes(api: ApiService, obj: object) -> list[str]:
    with pytest.raises(InvalidError) as caught:
        api.create(obj)
    details = caught.value.status.details
    assert details is not None
    return [f"{c.field}: {c.message}" for c in details.causes or ()]


# --- defaults ------------------------------------------------------------------------------


def test_flow_schema_defaults(api: ApiService) -> None:
    created = api.create(schema())
    assert created.spec.matching_precedence == 1000  # FlowSchemaDefaultMatchingPrecedence
    assert created.metadata.generation == 1
    assert serialization.to_dict(created)["status"] == {}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # Limited: nil shares are 30, nil lendable 0; a queuing config's zeros take 64/8/50.
        (
            queued({}),
            {
                "nominalConcurrencyShares": 30,
                "lendablePercent": 0,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50},
                },
            },
        ),
        # v1 keeps an explicit 0 (the pointer is set): a "jail" level.
        (
            queued({"queues": 2, "handSize": 1, "queueLengthLimit": 5}, nominalConcurrencyShares=0),
            {
                "nominalConcurrencyShares": 0,
                "lendablePercent": 0,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": 2, "handSize": 1, "queueLengthLimit": 5},
                },
            },
        ),
    ],
)
def test_limited_defaults(api: ApiService, spec: dict[str, Any], expected: Any) -> None:
    created = api.create(level(**spec))
    assert serialization.to_dict(created)["spec"]["limited"] == expected


def test_exempt_defaults(api: ApiService) -> None:
    created = api.create(level("exempt", type="Exempt", exempt={}))
    assert serialization.to_dict(created)["spec"]["exempt"] == {
        "nominalConcurrencyShares": 0,
        "lendablePercent": 0,
    }


def test_the_bootstrap_objects_are_valid_and_already_defaulted(api: ApiService) -> None:
    for obj in (*MANDATORY_LEVELS, *SUGGESTED_LEVELS, *MANDATORY_SCHEMAS, *SUGGESTED_SCHEMAS):
        created = api.create(obj)
        assert created.spec == obj.spec, obj.metadata.name


# --- FlowSchema validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            schema(matchingPrecedence=10001),
            ["spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"],
        ),
        (
            schema(matchingPrecedence=-3),
            ["spec.matchingPrecedence: Invalid value: -3: must be a positive value"],
        ),
        (
            schema(matchingPrecedence=1),
            [
                "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may "
                "have matchingPrecedence 1"
            ],
        ),
        (
            schema(distinguisherMethod={"type": "ByColour"}),
            [
                "spec.distinguisherMethod.type: Unsupported value: "
                'flowcontrol.FlowDistinguisherMethod{Type:"ByColour"}: supported values: '
                '"ByNamespace", "ByUser"'
            ],
        ),
        (
            schema(priorityLevelConfiguration={"name": ""}),
            [
                "spec.priorityLevelConfiguration.name: Required value: must reference a priority level"
            ],
        ),
        (
            schema(priorityLevelConfiguration={"name": "Bad_Name"}),
            [f'spec.priorityLevelConfiguration.name: Invalid value: "Bad_Name": {SUBDOMAIN_ERROR}'],
        ),
        (
            schema(rules=[{"subjects": [{"kind": "User", "user": {"name": "bob"}}]}]),
            [
                "spec.rules[0]: Required value: at least one of resourceRules and "
                "nonResourceRules has to be non-empty"
            ],
        ),
        (
            schema(rules=[{"nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}]),
            ["spec.rules[0].subjects: Required value: subjects must contain at least one value"],
        ),
        # Subject unions: members in the order serviceAccount, user, group.
        (
            schema(
                rules=[
                    {
                        "subjects": [
                            {
                                "kind": "ServiceAccount",
                                "user": {"name": "a"},
                                "group": {"name": "b"},
                            }
                        ],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    }
                ]
            ),
            [
                "spec.rules[0].subjects[0].serviceAccount: Required value: serviceAccount is "
                "required when subject kind is 'ServiceAccount'",
                "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind "
                "is not 'User'",
                "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind "
                "is not 'Group'",
            ],
        ),
        (
            schema(
                rules=[
                    {
                        "subjects": [
                            {
                                "kind": "User",
                                "group": {"name": "b"},
                                "serviceAccount": {"namespace": "s", "name": "n"},
                            }
                        ],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    }
                ]
            ),
            [
                "spec.rules[0].subjects[0].serviceAccount: Forbidden: serviceAccount is forbidden "
                "when subject kind is not 'ServiceAccount'",
                "spec.rules[0].subjects[0].user: Required value: user is required when subject "
                "kind is 'User'",
                "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind "
                "is not 'Group'",
            ],
        ),
        (
            schema(
                rules=[
                    {
                        "subjects": [
                            {"kind": "ServiceAccount", "serviceAccount": {"name": "x_y"}},
                            {"kind": "Robot"},
                            {"kind": "Group", "group": {}},
                        ],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    }
                ]
            ),
            [
                f'spec.rules[0].subjects[0].serviceAccount.name: Invalid value: "x_y": {SUBDOMAIN_ERROR}',
                "spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify "
                "namespace for service account",
                'spec.rules[0].subjects[1].kind: Unsupported value: "Robot": supported values: '
                '"Group", "ServiceAccount", "User"',
                "spec.rules[0].subjects[2].group.name: Required value",
            ],
        ),
        (
            schema(
                rules=[
                    {
                        "subjects": [{"kind": "Group", "group": {"name": "g"}}],
                        "resourceRules": [
                            {
                                "verbs": ["*", "get"],
                                "apiGroups": ["*", "apps"],
                                "resources": ["*", "x"],
                            },
                            {
                                "verbs": ["fly"],
                                "apiGroups": [],
                                "resources": [],
                                "namespaces": ["Bad"],
                            },
                        ],
                    }
                ]
            ),
            [
                'spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"*", "get"}: if '
                "'*' is present, must not specify other verbs",
                'spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: '
                "if '*' is present, must not specify other api groups",
                'spec.rules[0].resourceRules[0].resources: Invalid value: []string{"*", "x"}: if '
                "'*' is present, must not specify other resources",
                "spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that "
                "are not cluster scoped must supply at least one namespace",
                'spec.rules[0].resourceRules[1].verbs: Unsupported value: []string{"fly"}: '
                'supported values: "create", "delete", "deletecollection", "get", "list", '
                '"patch", "proxy", "update", "watch"',
                "spec.rules[0].resourceRules[1].apiGroups: Required value: resource rules must "
                "supply at least one api group",
                "spec.rules[0].resourceRules[1].resources: Required value: resource rules must "
                "supply at least one resource",
                'spec.rules[0].resourceRules[1].namespaces[0]: Invalid value: "Bad": each member '
                f"of this list must be '*' or a DNS-1123 label; {LABEL_ERROR}",
            ],
        ),
        (
            schema(
                rules=[
                    {
                        "subjects": [{"kind": "Group", "group": {"name": "g"}}],
                        "nonResourceRules": [
                            {"verbs": [], "nonResourceURLs": ["*", "/x"]},
                            {
                                "verbs": ["get"],
                                "nonResourceURLs": ["", "x", "/a b", "//a", "/a*", "/a/*/*"],
                            },
                        ],
                    }
                ]
            ),
            [
                "spec.rules[0].nonResourceRules[0].verbs: Required value: verbs must contain at "
                "least one value",
                'spec.rules[0].nonResourceRules[0].nonResourceURLs: Invalid value: []string{"*", '
                "\"/x\"}: if '*' is present, must not specify other non-resource URLs",
                'spec.rules[0].nonResourceRules[1].nonResourceURLs[0]: Invalid value: "": must '
                "not be empty",
                'spec.rules[0].nonResourceRules[1].nonResourceURLs[1]: Invalid value: "x": must '
                "start with slash",
                'spec.rules[0].nonResourceRules[1].nonResourceURLs[2]: Invalid value: "/a b": '
                "must not contain white-space",
                'spec.rules[0].nonResourceRules[1].nonResourceURLs[3]: Invalid value: "//a": '
                "must not contain double slash",
                'spec.rules[0].nonResourceRules[1].nonResourceURLs[4]: Invalid value: "/a*": '
                "wildcard can only do suffix glob matching",
                'spec.rules[0].nonResourceRules[1].nonResourceURLs[5]: Invalid value: "/a/*/*": '
                "wildcard can only do suffix glob matching",
            ],
        ),
    ],
)
def test_flow_schema_validation_texts(
    api: ApiService, obj: FlowSchema, expected: list[str]
) -> None:
    assert causes(api, obj) == expected


def test_a_mandatory_schema_spec_is_fixed(api: ApiService) -> None:
    exempt = evolve(
        MANDATORY_SCHEMAS[0], spec=evolve(MANDATORY_SCHEMAS[0].spec, matching_precedence=2)
    )
    [cause] = causes(api, exempt)
    assert cause.startswith("spec: Invalid value: {")
    assert cause.endswith(": spec of 'exempt' must equal the fixed value")


# --- PriorityLevelConfiguration validation ---------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            level(type="Exempt"),
            [
                "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"
            ],
        ),
        (
            level(type="Fast"),
            ['spec.type: Unsupported value: "Fast": supported values: "Exempt", "Limited"'],
        ),
        (
            level(type="Limited", exempt={}),
            [
                "spec.exempt: Forbidden: must be nil if the type is Limited",
                "spec.limited: Required value: must not be empty when type is Limited",
            ],
        ),
        (
            level(
                type="Limited",
                limited={
                    "nominalConcurrencyShares": -1,
                    "lendablePercent": 101,
                    "borrowingLimitPercent": -5,
                    "limitResponse": {"type": "Reject", "queuing": {}},
                },
            ),
            [
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.limitResponse.queuing: Forbidden: must be nil if "
                "limited.limitResponse.type is not Limited",
                "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                "spec.limited.borrowingLimitPercent: Invalid value: -5: if specified, must be a "
                "non-negative integer",
            ],
        ),
        (
            level(type="Limited", limited={"limitResponse": {"type": "Queue"}}),
            [
                "spec.limited.limitResponse.queuing: Required value: must not be empty if "
                "limited.limitResponse.type is Limited"
            ],
        ),
        (
            level(type="Limited", limited={"limitResponse": {"type": "Wait"}}),
            [
                'spec.limited.limitResponse.type: Unsupported value: "Wait": supported values: '
                '"Queue", "Reject"'
            ],
        ),
        (
            level(**queued({"queues": 10_000_001, "handSize": -1, "queueLengthLimit": -2})),
            [
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -2: must be positive",
                "spec.limited.limitResponse.queuing.queues: Invalid value: 10000001: must not be "
                "greater than 10000000",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: -1: must be positive",
            ],
        ),
        (
            level(**queued({"queues": 128, "handSize": 10})),
            [
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy "
                "bits of deckSize 128 and handSize 10 should not be greater than 60"
            ],
        ),
        (
            level("exempt", type="Exempt", limited={}, exempt={"nominalConcurrencyShares": -1}),
            [
                "spec.limited: Forbidden: must be nil if the type is not Limited",
                "spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative number",
                "spec: Invalid value: "
                # The defaulted spec, as JSON (Go's %#v would print pointer addresses).
                '{"type":"Exempt","limited":{"nominalConcurrencyShares":30,"limitResponse":{},'
                '"lendablePercent":0},'
                '"exempt":{"nominalConcurrencyShares":-1,"lendablePercent":0}}'
                ": spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
            ],
        ),
    ],
)
def test_priority_level_validation_texts(
    api: ApiService, obj: PriorityLevelConfiguration, expected: list[str]
) -> None:
    assert causes(api, obj) == expected


def test_the_exempt_level_may_tune_its_exempt_section(api: ApiService) -> None:
    created = api.create(
        level(
            "exempt", type="Exempt", exempt={"nominalConcurrencyShares": 7, "lendablePercent": 20}
        )
    )
    assert created.spec.exempt.nominal_concurrency_shares == 7


def test_catch_all_level_spec_is_fixed(api: ApiService) -> None:
    [cause] = causes(api, level("catch-all", **queued({})))
    assert cause.endswith(": spec of 'catch-all' must equal the fixed value")


@pytest.mark.parametrize(
    ("deck", "hand", "bits"), [(64, 8, 48), (128, 6, 42), (128, 9, 63), (1, 1, 0)]
)
def test_required_entropy_bits(deck: int, hand: int, bits: int) -> None:
    """``shufflesharding.RequiredEntropyBits``: ceil(hand * log2(deck))."""
    assert required_entropy_bits(deck, hand) == bits


def test_status_conditions_need_distinct_types(api: ApiService) -> None:
    created = api.create(schema())
    conditions = serialization.from_dict(
        FlowSchema,
        {
            **serialization.to_dict(created),
            "status": {"conditions": [{"type": "A"}, {"type": "A"}, {}]},
        },
    )
    with pytest.raises(InvalidError) as caught:
        api.update_object(conditions, subresource="status")
    details = caught.value.status.details
    assert details is not None
    assert [f"{c.field}: {c.message}" for c in details.causes or ()] == [
        'status.conditions[1].type: Duplicate value: "A"',
        "status.conditions[2].type: Required value: must not be empty",
    ]
