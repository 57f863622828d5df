"""ConfigMap, Secret and ServiceAccount validation and defaulting, with upstream's texts.

Rules (``pkg/apis/core/validation/validation.go``: ``ValidateConfigMap``,
``ValidateConfigMapUpdate``, ``ValidateSecret``, ``ValidateSecretUpdate``,
``ValidateServiceAccount``; apimachinery ``IsConfigMapKey``; ``SetDefaults_Secret`` and
``Convert_v1_Secret_To_core_Secret``; the Secret and ServiceAccount registry strategies'
warnings) on objects decoded from their JSON form and defaulted, as the API server sees
them.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kubeprio.api import kinds, validation
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.defaults import default_object
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import from_dict, to_dict
from kubeprio.api.serviceaccount import ServiceAccount

KEY_ERROR = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"
MIB = 1024 * 1024


def config_map(**body: Any) -> ConfigMap:
    obj = from_dict(ConfigMap, {"metadata": {"name": "cm", "namespace": "default"}, **body})
    return default_object(obj)  # type: ignore[return-value]


def secret(**body: Any) -> Secret:
    obj = from_dict(Secret, {"metadata": {"name": "s", "namespace": "default"}, **body})
    return default_object(obj)  # type: ignore[return-value]


def created(obj: Any) -> list[str]:
    return [str(e) for e in validation.validate_create(obj, kinds.for_object(obj))]


def updated(new: Any, old: Any) -> list[str]:
    return [str(e) for e in validation.validate_update(new, old, kinds.for_object(new))]


B64 = {"a": "YQ=="}  # b"a"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"data": {"a.b_C-1": "x"}, "binaryData": {"bin": "AAE="}}, []),
        # IsConfigMapKey: the character set (a key becomes a file name).
        ({"data": {"a b": "x"}}, [f'data[a b]: Invalid value: "a b": {KEY_ERROR}']),
        ({"binaryData": {"a/b": "AA=="}}, [f'binaryData[a/b]: Invalid value: "a/b": {KEY_ERROR}']),
        # ... no "." / ".." / "..x" (hasChDirPrefix).
        ({"data": {".": "x"}}, ["data[.]: Invalid value: \".\": must not be '.'"]),
        ({"data": {"..": "x"}}, ["data[..]: Invalid value: \"..\": must not be '..'"]),
        ({"data": {"..x": "x"}}, ["data[..x]: Invalid value: \"..x\": must not start with '..'"]),
        # ... at most 253 characters (DNS1123SubdomainMaxLength).
        (
            {"data": {"k" * 254: "x"}},
            [
                f'data[{"k" * 254}]: Invalid value: "{"k" * 254}": must be no more than 253 characters'
            ],
        ),
        # A key in both maps is reported on data.
        (
            {"data": {"k": "x"}, "binaryData": {"k": "AA=="}},
            ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
        ),
        # MaxSecretSize over both maps, on the empty path.
        (
            {"data": {"a": "x" * (MIB // 2)}, "binaryData": {"b": b64(b"\0" * (MIB // 2 + 1))}},
            [": Too long: may not be more than 1048576 bytes"],
        ),
    ],
    ids=["valid", "space", "slash", "dot", "dotdot", "dotdot-prefix", "long", "both", "size"],
)
def test_config_map_create(body, expected):
    assert created(config_map(**body)) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"data": {"a": "1"}}, {"data": {"a": "2"}}, []),
        ({"immutable": True, "data": {"a": "1"}}, {"immutable": True, "data": {"a": "1"}}, []),
        (
            {"immutable": True, "data": {"a": "1"}},
            {"immutable": True, "data": {"a": "2"}},
            [f"data: {IMMUTABLE}"],
        ),
        (
            {"immutable": True, "binaryData": {"a": "AA=="}},
            {"immutable": True, "binaryData": {"a": "AQ=="}},
            [f"binaryData: {IMMUTABLE}"],
        ),
        # Unsetting immutable is refused too, even with the same data.
        (
            {"immutable": True, "data": {"a": "1"}},
            {"data": {"a": "1"}},
            [f"immutable: {IMMUTABLE}"],
        ),
        (
            {"immutable": True, "data": {"a": "1"}},
            {"immutable": False, "data": {"a": "2"}},
            [f"immutable: {IMMUTABLE}", f"data: {IMMUTABLE}"],
        ),
        # Immutable may be set on a mutable ConfigMap at any time.
        ({"data": {"a": "1"}}, {"immutable": True, "data": {"a": "2"}}, []),
    ],
    ids=["mutable", "same", "data", "binary", "unset", "both", "set"],
)
def test_config_map_update(old, new, expected):
    assert updated(config_map(**new), config_map(**old)) == expected


def test_secret_defaults_type_and_merges_string_data_into_data():
    # SetDefaults_Secret, then the v1 -> internal conversion: stringData overwrites data's key.
    obj = secret(data={"a": "b2xk", "b": "Yg=="}, stringData={"a": "new", "c": "ü"})
    assert obj.type == "Opaque"
    assert obj.data == {"a": b"new", "b": b"b", "c": "ü".encode()}
    wire = to_dict(obj)
    assert "stringData" not in wire
    assert wire["data"] == {"a": "bmV3", "b": "Yg==", "c": "w7w="}
    # An explicit null is not kept either.
    assert "stringData" not in to_dict(secret(stringData=None))


TLS = "kubernetes.io/tls"


@pytest.mark.parametrize(
    ("body", "annotations", "expected"),
    [
        ({"data": B64}, None, []),
        ({"type": "example.com/custom"}, None, []),
        ({"data": {"a b": "YQ=="}}, None, [f'data[a b]: Invalid value: "a b": {KEY_ERROR}']),
        (
            {"stringData": {"big": "x" * (MIB + 1)}},
            None,
            ["data: Too long: may not be more than 1048576 bytes"],
        ),
        (
            {"type": "kubernetes.io/service-account-token"},
            None,
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
        (
            {"type": "kubernetes.io/service-account-token"},
            {"kubernetes.io/service-account.name": "bot"},
            [],
        ),
        ({"type": "kubernetes.io/dockercfg"}, None, ["data[.dockercfg]: Required value"]),
        (
            {"type": "kubernetes.io/dockerconfigjson", "stringData": {".dockerconfigjson": "[]"}},
            None,
            [
                'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: '
                "cannot unmarshal array into Go value of type map[string]interface {}"
            ],
        ),
        (
            {"type": "kubernetes.io/dockercfg", "stringData": {".dockercfg": '{"a" 1}'}},
            None,
            [
                'data[.dockercfg]: Invalid value: "<secret contents redacted>": invalid '
                "character '1' after object key"
            ],
        ),
        (
            {"type": "kubernetes.io/dockerconfigjson", "stringData": {".dockerconfigjson": "{}"}},
            None,
            [],
        ),
        (
            {"type": "kubernetes.io/basic-auth"},
            None,
            ["data[username]: Required value", "data[password]: Required value"],
        ),
        # Either basic-auth key may be empty, but one must be present.
        ({"type": "kubernetes.io/basic-auth", "stringData": {"password": ""}}, None, []),
        ({"type": "kubernetes.io/ssh-auth"}, None, ["data[ssh-privatekey]: Required value"]),
        (
            {"type": "kubernetes.io/ssh-auth", "stringData": {"ssh-privatekey": ""}},
            None,
            ["data[ssh-privatekey]: Required value"],
        ),
        (
            {"type": TLS, "stringData": {"tls.key": "k"}},
            None,
            ["data[tls.crt]: Required value"],
        ),
        ({"type": TLS}, None, ["data[tls.crt]: Required value", "data[tls.key]: Required value"]),
    ],
    ids=[
        "opaque",
        "custom-type",
        "bad-key",
        "size",
        "token-no-annotation",
        "token",
        "dockercfg-missing",
        "dockerconfigjson-array",
        "dockercfg-syntax",
        "dockerconfigjson",
        "basic-auth-missing",
        "basic-auth-empty-password",
        "ssh-missing",
        "ssh-empty",
        "tls-no-cert",
        "tls-missing",
    ],
)
def test_secret_create(body, annotations, expected):
    obj = secret(**body)
    if annotations:
        obj = secret(
            **body, metadata={"name": "s", "namespace": "default", "annotations": annotations}
        )
    assert created(obj) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"data": B64}, {"data": {"a": "Yg=="}}, []),
        (
            {"type": "Opaque"},
            {"type": "example.com/other"},
            ['type: Invalid value: "example.com/other": field is immutable'],
        ),
        ({"immutable": True, "data": B64}, {"immutable": True, "data": B64}, []),
        (
            {"immutable": True, "data": B64},
            {"immutable": True, "stringData": {"a": "changed"}},
            [f"data: {IMMUTABLE}"],
        ),
        ({"immutable": True, "data": B64}, {"data": B64}, [f"immutable: {IMMUTABLE}"]),
    ],
    ids=["mutable", "type", "immutable-same", "immutable-data", "immutable-unset"],
)
def test_secret_update(old, new, expected):
    assert updated(secret(**new), secret(**old)) == expected


def test_service_account_checks_only_its_metadata():
    account = from_dict(
        ServiceAccount,
        {
            "metadata": {"name": "Bot", "namespace": "default"},
            "secrets": [{"name": "x", "uid": "u"}],
            "imagePullSecrets": [{"name": "pull"}],
            "automountServiceAccountToken": False,
        },
    )
    assert created(account) == [
        'metadata.name: Invalid value: "Bot": a lowercase RFC 1123 subdomain must consist of '
        "lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]


ENFORCE = "kubernetes.io/enforce-mountable-secrets"
ENFORCE_WARNING = (
    "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; "
    "prefer separate namespaces to isolate access to mounted secrets"
)


def account(annotations: dict[str, str] | None = None) -> ServiceAccount:
    meta: dict[str, Any] = {"name": "bot", "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = annotations
    return from_dict(ServiceAccount, {"metadata": meta})


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        (account(), None, []),
        (account({ENFORCE: "true"}), None, [ENFORCE_WARNING]),
        # warnIfHasEnforceMountableSecretsAnnotation: only a write that sets it anew warns.
        (account({ENFORCE: "true"}), account(), [ENFORCE_WARNING]),
        (account({ENFORCE: "true"}), account({ENFORCE: "false"}), []),
    ],
    ids=["none", "create", "update-adds", "update-keeps"],
)
def test_enforce_mountable_secrets_is_deprecated(new, old, expected):
    assert validation.warnings(new, old) == expected
