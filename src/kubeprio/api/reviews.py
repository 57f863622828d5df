"""The reviews: "may I (or they) do this?", "what may I do here?" and "who am I?".

Mirrors ``k8s.io/api/authorization/v1/types.go`` (``SelfSubjectAccessReview``,
``SelfSubjectRulesReview``, ``SubjectAccessReview``, ``LocalSubjectAccessReview``) and
``k8s.io/api/authentication/v1/types.go`` (``SelfSubjectReview``, ``TokenReview``). These
kinds are never stored: a client creates one and the answer comes back in its ``status``
(``kubectl auth can-i``, ``kubectl auth can-i --list``, ``kubectl auth whoami``; a
delegating server's "may this user do that?"). The field and label selectors of
``ResourceAttributes`` stay in ``extra``: kubeprio's authorizer does not narrow a
decision by selector. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init, json_name

AUTHORIZATION_GROUP = "authorization.k8s.io"
AUTHENTICATION_GROUP = "authentication.k8s.io"
AUTHORIZATION_V1 = f"{AUTHORIZATION_GROUP}/v1"
AUTHENTICATION_V1 = f"{AUTHENTICATION_GROUP}/v1"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceAttributes:
    """A resource request to review: verb, group, resource, subresource, namespace, name."""

    namespace: str | None = None
    verb: str | None = None
    group: str | None = None
    version: str | None = None
    resource: str | None = None
    subresource: str | None = None
    name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NonResourceAttributes:
    """A request for a path outside the resource tree (``/version``, ``/healthz``)."""

    path: str | None = None
    verb: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SelfSubjectAccessReviewSpec:
    """Exactly one of the two attribute sets."""

    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SubjectAccessReviewStatus:
    """The decision: ``allowed``, an explicit ``denied``, and why."""

    allowed: bool = False
    denied: bool | None = None
    reason: str | None = None
    evaluation_error: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SelfSubjectAccessReview:
    """An authorization.k8s.io/v1 SelfSubjectAccessReview."""

    api_version: str | None = AUTHORIZATION_V1
    kind: str | None = "SelfSubjectAccessReview"
    metadata: ObjectMeta = ObjectMeta()
    spec: SelfSubjectAccessReviewSpec | None = None
    status: SubjectAccessReviewStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SubjectAccessReviewSpec:
    """The request (exactly one attribute set) and the subject to ask about."""

    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    user: str | None = None
    groups: tuple[str, ...] | None = None
    user_extra: Mapping[str, tuple[str, ...]] | None = json_name("extra")
    """Upstream's ``extra`` (this model's own ``extra`` holds unmodelled keys)."""
    uid: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SubjectAccessReview:
    """An authorization.k8s.io/v1 SubjectAccessReview: may this user do that, anywhere?"""

    api_version: str | None = AUTHORIZATION_V1
    kind: str | None = "SubjectAccessReview"
    metadata: ObjectMeta = ObjectMeta()
    spec: SubjectAccessReviewSpec | None = None
    status: SubjectAccessReviewStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class LocalSubjectAccessReview:
    """An authorization.k8s.io/v1 LocalSubjectAccessReview: the same question, asked in
    one namespace (``metadata.namespace``, which the resource attributes must name)."""

    api_version: str | None = AUTHORIZATION_V1
    kind: str | None = "LocalSubjectAccessReview"
    metadata: ObjectMeta = ObjectMeta()
    spec: SubjectAccessReviewSpec | None = None
    status: SubjectAccessReviewStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SelfSubjectRulesReviewSpec:
    """The namespace whose rules to list."""

    namespace: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRule:
    """Verbs allowed on resources of API groups (``*`` means all), optionally by name."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] | None = json_name("apiGroups")
    resources: tuple[str, ...] | None = None
    resource_names: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NonResourceRule:
    """Verbs allowed on non-resource paths (a trailing ``*`` matches a prefix)."""

    verbs: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] | None = json_name("nonResourceURLs")
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SubjectRulesReviewStatus:
    """The rules; ``incomplete`` when the authorizer could not list them all."""

    resource_rules: tuple[ResourceRule, ...] = ()
    non_resource_rules: tuple[NonResourceRule, ...] = ()
    incomplete: bool = False
    evaluation_error: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SelfSubjectRulesReview:
    """An authorization.k8s.io/v1 SelfSubjectRulesReview."""

    api_version: str | None = AUTHORIZATION_V1
    kind: str | None = "SelfSubjectRulesReview"
    metadata: ObjectMeta = ObjectMeta()
    spec: SelfSubjectRulesReviewSpec | None = None
    status: SubjectRulesReviewStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class UserInfo:
    """Who the caller is, as the API server authenticated it."""

    username: str | None = None
    uid: str | None = None
    groups: tuple[str, ...] | None = None
    user_extra: Mapping[str, tuple[str, ...]] | None = json_name("extra")
    """Upstream's ``extra`` (this model's own ``extra`` holds unmodelled keys)."""
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SelfSubjectReviewStatus:
    """The caller's user information."""

    user_info: UserInfo | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class SelfSubjectReview:
    """An authentication.k8s.io/v1 SelfSubjectReview."""

    api_version: str | None = AUTHENTICATION_V1
    kind: str | None = "SelfSubjectReview"
    metadata: ObjectMeta = ObjectMeta()
    status: SelfSubjectReviewStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenReviewSpec:
    """The token to check and the audiences it must be valid for (empty: the API's)."""

    token: str | None = None
    audiences: tuple[str, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenReviewStatus:
    """Whether the token authenticates, as whom, for which audiences, or why not."""

    authenticated: bool | None = None
    user: UserInfo = UserInfo()
    """Go's ``omitempty`` does not drop a struct: ``user`` is always written."""
    audiences: tuple[str, ...] | None = None
    error: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenReview:
    """An authentication.k8s.io/v1 TokenReview."""

    api_version: str | None = AUTHENTICATION_V1
    kind: str | None = "TokenReview"
    metadata: ObjectMeta = ObjectMeta()
    spec: TokenReviewSpec = TokenReviewSpec()
    status: TokenReviewStatus | None = None
    extra: JsonDict = extra_field()
