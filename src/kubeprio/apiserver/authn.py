"""Bearer-token authentication from a static token file (upstream's ``--token-auth-file``).

What it is: the parser of upstream's token file format and an authenticator that maps
request headers to a ``UserInfo``. The file is CSV, one user per line::

    token,user,uid,"group1,group2"

at least three columns (token, user name, uid); the fourth, optional, is a
comma-separated group list (quote it when it has several groups). Upstream:
``staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go``
(``NewCSV``): fewer than three columns is an error, a record with an empty token is
skipped, a later duplicate token wins. The bearer header is read as upstream's
``bearertoken.Authenticator`` reads it (scheme case-insensitive, empty token ignored),
and every authenticated user also gets the group ``system:authenticated``, as
upstream's ``AuthenticatedGroupAdder`` does.

``UnionAuthenticator`` asks several authenticators in turn and takes the first user one
of them finds, as upstream's union of token authenticators (the token file first, then
service account tokens, ``apiserver.serviceaccountauthn``). Its ``review_token`` answers
a TokenReview (``apiserver.tokenreview``): the token checked for requested audiences, as
upstream's authenticators do with ``authenticator.WithAudiences`` in the context; the
token file is audience-agnostic (``authenticator.WrapAudienceAgnosticToken``): its users
are valid for the API audiences only.

Who drives it: ``serve`` reads the file and passes the union of ``TokenAuthenticator``
and the service account token authenticator to ``apiserver.http.create_app`` as its
``authenticator``; a request it returns ``None`` for is answered 401 Unauthorized. Pure:
parsing takes text, no file I/O here.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Protocol

from kubeprio.admission.chain import MASTERS_GROUP, UserInfo
from kubeprio.errors import KubeprioError

AUTHENTICATED_GROUP: Final = "system:authenticated"

INVALID_BEARER_TOKEN: Final = "invalid bearer token"
"""``bearertoken``'s error when no authenticator takes the token."""

__all__ = [
    "AUTHENTICATED_GROUP",
    "MASTERS_GROUP",
    "TokenAuthenticator",
    "TokenRecord",
    "TokenResponse",
    "UnionAuthenticator",
]


class InvalidTokenError(KubeprioError):
    """A token an authenticator recognises as its own but refuses (upstream's reason)."""


@dataclasses.dataclass(frozen=True, slots=True)
class TokenResponse:
    """``authenticator.Response``: the user and the audiences the token is valid for."""

    user: UserInfo
    audiences: tuple[str, ...] = ()


class TokenReviewer(Protocol):
    """One token authenticator as a TokenReview asks it."""

    def review_token(self, token: str, audiences: tuple[str, ...] | None) -> TokenResponse | None:
        """The token's user for ``audiences`` (None: the API audiences); None when the
        token is not this authenticator's; ``InvalidTokenError`` when it is but fails."""
        ...


def audience_agnostic(
    implicit: Sequence[str], requested: tuple[str, ...] | None
) -> tuple[str, ...] | None:
    """``WrapAudienceAgnosticToken``: the audiences an audience-less credential is valid
    for (the API audiences met with the requested ones); None when they do not meet."""
    if requested is None:
        return tuple(implicit)
    met = tuple(audience for audience in implicit if audience in requested)
    return met or None


class TokenFileError(KubeprioError):
    """The token file cannot be used (upstream refuses to start on these)."""


@dataclasses.dataclass(frozen=True, slots=True)
class TokenRecord:
    """One line of the token file."""

    token: str
    user: str
    uid: str
    groups: tuple[str, ...] = ()

    def line(self) -> str:
        """The record as a CSV line (groups quoted when there are several)."""
        out = io.StringIO()
        row = [self.token, self.user, self.uid]
        if self.groups:
            row.append(",".join(self.groups))
        csv.writer(out, lineterminator="\n").writerow(row)
        return out.getvalue()


def parse_token_file(text: str, *, source: str = "tokens.csv") -> list[TokenRecord]:
    """Parse the token file's records in file order (``tokenfile.NewCSV``)."""
    records: list[TokenRecord] = []
    try:
        rows = list(csv.reader(io.StringIO(text), skipinitialspace=True))
    except csv.Error as exc:
        raise TokenFileError(f"token file '{source}': {exc}") from exc
    for row in rows:
        if not row:
            continue  # Go's csv reader skips empty lines
        if len(row) < 3:
            raise TokenFileError(
                f"token file '{source}' must have at least 3 columns (token, user name, user uid), found {len(row)}"
            )
        if not row[0]:
            continue
        groups = tuple(row[3].split(",")) if len(row) >= 4 else ()
        records.append(TokenRecord(row[0], row[1], row[2], groups))
    return records


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if any."""
    value = headers.get("authorization", "").strip()
    parts = value.split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    token = " ".join(parts[1:]).strip()
    return token or None


class TokenAuthenticator:
    """Maps a request's bearer token to its user (an ``http.Authenticator``)."""

    def __init__(
        self, records: Sequence[TokenRecord], *, api_audiences: Sequence[str] = ()
    ) -> None:
        self._api_audiences = tuple(api_audiences)
        self._users: dict[str, UserInfo] = {}
        for record in records:
            groups = tuple(g for g in record.groups if g)
            if AUTHENTICATED_GROUP not in groups:
                groups = (*groups, AUTHENTICATED_GROUP)
            self._users[record.token] = UserInfo(record.user, groups, record.uid)

    def __call__(self, headers: Mapping[str, str]) -> UserInfo | None:
        """The caller, or None (401) for a missing or unknown token."""
        token = bearer_token(headers)
        return None if token is None else self._users.get(token)

    def review_token(self, token: str, audiences: tuple[str, ...] | None) -> TokenResponse | None:
        """The file's user, valid for the API audiences only (audience-agnostic)."""
        met = audience_agnostic(self._api_audiences, audiences)
        user = self._users.get(token)
        if met is None or user is None:
            return None
        return TokenResponse(user, met)


class UnionAuthenticator:
    """Upstream's ``unionAuthTokenHandler``: the first authenticator that knows the caller
    decides; nobody knowing it is a 401."""

    def __init__(
        self, authenticators: Sequence[Callable[[Mapping[str, str]], UserInfo | None]]
    ) -> None:
        self._authenticators = tuple(authenticators)

    def __call__(self, headers: Mapping[str, str]) -> UserInfo | None:
        """The caller as the first authenticator that knows it sees it, or None."""
        for authenticator in self._authenticators:
            user = authenticator(headers)
            if user is not None:
                return user
        return None

    def review_token(self, token: str, audiences: tuple[str, ...] | None) -> TokenResponse | str:
        """A TokenReview's answer: the first response, else the error upstream's
        ``bearertoken`` and union authenticators report (``invalid bearer token``, with
        the refusing authenticators' reasons in a Go aggregate when there are any)."""
        reasons: list[str] = []
        for authenticator in self._authenticators:
            review = getattr(authenticator, "review_token", None)
            if review is None:
                continue
            try:
                response = review(token, audiences)
            except InvalidTokenError as exc:
                reasons.append(str(exc))
                continue
            if response is not None:
                return response  # type: ignore[no-any-return]
        if not reasons:
            return INVALID_BEARER_TOKEN
        return "[" + ", ".join((INVALID_BEARER_TOKEN, *reasons)) + "]"
