"""CertificateSigningRequest validation (certificates.k8s.io/v1).

Mirrors v1.32's ``pkg/apis/certificates/validation/validation.go``:

* ``validateCertificateSigningRequest`` (create, and again on every update): any name
  (``ValidateCertificateRequestName`` accepts all); ``spec.request`` must hold a PEM
  "CERTIFICATE REQUEST" whose signature checks (``ParseCSR`` + ``CheckSignature``);
  ``usages`` required, each a known ``KeyUsage``, none twice; ``signerName`` as
  ``ValidateSignerName`` (``pkg/apis/core/validation``) and never the v1beta1
  ``kubernetes.io/legacy-unknown``; ``expirationSeconds`` at least 600;
  ``status.conditions`` (type required, ``Approved``/``Denied``/``Failed`` only ``True``,
  Approved and Denied exclusive, no type twice); ``status.certificate`` only
  ``CERTIFICATE`` PEM blocks.
* ``validateCertificateSigningRequestUpdate``: Approved/Denied/Failed conditions are
  never removed; only the ``approval`` subresource adds or changes Approved/Denied; only
  ``status`` sets the certificate, and never replaces one.

The compatibility switches of ``getValidationOptions`` are kept: an update tolerates in
the new object what the stored one already had (unknown or duplicate usages, duplicate or
empty condition types, both Approved and Denied, an unparsable certificate it does not
change). Go's ``x509`` parse errors are not reproduced byte for byte: a request that is
PEM but not a PKCS#10 request reads ``x509: malformed certificate request``; a bad
signature reads as Go's verifier for the key type. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Final

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kubeprio.api import errors
from kubeprio.api.certificates import (
    APPROVED,
    DENIED,
    FAILED,
    KEY_USAGES,
    LEGACY_UNKNOWN,
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    certificate_of,
    conditions_of,
    spec_of,
)
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    index,
)

TRUE_ONLY_TYPES: Final = frozenset({APPROVED, DENIED, FAILED})
TRUE_ONLY: Final = ("True",)
ALL_STATUSES: Final = ("False", "True", "Unknown")
MIN_EXPIRATION_SECONDS: Final = 600
DOMAIN_MAX: Final = 253
SIGNER_NAME_MAX: Final = DOMAIN_MAX + (DOMAIN_MAX + 63 + 1) + 1
PEM_BLOCK: Final = re.compile(rb"-----BEGIN ([^-\r\n]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)
PARSE_CSR_ERROR: Final = "PEM block type must be CERTIFICATE REQUEST"
MALFORMED_CSR: Final = "x509: malformed certificate request"


def _pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """``pem.Decode`` repeated: (type, body text) of each block, headers included."""
    return [(m.group(1).decode("latin-1"), m.group(2)) for m in PEM_BLOCK.finditer(data)]


def request_error(request: bytes) -> str | None:
    """Why ``spec.request`` is unusable (``ParseCSR`` then ``CheckSignature``), or None."""
    blocks = _pem_blocks(request)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        return PARSE_CSR_ERROR
    try:
        csr = x509.load_pem_x509_csr(request)
    except ValueError:
        return MALFORMED_CSR
    try:
        valid = csr.is_signature_valid
    except (ValueError, InvalidSignature):
        valid = False
    if valid:
        return None
    try:
        key = csr.public_key()
    except ValueError:
        return MALFORMED_CSR
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    return "x509: cannot verify signature: algorithm unimplemented"


def certificate_error(pem_data: bytes) -> str | None:
    """``validateCertificate``: only header-less ``CERTIFICATE`` blocks, at least one."""
    if not pem_data:
        return None
    blocks = _pem_blocks(pem_data)
    for block_type, body in blocks:
        if block_type != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{block_type}"'
        if b":" in body.split(b"\n\n", 1)[0] and b"\n\n" in body:
            return "no PEM block headers are permitted"
        text = b"-----BEGIN CERTIFICATE-----\n" + body + b"-----END CERTIFICATE-----\n"
        try:
            x509.load_pem_x509_certificate(text)
        except ValueError:
            return "x509: malformed certificate"
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    return None


def bytes_value(data: bytes) -> GoValue:
    """A ``[]byte`` as ``%#v`` prints it (``[]byte{0x2d, 0x2d}``; nil when empty)."""
    if not data:
        return GoValue("[]byte(nil)")
    return GoValue("[]byte{" + ", ".join(hex(b) for b in data) + "}")


def validate_signer_name(signer_name: str, path: str) -> list[FieldError]:
    """``ValidateSignerName``: ``domain.tld/path``, DNS labels then subdomains."""
    if not signer_name:
        return [errors.required(path, "")]
    segments = signer_name.split("/")
    if len(segments) != 2:
        return [
            errors.invalid(
                path,
                signer_name,
                "must be a fully qualified domain and path of the form 'example.com/signer-name'",
            )
        ]
    domain, name_path = segments
    found: list[FieldError] = []
    if len(domain) > DOMAIN_MAX:
        found.append(errors.too_long(path, DOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        problems = dns1123_label_errors(label)
        if problems:
            found.extend(
                errors.invalid(path, domain, f'validating label "{label}": {p}') for p in problems
            )
            break
    if len(labels) < 2:
        found.append(
            errors.invalid(
                path, domain, "should be a domain with at least two segments separated by dots"
            )
        )
    for label in name_path.split("."):
        problems = dns1123_subdomain_errors(label)
        if problems:
            found.extend(
                errors.invalid(path, name_path, f'validating label "{label}": {p}')
                for p in problems
            )
            break
    if len(signer_name) > SIGNER_NAME_MAX:
        found.append(errors.too_long(path, SIGNER_NAME_MAX))
    return found


def _has_duplicates(values: tuple[str, ...]) -> bool:
    return len(set(values)) != len(values)


class _Options:
    """``certificateValidationOptions``: what this write may do, and what it tolerates
    because the stored object already had it."""

    def __init__(
        self, new: CertificateSigningRequest, old: CertificateSigningRequest | None
    ) -> None:
        old_types = [c.type for c in conditions_of(old)] if old is not None else []
        old_usages = (spec_of(old).usages or ()) if old is not None else ()
        self.setting_approval = False
        self.setting_certificate = False
        self.both_approved_and_denied = APPROVED in old_types and DENIED in old_types
        self.legacy_signer = old is not None and spec_of(old).signer_name == LEGACY_UNKNOWN
        self.duplicate_types = len(set(old_types)) != len(old_types)
        self.empty_type = any(not t for t in old_types)
        self.arbitrary_certificate = old is not None and (
            certificate_of(new) == certificate_of(old)
            or certificate_error(certificate_of(old)) is not None
        )
        self.unknown_usages = any(u not in KEY_USAGES for u in old_usages)
        self.duplicate_usages = _has_duplicates(tuple(old_usages))


def _validate(csr: CertificateSigningRequest, options: _Options) -> list[FieldError]:
    """``validateCertificateSigningRequest`` beyond the object metadata."""
    spec = spec_of(csr)
    request = spec.request or b""
    signer_name = spec.signer_name or ""
    found: list[FieldError] = []
    problem = request_error(request)
    if problem is not None:
        found.append(errors.invalid("spec.request", bytes_value(request), problem))
    usages = spec.usages or ()
    if not usages:
        found.append(errors.required("spec.usages", ""))
    if not options.unknown_usages:
        found.extend(
            errors.not_supported(index("spec.usages", i), usage, sorted(KEY_USAGES))
            for i, usage in enumerate(usages)
            if usage not in KEY_USAGES
        )
    if not options.duplicate_usages:
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                found.append(errors.duplicate(index("spec.usages", i), usage))
            seen.add(usage)
    if not options.legacy_signer and signer_name == LEGACY_UNKNOWN:
        found.append(
            errors.invalid(
                "spec.signerName",
                signer_name,
                "the legacy signerName is not allowed via this API version",
            )
        )
    else:
        found.extend(validate_signer_name(signer_name, "spec.signerName"))
    seconds = spec.expiration_seconds
    if seconds is not None and seconds < MIN_EXPIRATION_SECONDS:
        found.append(
            errors.invalid(
                "spec.expirationSeconds",
                seconds,
                "may not specify a duration less than 600 seconds (10 minutes)",
            )
        )
    found.extend(_validate_conditions(conditions_of(csr), options))
    if not options.arbitrary_certificate:
        cert_problem = certificate_error(certificate_of(csr))
        if cert_problem is not None:
            found.append(errors.invalid("status.certificate", "<certificate data>", cert_problem))
    return found


def _validate_conditions(
    conditions: tuple[CertificateSigningRequestCondition, ...], options: _Options
) -> list[FieldError]:
    """``validateConditions``."""
    path = "status.conditions"
    found: list[FieldError] = []
    seen: set[str] = set()
    has_approved = has_denied = False
    for i, condition in enumerate(conditions):
        at = index(path, i)
        if not options.empty_type and not condition.type:
            found.append(errors.required(child(at, "type"), ""))
        allowed = TRUE_ONLY if condition.type in TRUE_ONLY_TYPES else ALL_STATUSES
        if not condition.status:
            found.append(errors.required(child(at, "status"), ""))
        elif condition.status not in allowed:
            found.append(errors.not_supported(child(at, "status"), condition.status, allowed))
        if not options.both_approved_and_denied:
            exclusive = (condition.type == APPROVED and has_denied) or (
                condition.type == DENIED and has_approved
            )
            has_approved = has_approved or condition.type == APPROVED
            has_denied = has_denied or condition.type == DENIED
            if exclusive:
                found.append(
                    errors.invalid(
                        child(at, "type"),
                        condition.type,
                        "Approved and Denied conditions are mutually exclusive",
                    )
                )
        if not options.duplicate_types:
            condition_type = condition.type or ""
            if condition_type in seen:
                found.append(errors.duplicate(child(at, "type"), condition_type))
            seen.add(condition_type)
    return found


def _of_type(
    csr: CertificateSigningRequest, condition_type: str
) -> list[CertificateSigningRequestCondition]:
    return [c for c in conditions_of(csr) if c.type == condition_type]


def _validate_update(
    new: CertificateSigningRequest, old: CertificateSigningRequest, options: _Options
) -> list[FieldError]:
    """``validateCertificateSigningRequestUpdate`` beyond the metadata rules."""
    found = _validate(new, options)
    for condition_type in (APPROVED, DENIED, FAILED):
        if len(_of_type(new, condition_type)) < len(_of_type(old, condition_type)):
            found.append(
                errors.forbidden(
                    "status.conditions",
                    f'updates may not remove a condition of type "{condition_type}"',
                )
            )
    if not options.setting_approval:
        for condition_type in (APPROVED, DENIED):
            old_conditions = _of_type(old, condition_type)
            new_conditions = _of_type(new, condition_type)
            if len(new_conditions) > len(old_conditions):
                found.append(
                    errors.forbidden(
                        "status.conditions",
                        f'updates may not add a condition of type "{condition_type}"',
                    )
                )
            elif len(new_conditions) == len(old_conditions) and new_conditions != old_conditions:
                # Upstream appends a go-cmp diff of the two lists after the newline.
                found.append(
                    errors.forbidden(
                        "status.conditions",
                        f'updates may not modify a condition of type "{condition_type}"\n',
                    )
                )
    if certificate_of(new) != certificate_of(old):
        if not options.setting_certificate:
            found.append(
                errors.forbidden("status.certificate", "updates may not set certificate content")
            )
        elif certificate_of(old):
            found.append(
                errors.forbidden(
                    "status.certificate", "updates may not modify existing certificate content"
                )
            )
    return found


def validate_certificate_signing_request(csr: CertificateSigningRequest) -> list[FieldError]:
    """``ValidateCertificateSigningRequestCreate``."""
    return _validate(csr, _Options(csr, None))


def validate_update(
    new: CertificateSigningRequest, old: CertificateSigningRequest
) -> list[FieldError]:
    """``ValidateCertificateSigningRequestUpdate`` (the main resource)."""
    return _validate_update(new, old, _Options(new, old))


def validate_status_update(
    new: CertificateSigningRequest, old: CertificateSigningRequest
) -> list[FieldError]:
    """``ValidateCertificateSigningRequestStatusUpdate``: may set the certificate."""
    options = _Options(new, old)
    options.setting_certificate = True
    return _validate_update(new, old, options)


def validate_approval_update(
    new: CertificateSigningRequest, old: CertificateSigningRequest
) -> list[FieldError]:
    """``ValidateCertificateSigningRequestApprovalUpdate``: may add Approved/Denied."""
    options = _Options(new, old)
    options.setting_approval = True
    return _validate_update(new, old, options)


CREATE: Final[dict[type[Any], KindValidator]] = {
    CertificateSigningRequest: validate_certificate_signing_request,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {CertificateSigningRequest: validate_update}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    CertificateSigningRequest: validate_status_update,
}
APPROVAL_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    CertificateSigningRequest: validate_approval_update,
}
