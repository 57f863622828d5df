"""``kubeprio serve``'s service account token flags, read as kube-apiserver reads them.

Upstream: ``pkg/kubeapiserver/options/authentication.go`` (``--service-account-issuer``
repeatable, the first signs; ``--api-audiences`` a comma-separated list defaulting to the
issuers; ``--service-account-extend-token-expiration`` a bool defaulting to true) and
``cmd/kube-apiserver/app/server.go`` (``--service-account-max-token-expiration`` 0 or
between 1 hour and 2^32 seconds, with its error text); ``--service-account-jwks-uri`` must
be an https URL (``BuiltInAuthenticationOptions.Validate``).
"""

from __future__ import annotations

import argparse

import pytest

from kubeprio.cli import main
from kubeprio.cli import serve as serve_cli

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"


def _options(*args: str) -> dict:
    parser = argparse.ArgumentParser()
    serve_cli.register(parser.add_subparsers())
    return serve_cli._service_account_options(parser.parse_args(["serve", *args]))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), {"service_account_issuers": (DEFAULT_ISSUER,), "api_audiences": (),
              "service_account_max_token_expiration": 0,
              "service_account_extend_token_expiration": True,
              "service_account_jwks_uri": ""}),
        (("--service-account-issuer", "https://a", "--service-account-issuer", "https://b",
          "--api-audiences", "x,y", "--api-audiences", "z",
          "--service-account-max-token-expiration", "24h",
          "--service-account-extend-token-expiration=false",
          "--service-account-jwks-uri", "https://oidc.example/keys"),
         {"service_account_issuers": ("https://a", "https://b"), "api_audiences": ("x", "y", "z"),
          "service_account_max_token_expiration": 86400,
          "service_account_extend_token_expiration": False,
          "service_account_jwks_uri": "https://oidc.example/keys"}),
        (("--service-account-extend-token-expiration",),
         {"service_account_issuers": (DEFAULT_ISSUER,), "api_audiences": (),
          "service_account_max_token_expiration": 0,
          "service_account_extend_token_expiration": True,
          "service_account_jwks_uri": ""}),
    ],
    ids=["defaults", "all-given", "bare-bool"],
)  # fmt: skip
def test_the_token_flags(args, expected):
    assert _options(*args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--service-account-max-token-expiration", "59m"],
         "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"),
        (["--service-account-max-token-expiration", "1193047h"],
         "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"),
        (["--service-account-max-token-expiration", "a day"], 'time: invalid duration "a day"'),
        (["--service-account-issuer", ""], "service-account-issuer is a required flag"),
        (["--service-account-jwks-uri", "http://baz.com"],
         "service-account-jwks-uri requires https scheme, parsed as: http://baz.com"),
    ],
    ids=["under-an-hour", "over-2^32", "not-a-duration", "empty-issuer", "jwks-uri-not-https"],
)  # fmt: skip
def test_bad_token_flags_stop_serve_before_it_starts(tmp_path, capsys, args, message):
    assert main(["serve", "--data-dir", str(tmp_path / "d"), *args]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "d").exists()


def test_a_bool_flag_takes_go_spellings_only(tmp_path):
    with pytest.raises(SystemExit):
        main(["serve", "--service-account-extend-token-expiration=maybe"])
