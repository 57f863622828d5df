"""The Table of CertificateSigningRequests (``kubectl get csr``).

NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION, as v1.32's
``pkg/printers/internalversion/printers.go`` (``certificateSigningRequestColumnDefinitions``,
``printCertificateSigningRequest``, ``extractCSRStatus``): SIGNERNAME and
REQUESTEDDURATION are ``<none>`` when unset, the duration is ``HumanDuration`` of
``expirationSeconds``; CONDITION is ``Denied``, else ``Approved``, else ``Pending``, then
``,Failed`` and ``,Issued`` when they apply. Column descriptions are the v1 API's field
docs, as upstream takes them from ``SwaggerDoc()``. Who drives it: ``apiserver.tables``.
Pure; ``now`` is the caller's.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.certificates import (
    APPROVED,
    DENIED,
    FAILED,
    CertificateSigningRequest,
    certificate_of,
    conditions_of,
    spec_of,
)
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    human_duration,
    name_column,
    since,
)

NONE: Final = "<none>"

SIGNER_NAME_DOC: Final = (
    "signerName indicates the requested signer, and is a qualified "
    "name.\n\nList/watch requests for CertificateSigningRequests can filter on this "
    'field using a "spec.signerName=NAME" fieldSelector.\n\nWell-known Kubernetes '
    'signers are:\n 1. "kubernetes.io/kube-apiserver-client": issues client '
    "certificates that can be used to authenticate to kube-apiserver.\n  Requests "
    "for this signer are never auto-approved by kube-controller-manager, can be "
    'issued by the "csrsigning" controller in kube-controller-manager.\n 2. '
    '"kubernetes.io/kube-apiserver-client-kubelet": issues client certificates that '
    "kubelets use to authenticate to kube-apiserver.\n  Requests for this signer can "
    'be auto-approved by the "csrapproving" controller in kube-controller-manager, '
    'and can be issued by the "csrsigning" controller in kube-controller-manager.\n '
    '3. "kubernetes.io/kubelet-serving" issues serving certificates that kubelets '
    "use to serve TLS endpoints, which kube-apiserver can connect to securely.\n  "
    "Requests for this signer are never auto-approved by kube-controller-manager, "
    'and can be issued by the "csrsigning" controller in '
    "kube-controller-manager.\n\nMore details are available at "
    "https://k8s.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers\n\nCustom "
    "signerNames can also be specified. The signer defines:\n 1. Trust distribution: "
    "how trust (CA bundles) are distributed.\n 2. Permitted subjects: and behavior "
    "when a disallowed subject is requested.\n 3. Required, permitted, or forbidden "
    "x509 extensions in the request (including whether subjectAltNames are allowed, "
    "which types, restrictions on allowed values) and behavior when a disallowed "
    "extension is requested.\n 4. Required, permitted, or forbidden key usages / "
    "extended key usages.\n 5. Expiration/certificate lifetime: whether it is fixed "
    "by the signer, configurable by the admin.\n 6. Whether or not requests for CA "
    "certificates are allowed."
)

REQUEST_DOC: Final = (
    'request contains an x509 certificate signing request encoded in a "CERTIFICATE '
    'REQUEST" PEM block. When serialized as JSON or YAML, the data is additionally '
    "base64-encoded."
)

EXPIRATION_SECONDS_DOC: Final = (
    "expirationSeconds is the requested duration of validity of the issued "
    "certificate. The certificate signer may issue a certificate with a different "
    "validity duration so a client must check the delta between the notBefore and "
    "and notAfter fields in the issued certificate to determine the actual "
    "duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes "
    "signers will honor this field as long as the requested duration is not greater "
    "than the maximum duration they will honor per the --cluster-signing-duration "
    "CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not "
    "honor this field for various reasons:\n\n  1. Old signer that is unaware of the "
    "field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer "
    "whose configured maximum is shorter than the requested duration\n  3. Signer "
    "whose configured minimum is longer than the requested duration\n\nThe minimum "
    "valid value for expirationSeconds is 600, i.e. 10 minutes."
)

CONDITIONS_DOC: Final = (
    'conditions applied to the request. Known conditions are "Approved", "Denied", and "Failed".'
)

CSR_COLUMNS: Final = (
    name_column(),
    age_column(),
    Column("SignerName", "string", SIGNER_NAME_DOC),
    Column("Requestor", "string", REQUEST_DOC),
    Column("RequestedDuration", "string", EXPIRATION_SECONDS_DOC),
    Column("Condition", "string", CONDITIONS_DOC),
)


def csr_condition(csr: CertificateSigningRequest) -> str:
    """``extractCSRStatus``: Denied over Approved over Pending, then Failed and Issued."""
    types = {condition.type for condition in conditions_of(csr)}
    if DENIED in types:
        text = "Denied"
    elif APPROVED in types:
        text = "Approved"
    else:
        text = "Pending"
    if FAILED in types:
        text += ",Failed"
    if certificate_of(csr):
        text += ",Issued"
    return text


def print_csr(csr: CertificateSigningRequest, now: float) -> tuple[Cells, RowConditions]:
    """``printCertificateSigningRequest``."""
    spec = spec_of(csr)
    seconds = spec.expiration_seconds
    return [
        csr.metadata.name or "",
        since(csr.metadata.creation_timestamp, now),
        spec.signer_name or NONE,
        spec.username or "",
        NONE if seconds is None else human_duration(seconds),
        csr_condition(csr),
    ], None
