"""The admission.k8s.io AdmissionReview a webhook is sent, and what its answer means.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook``:

* ``request/admissionreview.go``: ``CreateAdmissionObjects`` picks the first of the
  webhook's ``admissionReviewVersions`` the server speaks (``v1``, ``v1beta1``; the JSON
  of the two is the same) and ``CreateV1AdmissionReview`` fills the request: a fresh
  ``uid``, ``kind``/``resource``/``subResource`` as the webhook is sent them (matchPolicy
  Equivalent may pick another version), ``requestKind``/``requestResource``/
  ``requestSubResource`` as the request came, ``name``, ``namespace``, ``operation``,
  ``userInfo``, ``object``, ``oldObject``, ``dryRun`` and ``options`` (the operation's
  ``CreateOptions``/``UpdateOptions``/``DeleteOptions``, ``admission.operationoptions``);
  a DELETE sends no ``object`` and the stored one as ``oldObject``.
* ``VerifyAdmissionResponse``: the response must be there, carry the request's uid and
  the same apiVersion/kind, and a mutating webhook's ``patch`` and ``patchType`` come
  together (a validating webhook may send neither); each failure is the upstream text.
* ``errors/statuserror.go`` (``ToStatusErr``): a refusal becomes ``admission webhook
  "NAME" denied the request: MESSAGE`` (or ``: REASON``, or `` without explanation``),
  with the webhook's code (400 when it gave none or less) and reason.

Who uses it: ``admission.webhookdispatch``. Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from typing import Any, Final

from kubeprio.admission import webhookmatching
from kubeprio.admission.chain import AdmissionRequest, UserInfo
from kubeprio.admission.operationoptions import operation_options
from kubeprio.admission.webhookmatching import Invocation
from kubeprio.api import errors
from kubeprio.api.gotext import go_quote
from kubeprio.api.meta import Status, StatusDetails
from kubeprio.api.serialization import DecodeError, from_dict
from kubeprio.api.webhookconfiguration import AnyWebhook

REVIEW_GROUP: Final = "admission.k8s.io"
SUPPORTED_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
IN_PROCESS_USER: Final = UserInfo(
    name="system:kube-controller-manager", groups=("system:authenticated",)
)
"""Who kubeprio's in-process components (controllers, kubelets) write as, for webhooks."""


class InvalidResponseError(Exception):
    """A webhook's answer that upstream refuses; the message is upstream's reason text."""


def review_version(webhook: AnyWebhook) -> str | None:
    """The AdmissionReview version to send: the webhook's first one the server speaks."""
    for version in webhook.admission_review_versions or ():
        if version in SUPPORTED_REVIEW_VERSIONS:
            return version
    return None


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _gvr(group: str, version: str, resource: str) -> dict[str, str]:
    return {"group": group, "version": version, "resource": resource}


def _user_info(user: UserInfo | None) -> dict[str, Any]:
    """``authenticationv1.UserInfo`` (every field ``omitempty``)."""
    user = user or IN_PROCESS_USER
    out: dict[str, Any] = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {key: list(values) for key, values in user.extra}
    return out


def build_review(
    *,
    uid: str,
    version: str,
    invocation: Invocation,
    request: AdmissionRequest,
    obj: dict[str, Any] | None,
    old_obj: dict[str, Any] | None,
) -> dict[str, Any]:
    """``CreateV1AdmissionReview`` as JSON (``obj``/``old_obj`` already encoded, at the
    version the webhook is sent)."""
    info = request.resource
    written_kind = webhookmatching.request_kind(info, request.subresource)
    body: dict[str, Any] = {
        "uid": uid,
        "kind": _gvk(*invocation.kind),
        "resource": _gvr(invocation.group, invocation.version, invocation.resource),
    }
    if invocation.subresource:
        body["subResource"] = invocation.subresource
    body["requestKind"] = _gvk(*written_kind)
    body["requestResource"] = _gvr(info.group, info.version, info.plural)
    if request.subresource:
        body["requestSubResource"] = request.subresource
    if request.name:
        body["name"] = request.name
    if request.namespace:
        body["namespace"] = request.namespace
    body.update(
        operation=str(request.operation),
        userInfo=_user_info(request.user),
        object=obj,
        oldObject=old_obj,
        dryRun=request.dry_run,
        options=operation_options(request),
    )
    return {"kind": "AdmissionReview", "apiVersion": f"{REVIEW_GROUP}/{version}", "request": body}


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewResponse:
    """A verified webhook answer."""

    allowed: bool
    result: dict[str, Any] | None
    patch: bytes
    patch_type: str
    warnings: tuple[str, ...]


def _gvk_text(review: dict[str, Any]) -> str:
    """``schema.GroupVersionKind.String()`` of a decoded review."""
    api_version = str(review.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={review.get('kind') or ''}"


def verify_response(review: object, *, uid: str, version: str, mutating: bool) -> ReviewResponse:
    """``VerifyAdmissionResponse``; raises ``InvalidResponseError`` with upstream's text."""
    if not isinstance(review, dict):
        raise InvalidResponseError("webhook response was absent")
    response = review.get("response")
    if not isinstance(response, dict):
        raise InvalidResponseError("webhook response was absent")
    got_uid = str(response.get("uid") or "")
    if got_uid != uid:
        raise InvalidResponseError(
            f"expected response.uid={go_quote(uid)}, got {go_quote(got_uid)}"
        )
    expected = f"{REVIEW_GROUP}/{version}, Kind=AdmissionReview"
    if _gvk_text(review) != expected:
        raise InvalidResponseError(
            f"expected webhook response of {expected}, got {_gvk_text(review)}"
        )
    raw_patch = response.get("patch") or ""
    try:
        patch = base64.b64decode(str(raw_patch), validate=True) if raw_patch else b""
    except (binascii.Error, ValueError) as exc:
        raise InvalidResponseError(f"illegal base64 data in response.patch: {exc}") from None
    patch_type = str(response.get("patchType") or "")
    if mutating and patch and not patch_type:
        raise InvalidResponseError("webhook returned response.patch but not response.patchType")
    if mutating and not patch and patch_type:
        raise InvalidResponseError("webhook returned response.patchType but not response.patch")
    if not mutating and patch:
        raise InvalidResponseError("validating webhook may not return response.patch")
    if not mutating and patch_type:
        raise InvalidResponseError("validating webhook may not return response.patchType")
    result = response.get("status")
    warnings = response.get("warnings") or ()
    return ReviewResponse(
        allowed=response.get("allowed") is True,
        result=result if isinstance(result, dict) else None,
        patch=patch,
        patch_type=patch_type,
        warnings=tuple(str(w) for w in warnings) if isinstance(warnings, list) else (),
    )


def denial(webhook_name: str, result: dict[str, Any] | None) -> errors.StatusError:
    """``ToStatusErr``: the Status a refusal is answered with."""
    denied_by = f"admission webhook {go_quote(webhook_name)} denied the request"
    result = result or {}
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    message = str(result.get("message") or "")
    reason = str(result.get("reason") or "")
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details: StatusDetails | None = None
    if isinstance(result.get("details"), dict):
        try:
            details = from_dict(StatusDetails, result["details"])
        except DecodeError:
            details = None
    status = Status(
        status="Failure",
        message=text,
        reason=reason or None,
        details=details,
        code=code,
    )
    return errors.StatusError(status)
