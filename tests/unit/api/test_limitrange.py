"""LimitRange defaulting and validation.

Upstream rules: ``SetDefaults_LimitRangeItem`` (``pkg/apis/core/v1/defaults.go``: a
Container item's default limit is its max, its default request its default limit, else its
min) and ``ValidateLimitRange`` (``pkg/apis/core/validation/validation.go``; cases after
``TestValidateLimitRange`` in ``validation_test.go``), texts and field paths word for word.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.defaults import default_object
from kubeprio.api.kinds import for_model
from kubeprio.api.limitrange import LimitRange
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.validation import validate_create


def limit_range(*items: dict[str, Any], name: str = "lr") -> LimitRange:
    return from_dict(
        LimitRange,
        {"metadata": {"name": name, "namespace": "team-a"}, "spec": {"limits": list(items)}},
    )


def messages(lr: LimitRange) -> list[str]:
    return [str(error) for error in validate_create(lr, for_model(LimitRange))]


# --- defaulting -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            {"type": "Container", "max": {"cpu": "2"}},
            {"type": "Container", "max": {"cpu": "2"}, "default": {"cpu": "2"},
             "defaultRequest": {"cpu": "2"}},
        ),
        (
            {"type": "Container", "default": {"memory": "1Gi"}, "min": {"memory": "128Mi", "cpu": "100m"}},
            {"type": "Container", "min": {"memory": "128Mi", "cpu": "100m"},
             "default": {"memory": "1Gi"}, "defaultRequest": {"cpu": "100m", "memory": "1Gi"}},
        ),
        (
            {"type": "Container", "defaultRequest": {"cpu": "250m"}, "max": {"cpu": "1"}},
            {"type": "Container", "max": {"cpu": "1"}, "default": {"cpu": "1"},
             "defaultRequest": {"cpu": "250m"}},
        ),
        # Only Container items are defaulted; every list is rounded up to milli-units.
        ({"type": "Pod", "max": {"cpu": "2"}}, {"type": "Pod", "max": {"cpu": "2"}}),
        (
            {"type": "Container", "min": {"cpu": "0.0001"}},
            {"type": "Container", "min": {"cpu": "1m"}, "defaultRequest": {"cpu": "1m"}},
        ),
        ({"type": "Container"}, {"type": "Container"}),
    ],
    ids=["max-to-default-to-request", "default-then-min", "request-kept", "pod-untouched",
         "rounded-up", "nothing-to-fill"],
)  # fmt: skip
def test_container_items_get_upstream_defaults(item, expected):
    defaulted = default_object(limit_range(item))
    assert to_dict(defaulted)["spec"]["limits"] == [expected]


# --- validation -----------------------------------------------------------------------------

INVALID = [
    (
        {"type": "Container", "min": {"cpu": "200m"}, "max": {"cpu": "100m"}},
        'spec.limits[0].min[cpu]: Invalid value: "200m": min value 200m is greater than max '
        "value 100m",
    ),
    (
        {"type": "Container", "min": {"cpu": "200m"}, "defaultRequest": {"cpu": "100m"}},
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "100m": min value 200m is greater '
        "than default request value 100m",
    ),
    (
        {"type": "Container", "max": {"memory": "1Gi"}, "defaultRequest": {"memory": "2Gi"}},
        'spec.limits[0].defaultRequest[memory]: Invalid value: "2Gi": default request value 2Gi '
        "is greater than max value 1Gi",
    ),
    (
        {"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}},
        'spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is '
        "greater than default limit value 1",
    ),
    (
        {
            "type": "Container",
            "min": {"cpu": "2"},
            "default": {"cpu": "1"},
            "defaultRequest": {"cpu": "2"},
        },
        'spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default '
        "value 1",
    ),
    (
        # Upstream reports the max as the bad value of this rule.
        {
            "type": "Container",
            "max": {"cpu": "1"},
            "default": {"cpu": "2"},
            "defaultRequest": {"cpu": "1"},
        },
        'spec.limits[0].default[cpu]: Invalid value: "1": default value 2 is greater than max '
        "value 1",
    ),
    (
        {"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
        'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less '
        "than 1",
    ),
    (
        {
            "type": "Pod",
            "min": {"cpu": "1"},
            "max": {"cpu": "2"},
            "maxLimitRequestRatio": {"cpu": "3"},
        },
        'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "3": ratio 3 is greater than '
        "max/min = 2.000000",
    ),
    (
        {
            "type": "Container",
            "default": {"hugepages-2Mi": "4Mi"},
            "defaultRequest": {"hugepages-2Mi": "2Mi"},
        },
        'spec.limits[0].defaultRequest[hugepages-2Mi]: Invalid value: "2Mi": default value 4Mi '
        "must equal to defaultRequest value 2Mi in hugepages-2Mi",
    ),
    (
        {"type": "Pod", "default": {"cpu": "1"}},
        "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
    ),
    (
        {"type": "Pod", "defaultRequest": {"cpu": "1"}},
        "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'",
    ),
    (
        {"type": "Foo", "max": {"cpu": "1"}},
        'spec.limits[0].type: Invalid value: "Foo": must be a standard limit type or fully '
        "qualified",
    ),
    (
        {"type": "Pod", "max": {"storage": "1Gi"}},
        'spec.limits[0].max[storage]: Invalid value: "storage": must be a standard resource for '
        "containers",
    ),
    (
        {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
        "spec.limits[0].limits: Required value: either minimum or maximum storage value is "
        "required, but neither was provided",
    ),
]


@pytest.mark.parametrize(
    ("item", "message"),
    INVALID,
    ids=["min>max", "min>defaultRequest", "defaultRequest>max", "defaultRequest>default",
         "min>default", "default>max", "ratio<1", "ratio>max/min", "hugepages-not-equal",
         "pod-default", "pod-defaultRequest", "unknown-type", "pod-storage",
         "pvc-needs-storage"],
)  # fmt: skip
def test_each_broken_rule_has_upstreams_text(item, message):
    # Validation runs on the defaulted object, as the API server does (so a rule broken by
    # a value defaulting copied may be reported more than once, as upstream reports it).
    assert message in messages(default_object(limit_range(item)))


def test_a_type_may_appear_once():
    lr = limit_range({"type": "Container"}, {"type": "Container"})
    assert messages(lr) == ['spec.limits[1].type: Duplicate value: "Container"']


@pytest.mark.parametrize(
    "item",
    [
        {"type": "Container", "min": {"cpu": "100m"}, "defaultRequest": {"cpu": "200m"},
         "default": {"cpu": "500m"}, "max": {"cpu": "1"}, "maxLimitRequestRatio": {"cpu": "10"}},
        {"type": "Pod", "max": {"cpu": "4", "memory": "8Gi"}, "min": {"memory": "1Mi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}},
        {"type": "Container", "default": {"nvidia.com/gpu": "1"},
         "defaultRequest": {"nvidia.com/gpu": "1"}},
        {"type": "example.com/Custom", "max": {"example.com/widgets": "3"}},
    ],
    ids=["container-ordered", "pod", "pvc", "extended-equal", "qualified-type"],
)  # fmt: skip
def test_valid_limit_ranges_pass(item):
    assert messages(default_object(limit_range(item))) == []


def test_the_api_answers_422_with_every_cause(api):
    from kubeprio.api.core import Namespace
    from kubeprio.api.meta import ObjectMeta

    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    lr = limit_range({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}, name="x")
    with pytest.raises(errors.InvalidError) as caught:
        api.create_object(lr)
    # Defaulting made default = defaultRequest = max (1) first, so min also exceeds both.
    assert caught.value.message == (
        'LimitRange "x" is invalid: [spec.limits[0].min[cpu]: Invalid value: "2": min value 2 '
        'is greater than max value 1, spec.limits[0].defaultRequest[cpu]: Invalid value: "1": '
        "min value 2 is greater than default request value 1, spec.limits[0].default[cpu]: "
        'Invalid value: "2": min value 2 is greater than default value 1]'
    )
