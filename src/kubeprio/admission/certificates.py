"""The three certificate admission plugins: who may approve, who may sign, and which
subjects the API server client signer refuses.

Mirrors v1.32's ``plugin/pkg/admission/certificates``:

* **CertificateApproval** (validating, ``certificatesigningrequests/approval`` updates):
  the user needs the ``approve`` verb on the ``signers`` resource of
  ``certificates.k8s.io`` named after the *stored* request's signer, or after its domain
  with ``/*`` (``IsAuthorizedForSignerName``); otherwise 403 ``user not permitted to
  approve requests with signerName "..."``.
* **CertificateSigning** (validating, ``certificatesigningrequests/status`` updates that
  change the certificate or the conditions): the same check with the ``sign`` verb
  (``user not permitted to sign requests with signerName "..."``).
* **CertificateSubjectRestriction** (validating, creates of the main resource): a
  ``kubernetes.io/kube-apiserver-client`` request whose subject names the
  ``system:masters`` organization is refused, so a CSR cannot mint a cluster admin.

The first two need the authorizer, which lives above this layer: the composition root
hands in ``SignerAuthorizer`` (``kubeprio serve`` asks its RBAC chain); without one
(``kubeprio simulate`` and ``check``, which have no users) they are not built. In-process
writers (no user) pass, as the controller-manager's signer does upstream with its own
RBAC grants. Never writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from cryptography import x509
from cryptography.x509.oid import NameOID

from kubeprio.admission.chain import (
    MASTERS_GROUP,
    AdmissionOutcome,
    AdmissionRequest,
    Operation,
    UserInfo,
)
from kubeprio.api import errors
from kubeprio.api.certificates import (
    KUBE_APISERVER_CLIENT,
    CertificateSigningRequest,
    certificate_of,
    conditions_of,
    spec_of,
)
from kubeprio.api.validation.certificates import PARSE_CSR_ERROR, request_error

APPROVAL: Final = "CertificateApproval"
SIGNING: Final = "CertificateSigning"
SUBJECT_RESTRICTION: Final = "CertificateSubjectRestriction"

SignerAuthorizer = Callable[[UserInfo, str, str], bool]
"""``(user, verb, name) -> allowed`` for the ``signers`` resource of certificates.k8s.io."""


def authorized_for_signer(
    authorize: SignerAuthorizer, user: UserInfo, verb: str, signer_name: str
) -> bool:
    """``IsAuthorizedForSignerName``: the exact signer name, then ``<domain>/*``."""
    if authorize(user, verb, signer_name):
        return True
    domain = signer_name.split("/")[0]
    return authorize(user, verb, domain + "/*")


def _forbidden(request: AdmissionRequest, detail: str) -> errors.ForbiddenError:
    """``admission.NewForbidden``: the request's resource and name, and ``detail``."""
    return errors.forbidden_error(
        request.resource.plural, request.resource.group, request.name, detail
    )


class _SignerCheck:
    """A subresource update that needs ``verb`` on the stored request's signer."""

    validates_kinds = (CertificateSigningRequest,)

    plugin_name: str
    subresource: str
    verb: str
    action: str

    def __init__(self, authorize: SignerAuthorizer) -> None:
        self._authorize = authorize

    @property
    def name(self) -> str:
        """The plugin's upstream name."""
        return self.plugin_name

    def applies(self, new: CertificateSigningRequest, old: CertificateSigningRequest) -> bool:
        """Whether this update is one the plugin checks."""
        return True

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Raise 403 when the user may not ``verb`` the stored request's signer."""
        new, old, user = request.obj, request.old_obj, request.user
        if (
            request.operation is not Operation.UPDATE
            or request.subresource != self.subresource
            or not isinstance(new, CertificateSigningRequest)
            or not isinstance(old, CertificateSigningRequest)
            or user is None
            or not self.applies(new, old)
        ):
            return
        # The stored signer name: an update cannot dodge the check by changing it.
        signer = spec_of(old).signer_name or ""
        if not authorized_for_signer(self._authorize, user, self.verb, signer):
            raise _forbidden(
                request, f'user not permitted to {self.action} requests with signerName "{signer}"'
            )


class CertificateApprovalPlugin(_SignerCheck):
    """``approval.Plugin``: the ``approve`` verb on the signer."""

    plugin_name = APPROVAL
    subresource = "approval"
    verb = "approve"
    action = "approve"


class CertificateSigningPlugin(_SignerCheck):
    """``signing.Plugin``: the ``sign`` verb on the signer, when the status changes."""

    plugin_name = SIGNING
    subresource = "status"
    verb = "sign"
    action = "sign"

    def applies(self, new: CertificateSigningRequest, old: CertificateSigningRequest) -> bool:
        """Only writes that change the certificate or the conditions."""
        return certificate_of(new) != certificate_of(old) or conditions_of(new) != conditions_of(
            old
        )


class CertificateSubjectRestrictionPlugin:
    """``subjectrestriction.Plugin``: no ``system:masters`` client certificates."""

    validates_kinds = (CertificateSigningRequest,)
    ignores_subresources = True

    @property
    def name(self) -> str:
        """``CertificateSubjectRestriction``."""
        return SUBJECT_RESTRICTION

    def validate(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> None:
        """Raise 403 for a kube-apiserver-client request with organization system:masters."""
        csr = request.obj
        if (
            request.operation is not Operation.CREATE
            or request.subresource
            or not isinstance(csr, CertificateSigningRequest)
            or spec_of(csr).signer_name != KUBE_APISERVER_CLIENT
        ):
            return
        pem = spec_of(csr).request or b""
        if request_error(pem) == PARSE_CSR_ERROR:
            raise _forbidden(request, f"failed to parse CSR: {PARSE_CSR_ERROR}")
        try:
            subject = x509.load_pem_x509_csr(pem).subject
        except ValueError:
            # Go parses what validation later refuses; its message is left to validation.
            return
        organizations = subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        if any(attribute.value == MASTERS_GROUP for attribute in organizations):
            raise _forbidden(
                request,
                f"use of {KUBE_APISERVER_CLIENT} signer with {MASTERS_GROUP} group is not allowed",
            )
