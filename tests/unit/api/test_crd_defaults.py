"""CustomResourceDefinition defaults (``api.crddefaults``).

Rules: ``apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go``
(``SetDefaults_CustomResourceDefinitionSpec``: singular is the kind in lower case,
listKind is ``<kind>List``, conversion is ``{strategy: None}``; ``SetDefaults_ServiceReference``:
port 443).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import manifest
from kubeprio.api.defaults import default_object
from kubeprio.api.serialization import to_dict

WEBHOOK: dict[str, Any] = {
    "strategy": "Webhook",
    "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "conv", "namespace": "ns"}},
    },
}


def _crd(names: dict[str, Any], conversion: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "group": "example.com",
        "names": names,
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True}],
    }
    if conversion is not None:
        spec["conversion"] = conversion
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": spec,
    }


def _defaulted_spec(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = to_dict(default_object(manifest.decode_request(doc)))["spec"]
    return spec


@pytest.mark.parametrize(
    ("names", "conversion", "want_names", "want_conversion"),
    [
        (
            {"plural": "widgets", "kind": "Widget"},
            None,
            {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            {"strategy": "None"},
        ),
        (
            {"plural": "widgets", "singular": "w", "kind": "Widget", "listKind": "Widgets"},
            {"strategy": "None"},
            {"plural": "widgets", "singular": "w", "kind": "Widget", "listKind": "Widgets"},
            {"strategy": "None"},
        ),
        (  # no kind: nothing to derive (validation reports the missing kind)
            {"plural": "widgets"},
            None,
            {"plural": "widgets"},
            {"strategy": "None"},
        ),
        (
            {"plural": "widgets", "kind": "Widget"},
            WEBHOOK,
            {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"name": "conv", "namespace": "ns", "port": 443}},
                },
            },
        ),
    ],
    ids=["bare", "given", "no-kind", "webhook-port"],
)
def test_crd_defaults(
    names: dict[str, Any],
    conversion: dict[str, Any] | None,
    want_names: dict[str, Any],
    want_conversion: dict[str, Any],
) -> None:
    spec = _defaulted_spec(_crd(names, conversion))
    assert spec["names"] == want_names
    assert spec["conversion"] == want_conversion


@given(kind=st.from_regex(r"[A-Z][a-z]{0,8}", fullmatch=True))
def test_crd_defaulting_is_idempotent(kind: str) -> None:
    doc = _crd({"plural": kind.lower() + "s", "kind": kind})
    once = default_object(manifest.decode_request(doc))
    assert default_object(once) == once
