"""Answering a TokenReview: "who does this token speak for?" (``authentication.k8s.io/v1``).

What it is: upstream's ``pkg/registry/authentication/tokenreview/storage.go`` (``REST.Create``,
v1.32). A TokenReview is create-only, cluster-scoped and never stored; the caller needs
``create`` on ``tokenreviews`` (upstream's ``system:auth-delegator`` grants it):

* an empty ``spec.token`` is upstream's 400 "token is required for TokenReview in
  authentication";
* the token is put to the server's own token authenticators (the token file, service
  account tokens) for ``spec.audiences``, or the API audiences when that is empty;
* the answer echoes the object with ``status.authenticated`` (left out when false, Go's
  ``omitempty``), ``status.user`` (user name, uid, groups, extras; always written, an
  empty object for a refused token), ``status.audiences`` (those the token is valid for,
  met with the requested ones) and ``status.error`` (why it was refused).

Who drives it: ``apiserver.rest`` for a POST to ``tokenreviews``, with the union of
authenticators ``serve`` configures (``apiserver.authn.UnionAuthenticator``). Without one
(a server with no authentication) the object comes back unchanged, as upstream's
``tokenAuthenticator == nil``. Pure: no I/O beyond what the authenticators read.
"""

from __future__ import annotations

from typing import Protocol

from kubeprio.api import errors
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.reviews import TokenReview, TokenReviewStatus, UserInfo
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.authn import TokenResponse

TOKEN_REQUIRED = "token is required for TokenReview in authentication"


class TokenReviewAuthenticator(Protocol):
    """The server's token authenticators as a TokenReview asks them (``UnionAuthenticator``)."""

    def review_token(self, token: str, audiences: tuple[str, ...] | None) -> TokenResponse | str:
        """The response for the token, or the error why none authenticated it."""
        ...


def answer(review: TokenReview, authenticator: TokenReviewAuthenticator | None) -> JsonDict:
    """``REST.Create``: the review with its status filled in."""
    if not review.spec.token:
        raise errors.bad_request(TOKEN_REQUIRED)
    if authenticator is not None:
        review = evolve(review, status=_status(review, authenticator))
    body = to_dict(review)
    # Go writes the zero ObjectMeta's creationTimestamp as null.
    body["metadata"] = {"creationTimestamp": None, **body.get("metadata", {})}
    return body


def _status(review: TokenReview, authenticator: TokenReviewAuthenticator) -> TokenReviewStatus:
    token = review.spec.token or ""
    # An empty spec.audiences means the API's own (``r.apiAudiences``).
    requested = tuple(review.spec.audiences or ()) or None
    result = authenticator.review_token(token, requested)
    if isinstance(result, str):
        return TokenReviewStatus(user=UserInfo(), error=result)
    user = result.user
    return TokenReviewStatus(
        authenticated=True,
        user=UserInfo(
            username=user.name or None,
            uid=user.uid or None,
            groups=user.groups or None,
            user_extra=dict(user.extra) or None,
        ),
        audiences=result.audiences or None,
    )
