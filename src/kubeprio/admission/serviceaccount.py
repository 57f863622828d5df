"""The ``ServiceAccount`` admission plugin: every pod runs as a service account that exists.

Mirrors upstream ``plugin/pkg/admission/serviceaccount/admission.go`` (v1.32: ``Admit``,
``Validate``, ``shouldAutomount``, ``enforceMountableSecrets``, ``limitSecretReferences``,
``limitEphemeralContainerSecretReferences``, ``mountServiceAccountToken``,
``TokenVolumeSource``). Pods only; other kinds, DELETE and subresources other than
``ephemeralcontainers`` pass untouched.

* **mutating, pods CREATE** — a mirror pod (annotation ``kubernetes.io/config.mirror``) is
  not changed, only checked (below). Any other pod gets ``serviceAccountName: default``
  when it names none (``spec.serviceAccount``, the deprecated alias, follows it:
  ``api.poddefaults.with_service_account_name``). The account must exist: 403 ``error looking
  up service account <ns>/<name>: serviceaccount "<name>" not found``. Unless the pod, or
  else the account, says ``automountServiceAccountToken: false``, the pod gets the projected
  ``kube-api-access-<5 random>`` volume (a bound token valid 3607 s, ``kube-root-ca.crt``'s
  ``ca.crt``, the namespace; ``defaultMode`` 420), mounted read-only at
  ``/var/run/secrets/kubernetes.io/serviceaccount`` in every init and app container that
  mounts nothing there. A volume already named ``kube-api-access-*`` is reused, not added
  again, so admitting an admitted pod changes nothing. A pod without
  ``imagePullSecrets`` gets the account's. Then the validating rules run (as upstream's
  ``Admit`` ends with ``Validate``).
* **validating, pods CREATE** — a mirror pod may not name a service account (``a mirror
  pod may not reference service accounts``), reference a Secret anywhere (``a mirror pod
  may not reference secrets``: pull secrets, env and envFrom of every container, secret,
  projected and plugin volumes) or project a token (``a mirror pod may not use
  ServiceAccountToken volume projections``). Any other pod must name an existing account;
  if the account is annotated ``kubernetes.io/enforce-mountable-secrets: "true"``, the
  pod's secret volumes, its containers' env and envFrom secrets and its pull secrets must
  be among the account's ``secrets`` (pull secrets: its ``imagePullSecrets``).
* **validating, pods UPDATE of ``ephemeralcontainers``** — the same enforcement for the
  ephemeral containers' env and envFrom (``kubectl debug`` adds them through that
  subresource). Other pod updates
  are not checked: a pod's service account and volumes cannot change after creation.

Every refusal is 403 ``pods "<name>" is forbidden: <reason>`` (``admission.NewForbidden``).

Accounts are read through ``Listers``, which in kubeprio read the API server's own store
(``apiserver.listers``), not an informer cache that may lag it. Upstream's
``getServiceAccount`` makes one live GET when its informer misses, and nine more 100-200 ms
apart for ``default``, waiting for the service account controller to create the account of a
namespace made a moment ago. The lister read here *is* that live GET, so a miss is final;
what stands in for the waiting is the serve driver, which runs the service account
controller in the settle round after the write that created the namespace, a few loop
iterations later, before a client's next request arrives (docs/admission.md). One case has
no such round: with ``NamespaceAutoProvision`` on (``namespace_auto_provision``), the pod's
own create makes its namespace (after admission, in ``ApiService``), so ``default`` cannot
exist yet. There a miss of ``default`` in a namespace that does not exist reads as the
account the controller is about to make (no secrets, no annotations), which is what
upstream's retries end up finding.

Driven by ``admission.chain`` inside ``apiserver.service.ApiService``; only ``kubeprio
serve``'s chain holds it (``admission.defaults``). The volume suffix comes from the
``random.Random`` the composition root hands in (``names.generate_name``). Never writes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Listers, Operation
from kubeprio.admission.priority import request_name
from kubeprio.api import errors, names
from kubeprio.api.core import Container, Pod, PodSpec, is_mirror_pod
from kubeprio.api.gotext import GO_TRUE
from kubeprio.api.kinds import EPHEMERAL_CONTAINERS
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.poddefaults import DEPRECATED_SERVICE_ACCOUNT
from kubeprio.api.serviceaccount import (
    DEFAULT_SERVICE_ACCOUNT,
    ENFORCE_MOUNTABLE_SECRETS_ANNOTATION,
    ServiceAccount,
)

PLUGIN_NAME: Final = "ServiceAccount"
SERVICE_ACCOUNT_VOLUME_NAME: Final = "kube-api-access"
"""Prefix of the token volume's name (``ServiceAccountVolumeName``)."""
DEFAULT_API_TOKEN_MOUNT_PATH: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS: Final = 3607
"""``serviceaccount.WarnOnlyBoundTokenExpirationSeconds``: an odd hour and seven seconds the
token issuer recognises as this plugin's, extending such tokens and warning when one is
used past the hour (``--service-account-extend-token-expiration``)."""
PROJECTED_VOLUME_SOURCE_DEFAULT_MODE: Final = 0o644
"""Written out (420 in JSON), as upstream does since #104464."""
ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"

# Volume sources that name a Secret, and where (``VisitPodSecretNames``).
_SECRET_NAME_FIELDS: Final = (
    ("azureFile", "secretName"),
    ("cephfs", "secretRef"),
    ("cinder", "secretRef"),
    ("flexVolume", "secretRef"),
    ("rbd", "secretRef"),
    ("secret", "secretName"),
    ("scaleIO", "secretRef"),
    ("iscsi", "secretRef"),
    ("storageos", "secretRef"),
    ("csi", "nodePublishSecretRef"),
)
"""What Go's ``strconv.ParseBool`` reads as true (anything else is false or an error)."""


def token_volume_source() -> JsonDict:
    """``TokenVolumeSource``: the projected source of a ``kube-api-access-*`` volume."""
    return {
        "sources": [
            {
                "serviceAccountToken": {
                    "expirationSeconds": WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
                    "path": "token",
                }
            },
            {
                "configMap": {
                    "name": ROOT_CA_CONFIG_MAP,
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
        "defaultMode": PROJECTED_VOLUME_SOURCE_DEFAULT_MODE,
    }


def should_automount(account: ServiceAccount, spec: PodSpec) -> bool:
    """``shouldAutomount``: the pod's ``automountServiceAccountToken``, else the account's,
    else true."""
    pod_choice = spec.extra.get("automountServiceAccountToken")
    if isinstance(pod_choice, bool):
        return pod_choice
    if account.automount_service_account_token is not None:
        return account.automount_service_account_token
    return True


def enforces_mountable_secrets(account: ServiceAccount) -> bool:
    """``enforceMountableSecrets``: the annotation parses as true (Go's ``ParseBool``)."""
    value = account.metadata.annotation(ENFORCE_MOUNTABLE_SECRETS_ANNOTATION)
    return value in GO_TRUE


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a JSON list (anything else in it is not ours to judge)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _name_of(ref: Any) -> str:
    return str(ref.get("name") or "") if isinstance(ref, Mapping) else ""


def _env_secret_refs(container: Mapping[str, Any]) -> Iterator[tuple[str, str | None]]:
    """(secret, env var name) of each ``env[].valueFrom.secretKeyRef``, then (secret, None)
    of each ``envFrom[].secretRef``."""
    for env in _dicts(container.get("env")):
        value_from = env.get("valueFrom")
        if isinstance(value_from, Mapping) and isinstance(value_from.get("secretKeyRef"), Mapping):
            yield _name_of(value_from["secretKeyRef"]), str(env.get("name") or "")
    for env_from in _dicts(container.get("envFrom")):
        if isinstance(env_from.get("secretRef"), Mapping):
            yield _name_of(env_from["secretRef"]), None


def _container_secret_problem(
    kind: str, container: Mapping[str, Any], mountable: set[str], account: str
) -> str | None:
    for secret, env_name in _env_secret_refs(container):
        if secret in mountable:
            continue
        how = f"with envVar {env_name}" if env_name is not None else "with envFrom"
        return (
            f'{kind} {container.get("name") or ""} {how} referencing secret.secretName="{secret}" '
            f"is not allowed because service account {account} does not reference that secret"
        )
    return None


def _container_json(container: Container) -> Mapping[str, Any]:
    # Only env, envFrom and volumeMounts are read, and they live in ``extra``.
    return {"name": container.name, **container.extra}


def secret_reference_problem(account: ServiceAccount, spec: PodSpec) -> str | None:
    """``limitSecretReferences``: the first reference the account does not allow, or None."""
    mountable = {ref.name or "" for ref in account.secrets or ()}
    account_name = account.metadata.name or ""
    for volume in _dicts(spec.extra.get("volumes")):
        secret = volume.get("secret")
        if not isinstance(secret, Mapping):
            continue
        name = str(secret.get("secretName") or "")
        if name not in mountable:
            return (
                f'volume with secret.secretName="{name}" is not allowed because service '
                f"account {account_name} does not reference that secret"
            )
    for kind, containers in (
        ("init container", spec.init_containers),
        ("container", spec.containers),
    ):
        for container in containers or ():
            problem = _container_secret_problem(
                kind, _container_json(container), mountable, account_name
            )
            if problem is not None:
                return problem
    pull_secrets = {ref.name or "" for ref in account.image_pull_secrets or ()}
    pod_pull_secrets = spec.extra.get("imagePullSecrets")
    for position, ref in enumerate(pod_pull_secrets if isinstance(pod_pull_secrets, list) else ()):
        name = _name_of(ref)
        if name not in pull_secrets:
            return (
                f'imagePullSecrets[{position}].name="{name}" is not allowed because service '
                f"account {account_name} does not reference that imagePullSecret"
            )
    return None


def ephemeral_secret_problem(account: ServiceAccount, spec: PodSpec) -> str | None:
    """``limitEphemeralContainerSecretReferences``'s check of the ephemeral containers."""
    mountable = {ref.name or "" for ref in account.secrets or ()}
    for container in spec.ephemeral_containers or ():
        problem = _container_secret_problem(
            "ephemeral container",
            _container_json(container.as_container()),
            mountable,
            account.metadata.name or "",
        )
        if problem is not None:
            return problem
    return None


def _volume_secret_names(volume: Mapping[str, Any]) -> Iterator[str]:
    for source, field in _SECRET_NAME_FIELDS:
        found = volume.get(source)
        if isinstance(found, Mapping):
            value = found.get(field)
            yield _name_of(value) if field.endswith("Ref") else str(value or "")
    projected = volume.get("projected")
    if isinstance(projected, Mapping):
        for projection in _dicts(projected.get("sources")):
            yield _name_of(projection.get("secret"))


def references_secrets(spec: PodSpec) -> bool:
    """``VisitPodSecretNames`` over every container kind finds a (non-empty) Secret name."""
    if any(_name_of(ref) for ref in spec.extra.get("imagePullSecrets") or ()):
        return True
    containers: list[Mapping[str, Any]] = [
        _container_json(c) for c in (*(spec.init_containers or ()), *(spec.containers or ()))
    ]
    containers += [_container_json(c.as_container()) for c in spec.ephemeral_containers or ()]
    if any(secret for c in containers for secret, _ in _env_secret_refs(c)):
        return True
    return any(
        name
        for volume in _dicts(spec.extra.get("volumes"))
        for name in _volume_secret_names(volume)
    )


def mirror_pod_problem(spec: PodSpec) -> str | None:
    """What a mirror pod may not do, in upstream's order; None when it does none of it."""
    if spec.service_account_name:
        return "a mirror pod may not reference service accounts"
    if references_secrets(spec):
        return "a mirror pod may not reference secrets"
    for volume in _dicts(spec.extra.get("volumes")):
        projected = volume.get("projected")
        if isinstance(projected, Mapping) and any(
            projection.get("serviceAccountToken") is not None
            for projection in _dicts(projected.get("sources"))
        ):
            return "a mirror pod may not use ServiceAccountToken volume projections"
    return None


def _mounts_token_path(container: Container) -> bool:
    mounts = container.extra.get("volumeMounts")
    return isinstance(mounts, list) and any(
        isinstance(mount, Mapping) and mount.get("mountPath") == DEFAULT_API_TOKEN_MOUNT_PATH
        for mount in mounts
    )


def _with_mount(
    containers: tuple[Container, ...] | None, mount: JsonDict
) -> tuple[Container, ...] | None:
    """The containers, ``mount`` added to each that mounts nothing at the token path; the
    same tuple when none needed it."""
    if not containers:
        return containers
    mounted = [_mounts_token_path(c) for c in containers]
    if all(mounted):
        return containers
    return tuple(
        c
        if done
        else evolve(
            c,
            extra={**c.extra, "volumeMounts": [*(c.extra.get("volumeMounts") or ()), dict(mount)]},
        )
        for c, done in zip(containers, mounted, strict=True)
    )


def _token_changes(spec: PodSpec, rng: random.Random, changes: dict[str, Any]) -> JsonDict | None:
    """``mountServiceAccountToken``: put the (init) containers that gain the mount in
    ``changes``; return the volume to add, if one is needed and none exists yet."""
    existing = next(
        (
            str(v["name"])
            for v in _dicts(spec.extra.get("volumes"))
            if str(v.get("name") or "").startswith(SERVICE_ACCOUNT_VOLUME_NAME + "-")
        ),
        None,
    )
    volume_name = existing or names.generate_name(SERVICE_ACCOUNT_VOLUME_NAME + "-", rng)
    mount = {"name": volume_name, "readOnly": True, "mountPath": DEFAULT_API_TOKEN_MOUNT_PATH}
    needed = False
    for attr, containers in (
        ("init_containers", spec.init_containers),
        ("containers", spec.containers),
    ):
        mounted = _with_mount(containers, mount)
        if mounted is not containers:
            changes[attr] = mounted
            needed = True
    if existing is not None or not needed:
        return None  # reuse the pod's volume; or every container mounts something else there
    return {"name": volume_name, "projected": token_volume_source()}


def admitted_spec(spec: PodSpec, account: ServiceAccount, rng: random.Random | None) -> PodSpec:
    """The spec ``Admit`` makes for a pod running as ``account``: the name (and its
    deprecated alias, as ``api.poddefaults.with_service_account_name`` keeps it), the token
    volume and mounts unless ``rng`` is None (no automount), the account's pull secrets
    when the pod has none. One copy of the spec, however much changes (every pod create
    in serve comes through here)."""
    name = account.metadata.name or ""
    changes: dict[str, Any] = {}
    extra_changes: JsonDict = {}
    if spec.service_account_name != name:
        changes["service_account_name"] = name
    if spec.extra.get(DEPRECATED_SERVICE_ACCOUNT) != name:
        extra_changes[DEPRECATED_SERVICE_ACCOUNT] = name
    if rng is not None:
        volume = _token_changes(spec, rng, changes)
        if volume is not None:
            extra_changes["volumes"] = [*(spec.extra.get("volumes") or ()), volume]
    if not spec.extra.get("imagePullSecrets") and account.image_pull_secrets:
        extra_changes["imagePullSecrets"] = [
            {"name": ref.name} if ref.name else {} for ref in account.image_pull_secrets
        ]
    if extra_changes:
        changes["extra"] = {**spec.extra, **extra_changes}
    return evolve(spec, **changes) if changes else spec


class ServiceAccountPlugin:
    """Upstream's ``ServiceAccount`` plugin: mutating and validating, pods only."""

    admits_kinds = validates_kinds = (Pod,)

    def __init__(
        self, listers: Listers, *, rng: random.Random, namespace_auto_provision: bool = False
    ) -> None:
        """``namespace_auto_provision``: ``NamespaceAutoProvision`` is on too."""
        self._listers = listers
        self._rng = rng
        self._auto_provision = namespace_auto_provision

    @property
    def name(self) -> str:
        """``ServiceAccount``."""
        return PLUGIN_NAME

    @staticmethod
    def _handles(request: AdmissionRequest) -> Pod | None:
        """``shouldIgnore``: the pod of a pod request (main resource or ephemeral containers)."""
        if request.resource.plural != "pods" or request.resource.group:
            return None
        if request.subresource not in ("", EPHEMERAL_CONTAINERS):
            return None
        return request.obj if isinstance(request.obj, Pod) else None

    def _forbidden(self, request: AdmissionRequest, detail: str) -> errors.ForbiddenError:
        return errors.forbidden_error("pods", "", request_name(request), detail)

    def _account(self, request: AdmissionRequest, name: str) -> ServiceAccount:
        """``getServiceAccount`` (see the module docstring for the retries it does not need)."""
        account = self._listers.service_accounts.get(name, request.namespace)
        if (
            account is None
            and self._auto_provision
            and name == DEFAULT_SERVICE_ACCOUNT
            and self._listers.namespaces.get(request.namespace) is None
        ):
            # NamespaceAutoProvision is creating the namespace: see the module docstring.
            return ServiceAccount(
                metadata=ObjectMeta(name=DEFAULT_SERVICE_ACCOUNT, namespace=request.namespace)
            )
        if account is None:
            raise self._forbidden(
                request,
                f"error looking up service account {request.namespace}/{name}: "
                f'serviceaccount "{name}" not found',
            )
        return account

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> object | None:
        """Default the account, mount its token, copy its pull secrets (new pods only)."""
        pod = self._handles(request)
        if pod is None or request.operation is not Operation.CREATE:
            return request.obj
        spec = pod.spec or PodSpec()
        if is_mirror_pod(pod):
            # Changing a mirror pod's spec makes its kubelet delete it as not matching.
            self._check_mirror(request, spec)
            return pod
        account = self._account(request, spec.service_account_name or DEFAULT_SERVICE_ACCOUNT)
        spec = admitted_spec(spec, account, self._rng if should_automount(account, spec) else None)
        # Upstream's Admit ends with Validate: with the account in hand, that is the
        # mountable-secrets check (the validating phase runs it again on the final pod).
        self._check_secrets(request, account, spec)
        return pod if spec is pod.spec else evolve(pod, spec=spec)

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Refuse what a pod's account (or a mirror pod's nature) does not allow."""
        pod = self._handles(request)
        if pod is None:
            return
        spec = pod.spec or PodSpec()
        if request.operation is Operation.UPDATE and request.subresource == EPHEMERAL_CONTAINERS:
            self._validate_ephemeral(request, pod, spec)
            return
        if request.operation is not Operation.CREATE or request.subresource:
            return
        if is_mirror_pod(pod):
            self._check_mirror(request, spec)
            return
        self._check_secrets(request, self._required_account(request, pod, spec), spec)

    def _check_mirror(self, request: AdmissionRequest, spec: PodSpec) -> None:
        problem = mirror_pod_problem(spec)
        if problem is not None:
            raise self._forbidden(request, problem)

    def _check_secrets(
        self, request: AdmissionRequest, account: ServiceAccount, spec: PodSpec
    ) -> None:
        if not enforces_mountable_secrets(account):
            return
        problem = secret_reference_problem(account, spec)
        if problem is not None:
            raise self._forbidden(request, problem)

    def _required_account(
        self, request: AdmissionRequest, pod: Pod, spec: PodSpec
    ) -> ServiceAccount:
        if not spec.service_account_name:
            raise self._forbidden(
                request,
                f"no service account specified for pod {request.namespace}/"
                f"{pod.metadata.name or ''}",
            )
        return self._account(request, spec.service_account_name)

    def _validate_ephemeral(self, request: AdmissionRequest, pod: Pod, spec: PodSpec) -> None:
        account = self._required_account(request, pod, spec)
        if not enforces_mountable_secrets(account):
            return
        problem = ephemeral_secret_problem(account, spec)
        if problem is not None:
            raise self._forbidden(request, problem)
