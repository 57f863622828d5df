"""The static token file and bearer-token authentication (``apiserver.authn``).

Upstream: ``staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go``
(``NewCSV``) and ``request/bearertoken/bearertoken.go``.
"""

from __future__ import annotations

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.apiserver.authn import (
    TokenAuthenticator,
    TokenFileError,
    TokenRecord,
    bearer_token,
    parse_token_file,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("t1,alice,u1\n", [TokenRecord("t1", "alice", "u1")]),
        (
            't2,bob,u2,"dev,ops"\n',
            [TokenRecord("t2", "bob", "u2", ("dev", "ops"))],
        ),
        ("t3,carol,u3,system:masters\n", [TokenRecord("t3", "carol", "u3", ("system:masters",))]),
        ("\n\nt1,alice,u1\n\n", [TokenRecord("t1", "alice", "u1")]),
        (",nobody,u0\nt1,alice,u1\n", [TokenRecord("t1", "alice", "u1")]),
        ("t1, alice, u1\n", [TokenRecord("t1", "alice", "u1")]),
    ],
    ids=[
        "three-columns",
        "quoted-groups",
        "one-group",
        "blank-lines",
        "empty-token-skipped",
        "leading-spaces",
    ],
)
def test_token_file_records(text, expected):
    assert parse_token_file(text) == expected


def test_fewer_than_three_columns_is_upstreams_error():
    with pytest.raises(TokenFileError) as caught:
        parse_token_file("t1,alice\n", source="/x/tokens.csv")
    assert str(caught.value) == (
        "token file '/x/tokens.csv' must have at least 3 columns (token, user name, user uid), found 2"
    )


def test_a_record_line_parses_back():
    record = TokenRecord("abc", "bob", "bob", ("dev", "ops"))
    assert record.line() == 'abc,bob,bob,"dev,ops"\n'
    assert parse_token_file(record.line()) == [record]


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER abc", "abc"),
        ("Basic abc", None),
        ("Bearer ", None),
        ("Bearer", None),
        ("", None),
    ],
    ids=["bearer", "lower-case", "upper-case", "basic", "empty-token", "no-token", "absent"],
)
def test_bearer_header(header, token):
    assert bearer_token({"authorization": header} if header else {}) == token


def test_authenticated_users_get_system_authenticated_and_their_uid():
    authenticate = TokenAuthenticator(
        [TokenRecord("t1", "alice", "u1"), TokenRecord("t2", "root", "u2", ("system:masters",))]
    )
    assert authenticate({"authorization": "Bearer t1"}) == UserInfo(
        "alice", ("system:authenticated",), "u1"
    )
    assert authenticate({"authorization": "Bearer t2"}) == UserInfo(
        "root", ("system:masters", "system:authenticated"), "u2"
    )
    assert authenticate({"authorization": "Bearer t3"}) is None
    assert authenticate({}) is None


def test_a_later_duplicate_token_wins():
    authenticate = TokenAuthenticator(parse_token_file("t1,alice,u1\nt1,bob,u2\n"))
    assert authenticate({"authorization": "Bearer t1"}) == UserInfo(
        "bob", ("system:authenticated",), "u2"
    )
