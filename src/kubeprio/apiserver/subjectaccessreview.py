"""Answering "may this user do that?": SubjectAccessReview and LocalSubjectAccessReview.

What it is: the create handlers of the two never-stored authorization.k8s.io/v1 kinds that
ask about a subject other than the caller, as upstream's
``pkg/registry/authorization/subjectaccessreview`` and ``.../localsubjectaccessreview``
write them (v1.32):

* validation first (``pkg/apis/authorization/validation``: ``ValidateSubjectAccessReview``,
  ``ValidateLocalSubjectAccessReview``): exactly one of ``resourceAttributes`` and
  ``nonResourceAttributes``; a user or at least one group; a field or label selector
  given either raw or as requirements; ``metadata`` empty (a LocalSubjectAccessReview may
  carry its namespace, which ``spec.resourceAttributes.namespace`` must equal, and asks
  about resources only). Failures are 422 naming only the group
  (``.authorization.k8s.io ""``), as upstream's internal type has no kind;
* then the subject (``spec.user``, ``groups``, ``uid``, ``extra``: exactly as given, no
  ``system:authenticated`` added, as ``AuthorizationAttributesFrom`` builds it) and the
  request are put to the same authorizer chain as real requests (cluster admins, the tenant
  policy, RBAC); the object comes back with ``status.allowed`` and the reason.

The helpers that turn a review's attributes into authorizer ``Attributes`` and check the
attribute sets are shared with the SelfSubjectAccessReview (``apiserver.reviews``).

Who may ask is the request's own authorization: upstream's ``system:auth-delegator`` role
creates SubjectAccessReviews, the ``admin`` role LocalSubjectAccessReviews in its
namespaces (kubeprio's tenant users, who act as ``admin`` there, may too).

Who drives it: ``apiserver.reviews.answer`` (POST from ``apiserver.rest``). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors
from kubeprio.api.gosyntax import GoStruct
from kubeprio.api.model import JsonDict
from kubeprio.api.reviews import (
    AUTHORIZATION_GROUP,
    AUTHORIZATION_V1,
    LocalSubjectAccessReview,
    NonResourceAttributes,
    ResourceAttributes,
    SubjectAccessReview,
    SubjectAccessReviewSpec,
    SubjectAccessReviewStatus,
)
from kubeprio.api.serialization import to_dict, to_sparse_dict
from kubeprio.apiserver import status as http_status
from kubeprio.apiserver.authz import Attributes, ReviewingAuthorizer

_SELECTORS = ("fieldSelector", "labelSelector")


def non_resource_value(non_resource: NonResourceAttributes) -> GoStruct:
    """The internal ``authorization.NonResourceAttributes`` as a bad value (v1.32's ``%#v``)."""
    return GoStruct(
        "authorization.NonResourceAttributes",
        (("Path", non_resource.path or ""), ("Verb", non_resource.verb or "")),
    )


def metadata_value(review: Any) -> errors.GoValue:
    """The review's metadata as a bad value. v1.32 prints the ``v1.ObjectMeta`` struct
    with ``%#v`` (its ``time.Time`` fields included); its JSON form stands in for it."""
    return errors.GoValue(errors.go_json(to_sparse_dict(review.metadata)))


def attribute_errors(
    resource: ResourceAttributes | None, non_resource: NonResourceAttributes | None
) -> list[errors.FieldError]:
    """The attribute-set rules every access review shares: exactly one set."""
    problems: list[errors.FieldError] = []
    if resource is not None and non_resource is not None:
        problems.append(
            errors.invalid(
                "spec.nonResourceAttributes",
                non_resource_value(non_resource),
                "cannot be specified in combination with resourceAttributes",
            )
        )
    if resource is None and non_resource is None:
        problems.append(
            errors.invalid(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    return problems


def selector_errors(resource: ResourceAttributes | None) -> list[errors.FieldError]:
    """``validateResourceAttributes``: a field or label selector is given raw or as
    requirements, not both and not neither (AuthorizeWithSelectors, beta and on in 1.32).
    The requirements themselves are not checked one by one."""
    if resource is None:
        return []
    problems: list[errors.FieldError] = []
    for name in _SELECTORS:
        selector = resource.extra.get(name)
        if not isinstance(selector, dict):
            continue
        path = f"spec.resourceAttributes.{name}"
        raw = selector.get("rawSelector") or ""
        requirements = selector.get("requirements") or []
        if raw and requirements:
            problems.append(
                errors.invalid(
                    f"{path}.rawSelector", raw, "may not specified at the same time as requirements"
                )
            )
        if not raw and not requirements:
            problems.append(
                errors.required(
                    f"{path}.requirements",
                    f"when {path} is specified, requirements or rawSelector is required",
                )
            )
    return problems


def metadata_json(review: Any, *, keep_namespace: bool = False) -> JsonDict:
    """The review's metadata less what upstream's semantic comparison with an empty
    ``ObjectMeta`` ignores: nulls (kubectl's ``creationTimestamp``), managed fields and,
    for a LocalSubjectAccessReview, the namespace."""
    return {
        key: value
        for key, value in to_dict(review.metadata).items()
        if value is not None
        and key != "managedFields"
        and not (keep_namespace and key == "namespace")
    }


def review_attributes(
    user: UserInfo, resource: ResourceAttributes | None, non_resource: NonResourceAttributes | None
) -> Attributes:
    """``ResourceAttributesFrom``/``NonResourceAttributesFrom``: the request asked about."""
    if resource is not None:
        return Attributes(
            user=user,
            verb=resource.verb or "",
            group=resource.group or "",
            resource=resource.resource or "",
            subresource=resource.subresource or "",
            namespace=resource.namespace or "",
            name=resource.name or "",
        )
    assert non_resource is not None  # validated: exactly one set
    return Attributes(
        user=user,
        verb=non_resource.verb or "",
        resource_request=False,
        path=non_resource.path or "",
    )


def subject_of(spec: SubjectAccessReviewSpec) -> UserInfo:
    """``AuthorizationAttributesFrom``'s user: the spec's user, groups, uid and extra."""
    extra = spec.user_extra or {}
    return UserInfo(
        name=spec.user or "",
        groups=tuple(spec.groups or ()),
        uid=spec.uid or "",
        extra=tuple(sorted((key, tuple(values)) for key, values in extra.items())),
    )


def _validate(review: SubjectAccessReview | LocalSubjectAccessReview) -> None:
    """``ValidateSubjectAccessReview`` / ``ValidateLocalSubjectAccessReview``."""
    spec = review.spec or SubjectAccessReviewSpec()
    resource, non_resource = spec.resource_attributes, spec.non_resource_attributes
    problems = attribute_errors(resource, non_resource)
    if not spec.user and not spec.groups:
        problems.append(
            errors.invalid(
                "spec.user", spec.user or "", "at least one of user or group must be specified"
            )
        )
    problems.extend(selector_errors(resource))
    local = isinstance(review, LocalSubjectAccessReview)
    if metadata_json(review, keep_namespace=local):
        detail = "must be empty except for namespace" if local else "must be empty"
        problems.append(errors.invalid("metadata", metadata_value(review), detail))
    if local:
        namespace = review.metadata.namespace or ""
        if resource is not None and (resource.namespace or "") != namespace:
            problems.append(
                errors.invalid(
                    "spec.resourceAttributes.namespace",
                    resource.namespace or "",
                    "must match metadata.namespace",
                )
            )
        if non_resource is not None:
            problems.append(
                errors.invalid(
                    "spec.nonResourceAttributes",
                    non_resource_value(non_resource),
                    "disallowed on this kind of request",
                )
            )
    if problems:
        # The internal type's kind is empty: the message names only the group.
        raise errors.invalid_error("", AUTHORIZATION_GROUP, "", problems)


def answer(
    review: SubjectAccessReview | LocalSubjectAccessReview,
    authorizer: ReviewingAuthorizer,
    *,
    namespace: str | None,
) -> JsonDict:
    """The created review with ``status`` filled in (``REST.Create`` of either registry).

    ``namespace``: the request's (a LocalSubjectAccessReview is served only inside one).
    """
    local = isinstance(review, LocalSubjectAccessReview)
    if local and not namespace:
        # Upstream registers the kind under namespaces/<ns>/ only.
        raise http_status.path_not_found()
    _validate(review)
    if local and namespace != review.metadata.namespace:
        raise errors.bad_request(
            f"spec.resourceAttributes.namespace must match namespace: {namespace}"
        )
    spec = review.spec
    assert spec is not None  # validated above
    attrs = review_attributes(
        subject_of(spec), spec.resource_attributes, spec.non_resource_attributes
    )
    decision = authorizer.decide(attrs)
    # kubeprio's authorizers never deny outright (RBAC has no deny rules): ``denied`` stays
    # unset, as upstream's for a NoOpinion.
    result = SubjectAccessReviewStatus(allowed=decision.allowed, reason=decision.reason or None)
    metadata: JsonDict = {"creationTimestamp": None}
    if local:
        metadata = {"namespace": review.metadata.namespace, **metadata}
    return {
        "kind": type(review).__name__,
        "apiVersion": AUTHORIZATION_V1,
        "metadata": metadata,
        "spec": to_dict(spec),
        "status": to_dict(result),
    }
