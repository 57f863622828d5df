"""API Priority and Fairness classification and its response headers.

Upstream rules checked here (``k8s.io/apiserver/pkg/util/flowcontrol``, v1.32):

* ``rule.go``: subjects (User/Group by name or ``*``, ServiceAccount by
  ``system:serviceaccount:<ns>:<name>`` or any name in the namespace), resource rules
  (verb, ``resource/subresource``, group, namespace or ``clusterScope``; a list is a
  wildcard only when it is exactly ``["*"]``), non-resource rules (exact path, ``*``, or
  a ``prefix/*``);
* ``apf_controller.go`` ``digestFlowSchemasLocked``: schemas naming a missing level are
  skipped; order by ``matchingPrecedence`` then name; missing mandatory schemas supplied;
* ``filters/priority-and-fairness.go``: ``X-Kubernetes-PF-FlowSchema-UID`` and
  ``X-Kubernetes-PF-PriorityLevel-UID`` on every classified response (a 403 too, as the
  filter runs before authorization; not a 401), none for long-running requests other
  than watches (``BasicLongRunningRequestCheck``: exec, attach, portforward, log, proxy).
"""

from __future__ import annotations

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.api import serialization
from kubeprio.api.flowcontrol import FlowSchema, PriorityLevelConfiguration
from kubeprio.api.flowcontrolbootstrap import (
    MANDATORY_LEVELS,
    MANDATORY_SCHEMAS,
    SUGGESTED_LEVELS,
    SUGGESTED_SCHEMAS,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.apiserver.authz import Attributes
from kubeprio.apiserver.flowclassifier import FlowClassifier, matches_url
from kubeprio.apiserver.service import ApiService
from tests.unit.apiserver.http_helpers import ADMIN, BOB, tenancy_client

AUTHENTICATED = "system:authenticated"


def with_uid(obj, uid: str):
    return evolve(obj, metadata=evolve(obj.metadata, uid=uid))


def bootstrap() -> FlowClassifier:
    """The v1.32 bootstrap configuration, each object's UID its name."""
    levels = [with_uid(o, o.metadata.name) for o in (*MANDATORY_LEVELS, *SUGGESTED_LEVELS)]
    schemas = [with_uid(o, o.metadata.name) for o in (*MANDATORY_SCHEMAS, *SUGGESTED_SCHEMAS)]
    return FlowClassifier(schemas, levels)


def user(name: str, *groups: str) -> UserInfo:
    return UserInfo(name=name, groups=(*groups, AUTHENTICATED))


def resource(
    who: UserInfo, verb: str, resource: str, namespace: str = "", group: str = "", sub: str = ""
) -> Attributes:
    return Attributes(
        user=who, verb=verb, group=group, resource=resource, subresource=sub, namespace=namespace
    )


def path(who: UserInfo, verb: str, url: str) -> Attributes:
    return Attributes(user=who, verb=verb, resource_request=False, path=url)


@pytest.mark.parametrize(
    ("attrs", "schema", "level"),
    [
        (resource(user("admin", "system:masters"), "delete", "pods", "x"), "exempt", "exempt"),
        (path(user("bob"), "get", "/healthz"), "probes", "exempt"),
        (path(user("bob"), "get", "/readyz"), "probes", "exempt"),
        (path(user("bob"), "post", "/healthz"), "global-default", "global-default"),
        (resource(user("bob"), "list", "pods", "default"), "global-default", "global-default"),
        (
            resource(user("system:kube-scheduler"), "update", "leases", "kube-system", "coordination.k8s.io"),
            "system-leader-election",
            "leader-election",
        ),
        (
            resource(user("system:kube-scheduler"), "create", "bindings", "default"),
            "kube-scheduler",
            "workload-high",
        ),
        (
            resource(user("system:kube-controller-manager"), "update", "endpoints", "default"),
            "endpoint-controller",
            "workload-high",
        ),
        (
            resource(user("system:node:n1", "system:nodes"), "patch", "nodes", sub="status"),
            "system-node-high",
            "node-high",
        ),
        (
            resource(user("system:node:n1", "system:nodes"), "get", "pods", "default"),
            "system-nodes",
            "system",
        ),
        (
            resource(
                user("system:serviceaccount:kube-system:ctl", "system:serviceaccounts"),
                "get",
                "configmaps",
                "kube-system",
            ),
            "workload-leader-election",
            "leader-election",
        ),
        (
            resource(
                user("system:serviceaccount:kube-system:ctl", "system:serviceaccounts"), "list", "pods"
            ),
            "kube-system-service-accounts",
            "workload-high",
        ),
        (
            resource(
                user("system:serviceaccount:shop:web", "system:serviceaccounts"), "list", "pods", "shop"
            ),
            "service-accounts",
            "workload-low",
        ),
        # A service account of a namespace whose name starts like kube-system is not in it.
        (
            resource(user("system:serviceaccount:kube-systemx:a"), "list", "pods", "kube-systemx"),
            "global-default",
            "global-default",
        ),
        (path(UserInfo(name="anon", groups=("system:unauthenticated",)), "get", "/version"),
         "global-default", "global-default"),
    ],
)  # fmt: skip
def test_bootstrap_classification(attrs: Attributes, schema: str, level: str) -> None:
    found = bootstrap().classify(attrs)
    assert (found.flow_schema, found.priority_level) == (schema, level)
    assert (found.flow_schema_uid, found.priority_level_uid) == (schema, level)


@pytest.mark.parametrize(
    ("patterns", "url", "matches"),
    [
        (["*"], "/anything", True),
        (["/apis"], "/apis", True),
        (["/apis"], "/apis/apps", True),  # "/apis" is a prefix "/apis/"
        (["/apis/*"], "/apis/apps/v1", True),
        (["/apis/*"], "/apis", False),
        (["/api"], "/apis", False),
        (["/healthz"], "/healthz/etcd", True),
    ],
)
def test_non_resource_url_matching(patterns: list[str], url: str, matches: bool) -> None:
    """``matchPolicyRuleNonResourceURL``."""
    assert matches_url(patterns, url) is matches


def custom(name: str, level: str, precedence: int, rule: dict[str, object]) -> FlowSchema:
    return serialization.from_dict(
        FlowSchema,
        {
            "metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {
                "priorityLevelConfiguration": {"name": level},
                "matchingPrecedence": precedence,
                "rules": [rule],
            },
        },
    )


def plc(name: str) -> PriorityLevelConfiguration:
    return PriorityLevelConfiguration(metadata=ObjectMeta(name=name, uid=f"uid-{name}"))


BOB_PODS = {
    "subjects": [{"kind": "User", "user": {"name": "bob"}}],
    "resourceRules": [
        {"verbs": ["*"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["shop"]}
    ],
}


def test_precedence_then_name_decides_and_dangling_schemas_are_skipped() -> None:
    classifier = FlowClassifier(
        [
            custom("b-second", "low", 100, BOB_PODS),
            custom("a-first", "high", 100, BOB_PODS),
            custom("dangling", "missing", 50, BOB_PODS),
        ],
        [plc("low"), plc("high"), plc("catch-all"), plc("exempt")],
    )
    found = classifier.classify(resource(user("bob"), "get", "pods", "shop"))
    assert (found.flow_schema, found.priority_level_uid) == ("a-first", "uid-high")
    # Nothing else matches: the supplied mandatory catch-all (no object: no UID).
    other = classifier.classify(resource(user("bob"), "get", "pods", "elsewhere"))
    assert (other.flow_schema, other.flow_schema_uid, other.priority_level_uid) == (
        "catch-all",
        "",
        "uid-catch-all",
    )
    assert [s.metadata.name for s in classifier.schemas] == [
        "exempt",
        "a-first",
        "b-second",
        "catch-all",
    ]


@pytest.mark.parametrize(
    ("rule", "attrs", "matches"),
    [
        # A cluster-scoped request needs clusterScope.
        (BOB_PODS, resource(user("bob"), "list", "pods"), False),
        # Subresources are matched as resource/subresource.
        (BOB_PODS, resource(user("bob"), "get", "pods", "shop", sub="log"), False),
        # A list is a wildcard only when it is exactly ["*"].
        (
            {**BOB_PODS, "resourceRules": [{"verbs": ["get", "*"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}]},
            resource(user("bob"), "list", "pods", "shop"),
            False,
        ),
        (
            {"subjects": [{"kind": "Group", "group": {"name": "*"}}], "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]},
            path(user("anyone"), "get", "/version"),
            True,
        ),
        (
            {"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "shop", "name": "web"}}], "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]},
            path(user("system:serviceaccount:shop:web"), "get", "/version"),
            True,
        ),
    ],
)  # fmt: skip
def test_rule_matching(rule: dict[str, object], attrs: Attributes, matches: bool) -> None:
    classifier = FlowClassifier([custom("mine", "mine", 10, rule)], [plc("mine")])
    assert (classifier.classify(attrs).flow_schema == "mine") is matches


# --- the headers over HTTP ---------------------------------------------------------------


@pytest.fixture
def http(api: ApiService):
    client = tenancy_client(api)
    client.app.state.kube.flow_classifier = bootstrap()  # type: ignore[attr-defined]
    return client


def test_responses_carry_the_pf_headers(http) -> None:
    admin = http.get("/api/v1/namespaces", headers=ADMIN)
    assert admin.headers["x-kubernetes-pf-flowschema-uid"] == "exempt"
    assert admin.headers["x-kubernetes-pf-prioritylevel-uid"] == "exempt"
    # Bob is refused (403), but the filter classified him first.
    refused = http.get("/api/v1/namespaces/team-a/pods", headers=BOB)
    assert refused.status_code == 403
    assert refused.headers["x-kubernetes-pf-flowschema-uid"] == "global-default"
    probe = http.get("/readyz", headers=BOB)
    assert probe.headers["x-kubernetes-pf-flowschema-uid"] == "probes"
    assert probe.headers["x-kubernetes-pf-prioritylevel-uid"] == "exempt"


def test_unauthenticated_and_long_running_requests_carry_none(http) -> None:
    unauthenticated = http.get("/api/v1/namespaces")
    assert unauthenticated.status_code == 401
    assert "x-kubernetes-pf-flowschema-uid" not in unauthenticated.headers
    logs = http.get("/api/v1/namespaces/team-a/pods/nope/log", headers=ADMIN)
    assert logs.status_code == 404
    assert "x-kubernetes-pf-flowschema-uid" not in logs.headers


def test_without_a_configuration_there_are_no_headers(api: ApiService) -> None:
    response = tenancy_client(api).get("/api/v1/namespaces", headers=ADMIN)
    assert response.status_code == 200
    assert "x-kubernetes-pf-flowschema-uid" not in response.headers
