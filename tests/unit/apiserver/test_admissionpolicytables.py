"""The ValidatingAdmissionPolicy and Binding Tables: upstream v1.32
``printValidatingAdmissionPolicy`` (VALIDATIONS, PARAMKIND ``apiVersion/kind`` or
``<unset>``) and ``printValidatingAdmissionPolicyBinding`` (PARAMREF ``ns/name``,
``*/name``, the selector's generated ``String()``, or ``<unset>``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import serialization
from kubeprio.api.admissionpolicy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kubeprio.apiserver.admissionpolicytables import print_binding, print_policy


@pytest.mark.parametrize(
    ("spec", "cells"),
    [
        ({"validations": [{"expression": "true"}, {"expression": "false"}]}, [2, "<unset>"]),
        ({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}, [0, "v1/ConfigMap"]),
    ],
)
def test_policy_row(spec: dict[str, Any], cells: list[object]) -> None:
    policy = serialization.from_dict(
        ValidatingAdmissionPolicy, {"metadata": {"name": "p"}, "spec": spec}
    )
    row, _ = print_policy(policy, 0.0)
    assert row[:3] == ["p", *cells]


@pytest.mark.parametrize(
    ("param_ref", "shown"),
    [
        (None, "<unset>"),
        ({"name": "limits"}, "*/limits"),
        ({"name": "limits", "namespace": "team-a"}, "team-a/limits"),
        ({"selector": {"matchLabels": {"b": "2", "a": "1"},
                       "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}},
         "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:"
         "[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"),
    ],
)  # fmt: skip
def test_binding_row(param_ref: dict[str, Any] | None, shown: str) -> None:
    spec: dict[str, Any] = {"policyName": "p"}
    if param_ref is not None:
        spec["paramRef"] = param_ref
    binding = serialization.from_dict(
        ValidatingAdmissionPolicyBinding, {"metadata": {"name": "b"}, "spec": spec}
    )
    row, _ = print_binding(binding, 0.0)
    assert row[:3] == ["b", "p", shown]
