"""The ``serviceaccounts/token`` subresource: TokenRequest in, a signed token out.

What it is: upstream's ``TokenREST.Create`` (``pkg/registry/core/serviceaccount/storage/
token.go``, v1.32, default feature gates), which ``kubectl create token`` and the kubelet
call. For ``POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`` with a decoded
and defaulted ``TokenRequest`` (``expirationSeconds`` 3600 when unset):

0. ``NamespaceLifecycle`` admission first: the namespace must exist (404) and not be
   terminating (403);
1. a ``metadata.name`` other than the account's is a 422 (``must match the service
   account name if specified``); a different namespace never gets here (the REST layer's
   400, as upstream's create handler);
2. the account must exist (404 ``serviceaccounts "x" not found``);
3. no audiences means the API audiences; name, namespace and ``creationTimestamp`` (now)
   are filled in, the status cleared;
4. ``ValidateTokenRequest`` (10 minutes to 2^32 seconds): a 422
   ``TokenRequest.authentication.k8s.io "" is invalid: ...``;
5. a bound object: a Pod (running as this account, else 400 ``cannot bind token for
   serviceaccount "x" to pod running with different serviceaccount name.``; its Node's
   name and uid go into the token too), a Secret, or a Node, each looked up in the
   namespace (404 if missing); any other kind is a 400 ``cannot bind token to object of
   type /v1, Kind=ConfigMap``; a given uid that is not the object's is a 409;
6. ``--service-account-max-token-expiration``: a longer request is shortened, with
   upstream's warning; a pod-bound request of exactly 3607 seconds for the API audiences
   (what the ServiceAccount admission plugin asks for) is extended to a year when
   ``--service-account-extend-token-expiration`` is on, its ``warnafter`` at the hour;
7. the answer (201) is the request with the token and
   ``status.expirationTimestamp`` = now + ``spec.expirationSeconds`` (an extended token's
   status shows the hour, its ``exp`` the year, as upstream's).

Who drives it: ``apiserver.rest`` for a POST to the subresource, with the ``TokenIssuer``
``serve`` configured. Reads through ``ApiService``; writes nothing.
"""

from __future__ import annotations

import dataclasses
import random
import uuid
from collections.abc import Sequence
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Node, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.reviews import AUTHENTICATION_GROUP, AUTHENTICATION_V1
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import to_dict
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.api.tokenrequest import BoundObjectReference, TokenRequest, TokenRequestSpec
from kubeprio.api.validation.authentication import validate_token_request
from kubeprio.apiserver import tokenclaims
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.tokensigning import TokenSigner
from kubeprio.clock import rfc3339

DEFAULT_ISSUER: Final = "https://kubernetes.default.svc.cluster.local"
"""The issuer kubeadm gives kube-apiserver (``--service-account-issuer``, which
kube-apiserver itself requires without a default): ``https://kubernetes.default.svc.`` and
the cluster's DNS domain."""
KIND: Final = "TokenRequest"
WIPED_METADATA: Final = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)
"""``rest.WipeObjectMetaSystemFields``: what a client may not set on a created object."""


class TokenIssuer:
    """TokenREST's configuration: the signer (issuer and key), the API audiences,
    ``--service-account-max-token-expiration`` (0: none) and
    ``--service-account-extend-token-expiration``; and where token ids come from."""

    def __init__(
        self,
        signer: TokenSigner,
        *,
        api_audiences: Sequence[str],
        rng: random.Random,
        max_expiration_seconds: int = 0,
        extend_expiration: bool = True,
    ) -> None:
        self.signer = signer
        self.api_audiences = tuple(api_audiences)
        self.max_expiration_seconds = max_expiration_seconds
        self.extend_expiration = extend_expiration
        self._rng = rng

    def new_jti(self) -> str:
        """A random (version 4) UUID for the token's ``jti``, from the injected generator."""
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def is_kube_audiences(self, audiences: Sequence[str]) -> bool:
        """``isKubeAudiences``: every audience is one of the API's."""
        return set(audiences) <= set(self.api_audiences)


@dataclasses.dataclass(frozen=True, slots=True)
class IssuedToken:
    """The created TokenRequest as upstream's JSON, and the warnings to send with it."""

    body: JsonDict
    warnings: tuple[str, ...] = ()


def _invalid(name: str, field: str, value: str, detail: str) -> errors.InvalidError:
    return errors.invalid_error(
        KIND, AUTHENTICATION_GROUP, name, [errors.invalid(field, value, detail)]
    )


def _group_version_kind(ref: BoundObjectReference) -> tuple[str, str, str]:
    """``schema.FromAPIVersionAndKind``: group, version and kind of a reference (an
    unparseable apiVersion, with more than one ``/``, leaves only the kind)."""
    api_version = ref.api_version or ""
    kind = ref.kind or ""
    if api_version.count("/") > 1:
        return "", "", kind
    group, _, version = api_version.rpartition("/")
    return group, version, kind


@dataclasses.dataclass(frozen=True, slots=True)
class _Bound:
    pod: tokenclaims.Ref | None = None
    secret: tokenclaims.Ref | None = None
    node: tokenclaims.Ref | None = None


def _bind(service: ApiService, namespace: str, name: str, ref: BoundObjectReference) -> _Bound:
    """Look up the bound object; upstream's 404, 400 and 409 when it does not fit."""
    group, version, kind = _group_version_kind(ref)
    ref_name = ref.name or ""
    bound: _Bound
    if group == "" and kind == "Pod":
        pod = service.get(Pod, ref_name, namespace)
        if name != (pod.spec.service_account_name if pod.spec else None):
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{name}" to pod running with '
                "different serviceaccount name."
            )
        uid = pod.metadata.uid or ""
        bound = _Bound(pod=tokenclaims.Ref(ref_name, uid), node=_pod_node(service, pod))
    elif group == "" and kind == "Node":
        uid = service.get(Node, ref_name).metadata.uid or ""
        bound = _Bound(node=tokenclaims.Ref(ref_name, uid))
    elif group == "" and kind == "Secret":
        uid = service.get(Secret, ref_name, namespace).metadata.uid or ""
        bound = _Bound(secret=tokenclaims.Ref(ref_name, uid))
    else:
        raise errors.bad_request(
            f"cannot bind token to object of type {group}/{version}, Kind={kind}"
        )
    if ref.uid and ref.uid != uid:
        # NewConflict with the kind as the resource: 'Operation cannot be fulfilled on Pod "x"'.
        raise errors.conflict(
            kind,
            group,
            ref_name,
            f"the UID in the bound object reference ({ref.uid}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    return bound


def _pod_node(service: ApiService, pod: Pod) -> tokenclaims.Ref | None:
    """``ServiceAccountTokenPodNodeInfo``: the pod's node, by name only when it is gone."""
    node_name = pod.spec.node_name if pod.spec else None
    if not node_name:
        return None
    try:
        node = service.get(Node, node_name)
    except errors.NotFoundError:
        return tokenclaims.Ref(node_name, "")
    return tokenclaims.Ref(node_name, node.metadata.uid or "")


def _response_metadata(metadata: ObjectMeta, name: str, namespace: str, now: str) -> JsonDict:
    """The request's metadata with the system fields wiped and name, namespace and
    creation time filled in."""
    body = {key: value for key, value in to_dict(metadata).items() if key not in WIPED_METADATA}
    body["name"] = metadata.name or name
    body["namespace"] = metadata.namespace or namespace
    body["creationTimestamp"] = now
    return body


def _spec_json(spec: TokenRequestSpec) -> JsonDict:
    """The spec as Go encodes it: ``audiences`` and ``boundObjectRef`` never omitted."""
    ref = spec.bound_object_ref
    return {
        "audiences": list(spec.audiences or ()),
        "expirationSeconds": spec.expiration_seconds,
        "boundObjectRef": None if ref is None else to_dict(evolve(ref, extra={})),
    }


def create_token(
    service: ApiService,
    issuer: TokenIssuer,
    *,
    namespace: str,
    name: str,
    request: TokenRequest,
    now: float,
) -> IssuedToken:
    """``TokenREST.Create`` for the account ``namespace/name`` (see the module doc)."""
    service.check_namespace_for_create(ServiceAccount, namespace, name)
    metadata = request.metadata
    if metadata.name and metadata.name != name:
        raise _invalid(
            name, "metadata.name", metadata.name, "must match the service account name if specified"
        )
    if metadata.namespace and metadata.namespace != namespace:
        raise _invalid(
            name,
            "metadata.namespace",
            metadata.namespace,
            "must match the service account namespace if specified",
        )
    account = service.get(ServiceAccount, name, namespace)
    spec = request.spec or TokenRequestSpec()
    if not spec.audiences:
        spec = evolve(spec, audiences=issuer.api_audiences)
    request = evolve(request, spec=spec, status=None)
    problems = validate_token_request(request)
    if problems:
        raise errors.invalid_error(KIND, AUTHENTICATION_GROUP, "", problems)
    bound = _Bound()
    if spec.bound_object_ref is not None:
        bound = _bind(service, namespace, name, spec.bound_object_ref)
    warnings: list[str] = []
    expiration = spec.expiration_seconds or 0
    maximum = issuer.max_expiration_seconds
    if maximum > 0 and expiration > maximum:
        warnings.append(
            f"requested expiration of {expiration} seconds shortened to {maximum} seconds"
        )
        expiration = maximum
        spec = evolve(spec, expiration_seconds=maximum)
    # The safe transition of pod tokens: what admission asks for (3607 s) lasts a year,
    # and the token says from when on its use is stale.
    lifetime, warn_after = expiration, 0
    if (
        issuer.extend_expiration
        and bound.pod is not None
        and expiration == tokenclaims.WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
        and issuer.is_kube_audiences(spec.audiences or ())
    ):
        lifetime, warn_after = tokenclaims.EXPIRATION_EXTENSION_SECONDS, expiration
    public, private = tokenclaims.claims(
        namespace=namespace,
        service_account=tokenclaims.Ref(name, account.metadata.uid or ""),
        pod=bound.pod,
        secret=bound.secret,
        node=bound.node,
        expiration_seconds=lifetime,
        warn_after_seconds=warn_after,
        audiences=tuple(spec.audiences or ()),
        now=int(now),
        jti=issuer.new_jti(),
    )
    public = dataclasses.replace(public, issuer=issuer.signer.issuer)
    token = issuer.signer.sign(tokenclaims.payload(public, private))
    body: JsonDict = {
        "kind": KIND,
        "apiVersion": AUTHENTICATION_V1,
        "metadata": _response_metadata(metadata, name, namespace, rfc3339(now)),
        "spec": _spec_json(spec),
        "status": {"token": token, "expirationTimestamp": rfc3339(now + expiration)},
    }
    return IssuedToken(body, tuple(warnings))
