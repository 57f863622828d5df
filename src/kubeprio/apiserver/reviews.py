"""Answering the reviews: ``kubectl auth can-i``, ``can-i --list``, ``whoami``, and the
access reviews about another subject (``apiserver.subjectaccessreview``).

What it is: the create handlers of the three never-stored self kinds, as upstream's
``pkg/registry/authorization/selfsubjectaccessreview``, ``.../selfsubjectrulesreview``
and ``pkg/registry/authentication/selfsubjectreview`` write them:

* SelfSubjectAccessReview: validated first (exactly one of ``resourceAttributes`` and
  ``nonResourceAttributes``; selectors raw or as requirements; ``metadata`` empty), then the caller's request is put to the
  authorizer; the object comes back with ``status.allowed`` and the reason;
* SelfSubjectRulesReview: ``spec.namespace`` is required ("no namespace on request");
  the status lists the authorizer's rules for the caller there;
* SelfSubjectReview: the caller's user name, uid, groups and extra.

Each needs a caller: without one (a server with no authentication) the answer is
upstream's 400 "no user present on request". Answers are JSON shaped as upstream's
encoder writes them (``allowed``, ``incomplete`` and both rule lists always present,
``metadata.creationTimestamp: null`` for the two authorization reviews).

Who drives it: ``apiserver.rest`` for a POST to one of ``api.kinds.REVIEWS``, with the
authorizer ``serve`` configured (``authz.AllowAll`` when there is none). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors, kinds
from kubeprio.api.model import JsonDict
from kubeprio.api.reviews import (
    AUTHENTICATION_V1,
    AUTHORIZATION_GROUP,
    AUTHORIZATION_V1,
    LocalSubjectAccessReview,
    SelfSubjectAccessReview,
    SelfSubjectReview,
    SelfSubjectRulesReview,
    SubjectAccessReview,
    SubjectAccessReviewStatus,
)
from kubeprio.api.reviews import UserInfo as ReviewedUser
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver import subjectaccessreview
from kubeprio.apiserver.authz import ReviewingAuthorizer
from kubeprio.apiserver.subjectaccessreview import (
    attribute_errors,
    metadata_json,
    review_attributes,
    selector_errors,
)
from kubeprio.clock import rfc3339

MODELS: Final = frozenset(info.model for info in kinds.REVIEWS)
"""The review kinds' models."""


def _caller(user: UserInfo | None) -> UserInfo:
    if user is None:
        raise errors.bad_request("no user present on request")
    return user


def answer(
    review: Any,
    user: UserInfo | None,
    authorizer: ReviewingAuthorizer,
    *,
    now: float,
    namespace: str | None = None,
) -> JsonDict:
    """The created review with its status filled in (``namespace``: the request's)."""
    if isinstance(review, SubjectAccessReview | LocalSubjectAccessReview):
        return subjectaccessreview.answer(review, authorizer, namespace=namespace)
    if isinstance(review, SelfSubjectAccessReview):
        return access_review(review, user, authorizer)
    if isinstance(review, SelfSubjectRulesReview):
        return rules_review(review, user, authorizer)
    # ``rest`` routes only the review kinds here (``MODELS``): the last is the identity.
    assert isinstance(review, SelfSubjectReview), type(review).__name__
    return identity_review(_caller(user), now=now)


def _validate_access_review(review: SelfSubjectAccessReview) -> None:
    """``ValidateSelfSubjectAccessReview``."""
    spec = review.spec
    resource = spec.resource_attributes if spec else None
    problems = attribute_errors(resource, spec.non_resource_attributes if spec else None)
    problems.extend(selector_errors(resource))
    if metadata_json(review):
        problems.append(errors.invalid("metadata", to_dict(review.metadata), "must be empty"))
    if problems:
        # Upstream decodes into the internal type, whose kind is empty: the message
        # names only the group (".authorization.k8s.io").
        raise errors.invalid_error("", AUTHORIZATION_GROUP, "", problems)


def access_review(
    review: SelfSubjectAccessReview, user: UserInfo | None, authorizer: ReviewingAuthorizer
) -> JsonDict:
    """``kubectl auth can-i VERB RESOURCE``: may the caller make this request?"""
    _validate_access_review(review)
    caller = _caller(user)
    assert review.spec is not None  # validated above
    attrs = review_attributes(
        caller, review.spec.resource_attributes, review.spec.non_resource_attributes
    )
    decision = authorizer.decide(attrs)
    status = SubjectAccessReviewStatus(allowed=decision.allowed, reason=decision.reason or None)
    return {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": AUTHORIZATION_V1,
        "metadata": {"creationTimestamp": None},
        "spec": to_dict(review.spec),
        "status": to_dict(status),
    }


def rules_review(
    review: SelfSubjectRulesReview, user: UserInfo | None, authorizer: ReviewingAuthorizer
) -> JsonDict:
    """``kubectl auth can-i --list``: everything the caller may do in a namespace."""
    caller = _caller(user)
    namespace = review.spec.namespace if review.spec else None
    if not namespace:
        raise errors.bad_request("no namespace on request")
    rules = authorizer.rules_for(caller, namespace)
    # Upstream answers with a new object: the spec it was asked about is not echoed.
    return {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": AUTHORIZATION_V1,
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": to_dict(rules),
    }


def identity_review(user: UserInfo, *, now: float) -> JsonDict:
    """``kubectl auth whoami``: the caller as authentication (and impersonation) saw it."""
    user_info = ReviewedUser(
        username=user.name or None,
        uid=user.uid or None,
        groups=user.groups or None,
        user_extra=dict(user.extra) or None,
    )
    return {
        "kind": "SelfSubjectReview",
        "apiVersion": AUTHENTICATION_V1,
        "metadata": {"creationTimestamp": rfc3339(now)},
        "status": {"userInfo": to_dict(user_info)},
    }
