"""TokenRequest defaulting and validation (``api.tokenrequest``, ``api.validation.authentication``).

Upstream rules checked: ``SetDefaults_TokenRequestSpec`` (``pkg/apis/authentication/v1/
defaults.go``: ``expirationSeconds`` defaults to 3600 only when unset) and
``ValidateTokenRequest`` (``pkg/apis/authentication/validation/validation.go``, v1.32:
at least ``MinTokenAgeSec`` = 600 seconds, at most 2^32 seconds, with their texts).
"""

from __future__ import annotations

import pytest

from kubeprio.api.tokenrequest import TokenRequest, TokenRequestSpec, default_token_request
from kubeprio.api.validation.authentication import validate_token_request


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, 3600),
        (TokenRequestSpec(), 3600),
        (TokenRequestSpec(audiences=("api",)), 3600),
        (TokenRequestSpec(expiration_seconds=7200), 7200),
        (TokenRequestSpec(expiration_seconds=0), 0),
    ],
    ids=["no-spec", "empty-spec", "audiences-only", "given", "explicit-zero-kept"],
)
def test_expiration_seconds_defaults_to_an_hour_only_when_unset(spec, expected):
    defaulted = default_token_request(TokenRequest(spec=spec))
    assert defaulted.spec is not None
    assert defaulted.spec.expiration_seconds == expected


@pytest.mark.parametrize(
    ("seconds", "messages"),
    [
        (600, []),
        (3600, []),
        (1 << 32, []),
        (599, ["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"]),
        (0, ["spec.expirationSeconds: Invalid value: 0: may not specify a duration less than 10 minutes"]),
        (-5, ["spec.expirationSeconds: Invalid value: -5: may not specify a duration less than 10 minutes"]),
        ((1 << 32) + 1, ["spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"]),
    ],
    ids=["ten-minutes", "an-hour", "2^32", "just-short", "zero", "negative", "past-2^32"],
)  # fmt: skip
def test_the_lifetime_is_between_ten_minutes_and_2_to_the_32_seconds(seconds, messages):
    request = TokenRequest(spec=TokenRequestSpec(expiration_seconds=seconds))
    assert [str(problem) for problem in validate_token_request(request)] == messages
