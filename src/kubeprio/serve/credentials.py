"""Who may talk to ``kubeprio serve``: the token file and the kubeconfig written for users.

``ensure_tokens`` keeps ``DATA_DIR/tokens.csv`` (upstream's static token file format,
parsed by ``apiserver.authn``): on first start it writes one cluster-admin line
(user ``admin``, group ``system:masters``) and one line per demo user a preset names
(tenant users, e.g. ``alice`` of the Kestrel tenant); tokens are 32 random bytes, hex.
An existing file is reused as it is, with missing demo users appended; users edit it
to add their own (read at start, as upstream reads ``--token-auth-file``).

``write_kubeconfig`` writes ``DATA_DIR/kubeconfig`` once the server listens: one cluster
(the server URL and the CA, inline), a user per token line, a context per user (the
admin's is current, named ``kubeprio``; a tenant user's is ``kubeprio-<user>``). It is
rewritten at every start (the port may change), atomically, with mode 0600.

Who drives it: ``serve.server``. File I/O only in these two functions.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from kubeprio.apiserver.authn import MASTERS_GROUP, TokenRecord, parse_token_file

ADMIN_USER: Final = "admin"
CLUSTER_NAME: Final = "kubeprio"


def _token() -> str:
    return secrets.token_hex(32)


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def ensure_tokens(path: Path, *, users: Sequence[str] = ()) -> list[TokenRecord]:
    """Read (creating or completing) the token file; return its records."""
    records = (
        parse_token_file(path.read_text(encoding="utf-8"), source=str(path))
        if path.exists()
        else []
    )
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    added: list[TokenRecord] = []
    if not any(MASTERS_GROUP in r.groups for r in records):
        added.append(TokenRecord(_token(), ADMIN_USER, ADMIN_USER, (MASTERS_GROUP,)))
    known = {r.user for r in records}
    for user in users:
        if user not in known:
            added.append(TokenRecord(_token(), user, user))
            known.add(user)
    if added:
        if text and not text.endswith("\n"):
            text += "\n"
        _write_private(path, text + "".join(r.line() for r in added))
    return records + added


def admin_record(records: Sequence[TokenRecord]) -> TokenRecord:
    """The first ``system:masters`` user (the kubeconfig's current context)."""
    return next(r for r in records if MASTERS_GROUP in r.groups)


def context_name(record: TokenRecord, admin: TokenRecord) -> str:
    """``kubeprio`` for the admin, ``kubeprio-<user>`` for the others."""
    return CLUSTER_NAME if record is admin else f"{CLUSTER_NAME}-{record.user}"


def write_kubeconfig(
    path: Path, *, server: str, ca_pem: bytes, records: Sequence[TokenRecord]
) -> None:
    """Write the kubeconfig for ``server`` with a context per token user."""
    admin = admin_record(records)
    ordered = [admin, *(r for r in records if r is not admin)]
    seen: set[str] = set()
    users: list[dict[str, Any]] = []
    contexts: list[dict[str, Any]] = []
    for record in ordered:
        if record.user in seen:
            continue
        seen.add(record.user)
        users.append({"name": record.user, "user": {"token": record.token}})
        contexts.append(
            {
                "name": context_name(record, admin),
                "context": {"cluster": CLUSTER_NAME, "user": record.user},
            }
        )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CLUSTER_NAME,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": users,
        "contexts": contexts,
        "current-context": CLUSTER_NAME,
        "preferences": {},
    }
    _write_private(path, yaml.safe_dump(config, sort_keys=False))
