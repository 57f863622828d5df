"""TokenRequest validation (authentication.k8s.io/v1).

Mirrors ``ValidateTokenRequest`` of upstream ``pkg/apis/authentication/validation/validation.go``
(v1.32): the requested lifetime (``spec.expirationSeconds``, already defaulted to 3600) is
at least ten minutes and at most 2^32 seconds. Nothing else of the request is validated
there: audiences and the bound object are judged by the ``serviceaccounts/token`` REST
(``apiserver.tokenrequest``), which also reports these errors as
``TokenRequest.authentication.k8s.io "" is invalid: ...``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.tokenrequest import TokenRequest

MIN_TOKEN_AGE_SECONDS: Final = 10 * 60
"""``MinTokenAgeSec``: the shortest lifetime a client may ask for."""
MAX_TOKEN_AGE_SECONDS: Final = 1 << 32
"""The longest lifetime a client may ask for (2^32 seconds, about 136 years)."""


def validate_token_request(request: TokenRequest) -> list[FieldError]:
    """``ValidateTokenRequest``: the lifetime's two bounds, each with upstream's text."""
    seconds = (request.spec.expiration_seconds if request.spec else None) or 0
    problems: list[FieldError] = []
    path = "spec.expirationSeconds"
    if seconds < MIN_TOKEN_AGE_SECONDS:
        problems.append(
            errors.invalid(path, seconds, "may not specify a duration less than 10 minutes")
        )
    if seconds > MAX_TOKEN_AGE_SECONDS:
        problems.append(
            errors.invalid(path, seconds, "may not specify a duration larger than 2^32 seconds")
        )
    return problems
