"""Service account token claims and the user they make (``apiserver.tokenclaims``).

Upstream rules checked: ``Claims`` (``pkg/serviceaccount/claims.go``, v1.32: ``sub`` is the
account's user name, ``iat`` = ``nbf`` = now, ``exp`` = now + lifetime, a ``jti``, the
``kubernetes.io`` claim with namespace, account, and the bound pod (with its node), secret
or node; ``warnafter`` only for extended tokens; a secret with a pod or node is an internal
error), go-jose's payload form (keys sorted, ``aud`` always a list, NumericDates as whole
seconds, its ``Audience`` reading a plain string too) and ``ServiceAccountInfo.UserInfo``
(``staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go``: user name,
groups, extras only when set, pod extras only with both name and uid, node uid only with
a node name, ``JTI=`` credential id).
"""

from __future__ import annotations

import json

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.apiserver import tokenclaims
from kubeprio.apiserver.tokenclaims import Ref, ServiceAccountInfo

SA = Ref("deployer", "sa-uid")
NOW = 1_700_000_000


def _claims(**bound):
    arguments = {
        "namespace": "team-a",
        "service_account": SA,
        "pod": None,
        "secret": None,
        "node": None,
        "expiration_seconds": 3600,
        "warn_after_seconds": 0,
        "audiences": ("https://kubernetes.default.svc.cluster.local",),
        "now": NOW,
        "jti": "8a4f-jti",
    }
    arguments.update(bound)
    return tokenclaims.claims(**arguments)


def test_an_unbound_token_is_written_as_go_jose_writes_it():
    public, private = _claims()
    body = tokenclaims.payload(
        tokenclaims.PublicClaims(**{**_as_dict(public), "issuer": "https://issuer"}), private
    )
    assert json.dumps(body, separators=(",", ":")) == (
        '{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1700003600,'
        '"iat":1700000000,"iss":"https://issuer","jti":"8a4f-jti",'
        '"kubernetes.io":{"namespace":"team-a","serviceaccount":{"name":"deployer",'
        '"uid":"sa-uid"}},"nbf":1700000000,"sub":"system:serviceaccount:team-a:deployer"}'
    )


def _as_dict(public):
    return {field: getattr(public, field) for field in public.__dataclass_fields__}


@pytest.mark.parametrize(
    ("bound", "kubernetes"),
    [
        ({"pod": Ref("web-1", "pod-uid"), "node": Ref("node-1", "node-uid")},
         {"namespace": "team-a", "node": {"name": "node-1", "uid": "node-uid"},
          "pod": {"name": "web-1", "uid": "pod-uid"},
          "serviceaccount": {"name": "deployer", "uid": "sa-uid"}}),
        ({"pod": Ref("web-1", "pod-uid"), "node": Ref("gone", "")},
         {"namespace": "team-a", "node": {"name": "gone"}, "pod": {"name": "web-1", "uid": "pod-uid"},
          "serviceaccount": {"name": "deployer", "uid": "sa-uid"}}),
        ({"secret": Ref("s", "secret-uid")},
         {"namespace": "team-a", "secret": {"name": "s", "uid": "secret-uid"},
          "serviceaccount": {"name": "deployer", "uid": "sa-uid"}}),
        ({"node": Ref("node-1", "node-uid")},
         {"namespace": "team-a", "node": {"name": "node-1", "uid": "node-uid"},
          "serviceaccount": {"name": "deployer", "uid": "sa-uid"}}),
        ({"pod": Ref("web-1", "pod-uid"), "expiration_seconds": 31536000, "warn_after_seconds": 3607},
         {"namespace": "team-a", "pod": {"name": "web-1", "uid": "pod-uid"},
          "serviceaccount": {"name": "deployer", "uid": "sa-uid"}, "warnafter": NOW + 3607}),
    ],
    ids=["pod-on-node", "pod-on-a-missing-node", "secret", "node", "extended"],
)  # fmt: skip
def test_the_private_claim_names_the_bound_object(bound, kubernetes):
    public, private = _claims(**bound)
    body = tokenclaims.payload(public, private)
    assert body["kubernetes.io"] == kubernetes
    assert list(body["kubernetes.io"]) == sorted(body["kubernetes.io"])
    assert body["exp"] == NOW + bound.get("expiration_seconds", 3600)
    assert (body["iat"], body["nbf"]) == (NOW, NOW)


def test_a_token_cannot_be_bound_to_a_secret_and_a_pod():
    with pytest.raises(ValueError, match="token can only be bound to one object type"):
        _claims(secret=Ref("s", "u"), pod=Ref("p", "u"))


def test_a_payload_reads_back_as_it_was_written():
    public, private = _claims(pod=Ref("web-1", "pod-uid"), node=Ref("node-1", "node-uid"))
    parsed = tokenclaims.parse(tokenclaims.payload(public, private))
    assert parsed.private == private
    assert (parsed.subject, parsed.audiences, parsed.jti) == (
        public.subject,
        public.audiences,
        public.jti,
    )
    assert (parsed.issued_at, parsed.not_before, parsed.expiry) == (NOW, NOW, NOW + 3600)


def test_a_single_audience_string_and_fractional_times_read_as_go_jose_reads_them():
    parsed = tokenclaims.parse({"aud": "api", "exp": 12.9, "kubernetes.io": {}})
    assert (parsed.audiences, parsed.expiry, parsed.issued_at) == (("api",), 12, None)


@pytest.mark.parametrize(
    "body",
    [{"aud": 5}, {"exp": "soon"}, {"exp": True}, {"kubernetes.io": []},
     {"kubernetes.io": {"pod": "web-1"}}, {"sub": 7}],
    ids=["aud-number", "exp-string", "exp-bool", "private-list", "ref-string", "sub-number"],
)  # fmt: skip
def test_claims_of_the_wrong_type_are_malformed(body):
    with pytest.raises(tokenclaims.MalformedClaimsError):
        tokenclaims.parse(body)


GROUPS = ("system:serviceaccounts", "system:serviceaccounts:team-a")


@pytest.mark.parametrize(
    ("info", "extra"),
    [
        (ServiceAccountInfo("team-a", "deployer", "sa-uid"), ()),
        (ServiceAccountInfo("team-a", "deployer", "sa-uid", credential_id="JTI=x"),
         (("authentication.kubernetes.io/credential-id", ("JTI=x",)),)),
        (ServiceAccountInfo("team-a", "deployer", "sa-uid", pod_name="p", pod_uid="pu",
                            node_name="n", node_uid="nu", credential_id="JTI=x"),
         (("authentication.kubernetes.io/credential-id", ("JTI=x",)),
          ("authentication.kubernetes.io/node-name", ("n",)),
          ("authentication.kubernetes.io/node-uid", ("nu",)),
          ("authentication.kubernetes.io/pod-name", ("p",)),
          ("authentication.kubernetes.io/pod-uid", ("pu",)))),
        (ServiceAccountInfo("team-a", "deployer", "sa-uid", pod_name="p"), ()),
        (ServiceAccountInfo("team-a", "deployer", "sa-uid", node_name="n"),
         (("authentication.kubernetes.io/node-name", ("n",)),)),
    ],
    ids=["plain", "credential-id", "pod-and-node", "pod-without-uid", "node-without-uid"],
)  # fmt: skip
def test_the_user_of_a_token(info, extra):
    assert info.user_info(extra_groups=("system:authenticated",)) == UserInfo(
        "system:serviceaccount:team-a:deployer", (*GROUPS, "system:authenticated"), "sa-uid", extra
    )


def test_the_credential_id_is_the_jti_prefixed():
    assert tokenclaims.credential_id_for_jti("abc") == "JTI=abc"
    assert tokenclaims.credential_id_for_jti("") == ""
