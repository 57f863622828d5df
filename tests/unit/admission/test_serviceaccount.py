"""The ServiceAccount admission plugin (upstream's, in ``kubeprio serve``).

Rules and texts from ``plugin/pkg/admission/serviceaccount/admission.go`` (v1.32); cases
follow its ``admission_test.go`` (``TestIgnores*``, ``TestRejectsMirrorPod*``,
``TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens``,
``TestDeniesInvalidServiceAccount``, ``TestAutomountsAPIToken``,
``TestRespectsExistingMount``, ``TestAllowsReferencedSecret``,
``TestRejectsUnreferencedSecretVolumes``,
``TestAllowUnreferencedSecretVolumesForPermissiveSAs``, the image pull secret tests).
Upstream's tests run ``Admit`` twice (``WithReinvocationTesting``); here every admitted pod
is admitted again and must come back equal. Pods and accounts are written as JSON, as
users write them, because the fields the plugin reads (volumes, env, pull secrets) are
ones kubeprio keeps verbatim.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kubeprio.admission.chain import AdmissionOutcome
from kubeprio.admission.defaults import default_chain
from kubeprio.admission.serviceaccount import ServiceAccountPlugin, token_volume_source
from kubeprio.api import errors, manifest, names
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.serialization import to_dict
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver.service import ApiService
from kubeprio.store.interface import KeyPrefix
from kubeprio.store.memory import MemoryStore
from tests.builders import admission_request, stored_listers
from tests.conftest import ManualClock

NS = "myns"
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
MIRROR = {"kubernetes.io/config.mirror": "true"}
ENFORCE = {"kubernetes.io/enforce-mountable-secrets": "true"}


def account(
    name: str = "default", annotations: dict[str, str] | None = None, **fields: Any
) -> ServiceAccount:
    metadata: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        metadata["annotations"] = annotations
    decoded = manifest.decode_request(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata, **fields}
    )
    assert isinstance(decoded, ServiceAccount)
    return decoded


def upstream_pod(annotations: dict[str, str] | None = None, **spec: Any) -> Pod:
    """A pod as upstream's tests build it: only the given spec fields set."""
    metadata: dict[str, Any] = {"name": "myname", "namespace": NS}
    if annotations:
        metadata["annotations"] = annotations
    decoded = manifest.decode_request(
        {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    )
    assert isinstance(decoded, Pod)
    return decoded


def spec_json(pod: Pod) -> dict[str, Any]:
    return to_dict(pod)["spec"]


def plugin(*accounts: ServiceAccount, seed: int = 0) -> ServiceAccountPlugin:
    _store, listers = stored_listers(*accounts)
    return ServiceAccountPlugin(listers, rng=random.Random(seed))


def admit(sa: ServiceAccountPlugin, pod: Pod, **request: Any) -> Pod:
    """Admit, validate, and admit the result again (upstream's reinvocation testing)."""
    outcome = AdmissionOutcome()
    admitted = sa.admit(admission_request(pod, **request), outcome)
    assert isinstance(admitted, Pod)
    sa.validate(admission_request(admitted, **request), outcome)
    assert sa.admit(admission_request(admitted, **request), outcome) == admitted
    return admitted


def refusal(sa: ServiceAccountPlugin, pod: Pod, **request: Any) -> str:
    with pytest.raises(errors.ForbiddenError) as raised:
        admit(sa, pod, **request)
    return raised.value.message


def env_secret(secret: str) -> dict[str, Any]:
    return {
        "name": "container-1",
        "image": "i",
        "env": [{"name": "env-1", "valueFrom": {"secretKeyRef": {"name": secret, "key": "k"}}}],
    }


def env_from_secret(secret: str) -> dict[str, Any]:
    return {"name": "container-1", "image": "i", "envFrom": [{"secretRef": {"name": secret}}]}


# --- what the plugin ignores (TestIgnoresNonCreate, TestIgnoresNonPodResource, ...) ---------


def test_other_kinds_deletes_and_status_writes_are_ignored() -> None:
    sa = plugin()  # no account at all: anything the plugin looked at would be refused
    outcome = AdmissionOutcome()
    namespace = Namespace(metadata=ObjectMeta(name=NS))
    pod = upstream_pod(containers=[{"name": "c", "image": "i"}])
    requests = [
        admission_request(namespace),
        admission_request(None, operation="DELETE", old=pod, model=Pod),
        admission_request(pod, operation="UPDATE", old=pod),
        admission_request(pod, operation="UPDATE", old=pod, subresource="status"),
        admission_request(pod, subresource="binding"),
    ]
    for request in requests:
        assert sa.admit(request, outcome) is request.obj
        sa.validate(request, outcome)


def test_mirror_pod_without_account_or_secrets_is_admitted_unchanged() -> None:
    """TestIgnoresMirrorPod: no default account, no token volume, nothing looked up."""
    pod = upstream_pod(MIRROR, containers=[{"name": "c", "image": "i"}], volumes=[{"name": "v"}])
    assert admit(plugin(), pod) == pod


MIRROR_REFUSALS = [
    ({"serviceAccountName": "default"}, "a mirror pod may not reference service accounts"),
    ({"serviceAccount": "default"}, "a mirror pod may not reference service accounts"),
    (
        {"volumes": [{"name": "v", "secret": {"secretName": "mysecret"}}]},
        "a mirror pod may not reference secrets",
    ),
    ({"imagePullSecrets": [{"name": "pull"}]}, "a mirror pod may not reference secrets"),
    ({"containers": [env_secret("s")]}, "a mirror pod may not reference secrets"),
    ({"initContainers": [env_from_secret("s")]}, "a mirror pod may not reference secrets"),
    (
        {"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s"}}]}}]},
        "a mirror pod may not reference secrets",
    ),
    (
        {"volumes": [{"name": "v", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "s"}}}]},
        "a mirror pod may not reference secrets",
    ),
    (
        {"volumes": [{"name": "v", "projected": {"sources": [{"serviceAccountToken": {}}]}}]},
        "a mirror pod may not use ServiceAccountToken volume projections",
    ),
]


@pytest.mark.parametrize(
    ("spec", "message"),
    MIRROR_REFUSALS,
    ids=[
        "service account",
        "deprecated serviceAccount",
        "secret volume",
        "pull secret",
        "env secretKeyRef",
        "init envFrom",
        "projected secret",
        "csi secret",
        "token projection",
    ],
)
def test_mirror_pods_may_not_reference_accounts_secrets_or_tokens(
    spec: dict[str, Any], message: str
) -> None:
    """TestRejectsMirrorPodWithServiceAccount, ...WithSecretVolumes,
    ...WithServiceAccountTokenVolumeProjections (``Validate``'s mirror-pod branch,
    ``VisitPodSecretNames`` over all containers). Through the API service, so the
    deprecated ``serviceAccount`` counts as the name, as after upstream's conversion."""
    api = serve_api(account())
    doc = to_dict(upstream_pod(MIRROR, **spec))
    doc["spec"].setdefault("containers", [{"name": "c", "image": "i"}])
    with pytest.raises(errors.ForbiddenError) as raised:
        api.create_object(manifest.decode_request(doc))
    assert raised.value.message == f'pods "myname" is forbidden: {message}'


# --- the default account and its token volume -------------------------------------------------


def test_a_pod_gets_the_default_account_and_the_projected_token_volume() -> None:
    """TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens (the volume and its
    mount as a real cluster's ``kubectl get pod -o yaml`` shows them)."""
    admitted = admit(plugin(account()), upstream_pod(containers=[{"name": "c", "image": "i"}]))
    spec = spec_json(admitted)
    volume_name = spec["volumes"][0]["name"]
    assert volume_name.startswith("kube-api-access-")
    suffix = volume_name.removeprefix("kube-api-access-")
    assert len(suffix) == 5
    assert set(suffix) <= set(names.ALPHABET)
    assert spec["serviceAccountName"] == "default"
    assert spec["serviceAccount"] == "default"
    assert spec["volumes"] == [
        {
            "name": volume_name,
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                }
                            ]
                        }
                    },
                ],
            },
        }
    ]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume_name, "readOnly": True, "mountPath": TOKEN_PATH}
    ]


def test_the_volume_suffix_comes_from_the_injected_generator() -> None:
    pod = upstream_pod(containers=[{"name": "c", "image": "i"}])
    first = spec_json(admit(plugin(account(), seed=7), pod))["volumes"][0]["name"]
    again = spec_json(admit(plugin(account(), seed=7), pod))["volumes"][0]["name"]
    assert first == again == names.generate_name("kube-api-access-", random.Random(7))


@pytest.mark.parametrize("name", ["default", "robot"])
def test_an_account_that_does_not_exist_is_refused(name: str) -> None:
    """TestDeniesInvalidServiceAccount (``getServiceAccount``'s NotFound, wrapped)."""
    pod = upstream_pod(serviceAccountName=name, containers=[{"name": "c", "image": "i"}])
    assert refusal(plugin(account("other")), pod) == (
        f'pods "myname" is forbidden: error looking up service account {NS}/{name}: '
        f'serviceaccount "{name}" not found'
    )


def test_a_generate_name_pod_is_refused_under_its_prefix() -> None:
    """``admission.NewForbidden`` names the object by ``generateName`` before the name exists."""
    pod = upstream_pod(containers=[{"name": "c", "image": "i"}])
    pod = evolve(pod, metadata=ObjectMeta(generate_name="web-", namespace=NS))
    assert refusal(plugin(), pod, name="").startswith('pods "web-" is forbidden: ')


def test_init_containers_get_the_mount_too() -> None:
    """TestAutomountsAPIToken, second half."""
    spec = spec_json(
        admit(
            plugin(account()),
            upstream_pod(
                initContainers=[{"name": "i", "image": "i"}],
                containers=[{"name": "c", "image": "i"}],
            ),
        )
    )
    volume = spec["volumes"][0]["name"]
    mount = {"name": volume, "readOnly": True, "mountPath": TOKEN_PATH}
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    assert spec["containers"][0]["volumeMounts"] == [mount]


def test_a_container_that_mounts_something_at_the_token_path_keeps_it() -> None:
    """TestRespectsExistingMount: no volume when no container needs it; otherwise only the
    containers without a mount there get one."""
    custom = {"name": "my-custom-mount", "mountPath": TOKEN_PATH}
    own = {"name": "c", "image": "i", "volumeMounts": [custom]}
    spec = spec_json(admit(plugin(account()), upstream_pod(containers=[own])))
    assert "volumes" not in spec
    assert spec["containers"][0]["volumeMounts"] == [custom]
    spec = spec_json(
        admit(plugin(account()), upstream_pod(containers=[own, {"name": "d", "image": "i"}]))
    )
    assert [v["name"] for v in spec["volumes"]] == [
        spec["containers"][1]["volumeMounts"][0]["name"]
    ]
    assert spec["containers"][0]["volumeMounts"] == [custom]


def test_an_existing_kube_api_access_volume_is_reused() -> None:
    """``mountServiceAccountToken`` finds a volume named ``kube-api-access-*`` and mounts it
    instead of adding one (a pod copied from a real cluster keeps its volume)."""
    volume = {"name": "kube-api-access-abcde", "projected": token_volume_source()}
    spec = spec_json(
        admit(
            plugin(account()),
            upstream_pod(volumes=[volume], containers=[{"name": "c", "image": "i"}]),
        )
    )
    assert spec["volumes"] == [volume]
    assert spec["containers"][0]["volumeMounts"][0]["name"] == "kube-api-access-abcde"


AUTOMOUNT = [
    (None, None, True),
    (None, False, False),
    (False, None, False),
    (True, False, True),
    (False, True, False),
]


@pytest.mark.parametrize(
    ("on_pod", "on_account", "mounted"),
    AUTOMOUNT,
    ids=["default", "account says no", "pod says no", "pod overrides account", "pod wins"],
)
def test_automount_service_account_token(
    on_pod: bool | None, on_account: bool | None, mounted: bool
) -> None:
    """``shouldAutomount``: the pod's preference wins, then the account's, else true."""
    fields = {} if on_account is None else {"automountServiceAccountToken": on_account}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if on_pod is not None:
        spec["automountServiceAccountToken"] = on_pod
    result = spec_json(admit(plugin(account(**fields)), upstream_pod(**spec)))
    assert ("volumes" in result) is mounted
    assert ("volumeMounts" in result["containers"][0]) is mounted
    assert result["serviceAccountName"] == "default"


# --- mountable secrets (enforce-mountable-secrets) ----------------------------------------


def _volume(secret: str) -> dict[str, Any]:
    return {"name": "v", "secret": {"secretName": secret}}


ALLOWED_REFERENCES = [
    {"volumes": [_volume("foo")], "containers": [{"name": "c", "image": "i"}]},
    {"containers": [env_secret("foo")]},
    {"containers": [env_from_secret("foo")]},
    {"initContainers": [env_secret("foo")], "containers": [{"name": "c", "image": "i"}]},
    {"initContainers": [env_from_secret("foo")], "containers": [{"name": "c", "image": "i"}]},
]


@pytest.mark.parametrize(
    "spec", ALLOWED_REFERENCES, ids=["volume", "env", "envFrom", "init env", "init envFrom"]
)
def test_secrets_the_account_references_are_allowed(spec: dict[str, Any]) -> None:
    """TestAllowsReferencedSecret."""
    enforcing = account(annotations=ENFORCE, secrets=[{"name": "foo"}])
    admit(plugin(enforcing), upstream_pod(**spec))


UNREFERENCED = [
    (
        {"volumes": [_volume("foo")], "containers": [{"name": "c", "image": "i"}]},
        'volume with secret.secretName="foo" is not allowed because service account default '
        "does not reference that secret",
    ),
    (
        {"containers": [env_secret("foo")]},
        'container container-1 with envVar env-1 referencing secret.secretName="foo" is not '
        "allowed because service account default does not reference that secret",
    ),
    (
        {"containers": [env_from_secret("foo")]},
        'container container-1 with envFrom referencing secret.secretName="foo" is not allowed '
        "because service account default does not reference that secret",
    ),
    (
        {"initContainers": [env_secret("foo")], "containers": [{"name": "c", "image": "i"}]},
        'init container container-1 with envVar env-1 referencing secret.secretName="foo" is '
        "not allowed because service account default does not reference that secret",
    ),
    (
        {"initContainers": [env_from_secret("foo")], "containers": [{"name": "c", "image": "i"}]},
        'init container container-1 with envFrom referencing secret.secretName="foo" is not '
        "allowed because service account default does not reference that secret",
    ),
    (
        {"imagePullSecrets": [{"name": "foo"}], "containers": [{"name": "c", "image": "i"}]},
        'imagePullSecrets[0].name="foo" is not allowed because service account default does '
        "not reference that imagePullSecret",
    ),
]


@pytest.mark.parametrize(
    ("spec", "message"),
    UNREFERENCED,
    ids=["volume", "env", "envFrom", "init env", "init envFrom", "pull secret"],
)
def test_secrets_the_account_does_not_reference_are_refused(
    spec: dict[str, Any], message: str
) -> None:
    """TestRejectsUnreferencedSecretVolumes, TestAllowUnreferencedSecretVolumesForPermissiveSAs
    (the annotation turns it on), TestRejectsUnreferencedImagePullSecrets."""
    enforcing = account(annotations=ENFORCE)
    assert refusal(plugin(enforcing), upstream_pod(**spec)) == (
        f'pods "myname" is forbidden: {message}'
    )
    admit(plugin(account()), upstream_pod(**spec))  # without the annotation: allowed


@pytest.mark.parametrize(
    ("value", "enforced"),
    [("true", True), ("1", True), ("T", True), ("TRUE", True), ("yes", False), ("false", False)],
)
def test_the_annotation_is_read_as_go_parses_a_bool(value: str, enforced: bool) -> None:
    """``enforceMountableSecrets``: ``strconv.ParseBool``; an unparsable value is false."""
    sa = plugin(account(annotations={"kubernetes.io/enforce-mountable-secrets": value}))
    pod = upstream_pod(volumes=[_volume("foo")], containers=[{"name": "c", "image": "i"}])
    if enforced:
        refusal(sa, pod)
    else:
        admit(sa, pod)


def test_projected_secrets_are_not_limited() -> None:
    """``limitSecretReferences`` checks secret volumes, env and pull secrets only."""
    projected = {"name": "v", "projected": {"sources": [{"secret": {"name": "foo"}}]}}
    admit(
        plugin(account(annotations=ENFORCE)),
        upstream_pod(volumes=[projected], containers=[{"name": "c", "image": "i"}]),
    )


# --- image pull secrets --------------------------------------------------------------------


def test_the_accounts_pull_secrets_are_copied_to_a_pod_without_any() -> None:
    """TestAddImagePullSecrets (names only; the account is not changed)."""
    sa_account = account(imagePullSecrets=[{"name": "foo"}, {"name": "bar"}])
    before = copy.deepcopy(to_dict(sa_account))
    spec = spec_json(admit(plugin(sa_account), upstream_pod(containers=[{"name": "c"}])))
    assert spec["imagePullSecrets"] == [{"name": "foo"}, {"name": "bar"}]
    assert to_dict(sa_account) == before


def test_a_pod_with_pull_secrets_keeps_its_own() -> None:
    """TestDoNotAddImagePullSecrets, TestAllowsReferencedImagePullSecrets."""
    sa_account = account(annotations=ENFORCE, imagePullSecrets=[{"name": "foo"}, {"name": "bar"}])
    pod = upstream_pod(imagePullSecrets=[{"name": "foo"}], containers=[{"name": "c"}])
    assert spec_json(admit(plugin(sa_account), pod))["imagePullSecrets"] == [{"name": "foo"}]


# --- updates: ephemeral containers -------------------------------------------------------------


EPHEMERAL = [
    (
        env_secret("foo"),
        'ephemeral container container-1 with envVar env-1 referencing secret.secretName="foo" '
        "is not allowed because service account default does not reference that secret",
    ),
    (
        env_from_secret("foo"),
        'ephemeral container container-1 with envFrom referencing secret.secretName="foo" is '
        "not allowed because service account default does not reference that secret",
    ),
]


@pytest.mark.parametrize(("container", "message"), EPHEMERAL, ids=["env", "envFrom"])
def test_ephemeral_containers_are_limited_on_their_update(
    container: dict[str, Any], message: str
) -> None:
    """``Validate`` on UPDATE of ``pods/ephemeralcontainers``
    (``limitEphemeralContainerSecretReferences``); a plain pod update is not checked."""
    pod = upstream_pod(
        serviceAccountName="default",
        containers=[{"name": "c", "image": "i"}],
        ephemeralContainers=[container],
    )
    outcome = AdmissionOutcome()
    update = {"operation": "UPDATE", "old": pod, "subresource": "ephemeralcontainers"}
    with pytest.raises(errors.ForbiddenError) as raised:
        plugin(account(annotations=ENFORCE)).validate(admission_request(pod, **update), outcome)
    assert raised.value.message == f'pods "myname" is forbidden: {message}'
    plugin(account(annotations=ENFORCE, secrets=[{"name": "foo"}])).validate(
        admission_request(pod, **update), outcome
    )
    plugin(account()).validate(admission_request(pod, **update), outcome)
    plugin(account(annotations=ENFORCE)).validate(
        admission_request(pod, operation="UPDATE", old=pod), outcome
    )
    # The update path never mutates.
    assert plugin(account()).admit(admission_request(pod, **update), outcome) is pod


def test_an_ephemeral_update_of_a_pod_without_an_account_is_refused() -> None:
    pod = upstream_pod(containers=[{"name": "c", "image": "i"}])
    request = admission_request(pod, operation="UPDATE", old=pod, subresource="ephemeralcontainers")
    with pytest.raises(errors.ForbiddenError) as raised:
        plugin(account()).validate(request, AdmissionOutcome())
    assert raised.value.message == (
        f'pods "myname" is forbidden: no service account specified for pod {NS}/myname'
    )


# --- in the chain -----------------------------------------------------------------------


def serve_api(*accounts: ServiceAccount) -> ApiService:
    """An API service with serve's chain (the plugin on) and ``myns`` holding ``accounts``."""
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(0))
    api.admission = default_chain(api.listers, service_account_rng=random.Random(1))
    api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
    for sa_account in accounts:
        api.create_object(sa_account)
    return api


def test_a_refused_pod_leaves_the_store_unchanged() -> None:
    api = serve_api()
    revision = api.store.current_revision()
    pod = upstream_pod(containers=[{"name": "c", "image": "i"}])
    with pytest.raises(errors.ForbiddenError, match='serviceaccount "default" not found'):
        api.create_object(pod)
    assert api.store.current_revision() == revision
    assert api.store.list(KeyPrefix("pods", NS))[0] == []


def test_the_account_is_checked_before_the_priority_class() -> None:
    """``AllOrderedPlugins``: ServiceAccount runs before Priority."""
    pod = upstream_pod(priorityClassName="missing", containers=[{"name": "c", "image": "i"}])
    with pytest.raises(errors.ForbiddenError) as raised:
        serve_api().create_object(pod)
    assert "error looking up service account" in raised.value.message
    with pytest.raises(errors.ForbiddenError, match="no PriorityClass with name missing"):
        serve_api(account()).create_object(pod)


def test_a_stored_pod_reads_back_with_its_account_and_volume_and_updates_keep_them() -> None:
    api = serve_api(account())
    created = api.create_object(upstream_pod(containers=[{"name": "c", "image": "i"}])).obj
    spec = spec_json(created)
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    assert len(spec["volumes"]) == 1
    labelled = evolve(created, metadata=evolve(created.metadata, labels={"a": "b"}))
    updated = api.update_object(labelled).obj
    assert updated.metadata.labels == {"a": "b"}
    assert spec_json(updated) == spec


def test_without_a_generator_the_chain_has_no_service_account_plugin() -> None:
    """simulate and check: pods are neither defaulted nor refused (docs/admission.md)."""
    _store, listers = stored_listers()
    chain = default_chain(listers)
    assert "ServiceAccount" not in [p.name for p in chain.mutating]
    assert "ServiceAccount" not in [p.name for p in chain.validating]
    chain = default_chain(listers, service_account_rng=random.Random(0))
    # LimitRanger before ServiceAccount, as upstream's AllOrderedPlugins.
    assert [p.name for p in chain.mutating] == [
        "LimitRanger",
        "ServiceAccount",
        "TenantPriorityClass",
        "Priority",
        "DefaultTolerationSeconds",
        "DefaultStorageClass",
        "StorageObjectInUseProtection",
        "RuntimeClass",
        "DefaultIngressClass",
    ]
    assert [p.name for p in chain.validating] == [
        "LimitRanger",
        "ServiceAccount",
        "SystemPriorityClass",
        "TenantPriorityClass",
        "Priority",
        "RuntimeClass",
        "CertificateSubjectRestriction",
        "ValidatingAdmissionPolicy",
        "ResourceQuota",
    ]
