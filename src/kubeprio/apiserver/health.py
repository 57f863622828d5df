"""``/healthz``, ``/livez`` and ``/readyz``: named checks answered as kube-apiserver does.

Mirrors ``k8s.io/apiserver/pkg/server/healthz`` (``handleRootHealth`` and the per-check
handlers). Each endpoint runs its checks in order:

* every check passes: ``ok``, or with ``?verbose`` one ``[+]<name> ok`` line per check
  and ``<endpoint> check passed``;
* a check fails: HTTP 500 (always verbose), its line ``[-]<name> failed: reason
  withheld`` (the endpoint is public, so the reason only goes to the log), and
  ``<endpoint> check failed`` last;
* ``?exclude=<name>`` (repeatable) skips a check (``[+]<name> excluded: ok``); a name
  that matches no check adds ``warn: some health checks cannot be excluded: no matches
  for "<name>"``;
* ``/<endpoint>/<name>`` runs one check: ``ok``, or 500 ``internal server error: <reason>``.

kubeprio's checks keep upstream's names: ``ping`` (the server answers), ``log``,
``etcd`` (the store answers; kubeprio's store is SQLite or memory, as k3s keeps
upstream's name over kine) on every endpoint, and on ``/readyz`` also ``informer-sync``
and ``shutdown``, which fails once the server has begun shutting down so load balancers
stop sending requests. Pure: the HTTP adapter passes the query and writes the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

Check = Callable[[], str | None]
"""A check: None when healthy, else why not (for the log and the single-check path)."""


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """One named check."""

    name: str
    check: Check


@dataclass(frozen=True, slots=True)
class HealthAnswer:
    """What an endpoint answers: the status code and the plain-text body."""

    status: int
    body: str
    failures: tuple[str, ...] = ()
    """``[-]<name> failed: <reason>`` lines, with the reasons, for the server log."""


def _ok() -> str | None:
    return None


def checks_for(
    endpoint: str, *, store_failure: Check, shutting_down: Callable[[], bool]
) -> tuple[HealthCheck, ...]:
    """The checks of ``healthz``, ``livez`` or ``readyz`` in upstream's order."""
    common = (HealthCheck("ping", _ok), HealthCheck("log", _ok), HealthCheck("etcd", store_failure))
    if endpoint != "readyz":
        return common

    def shutdown() -> str | None:
        return "process is shutting down" if shutting_down() else None

    return (*common, HealthCheck("informer-sync", _ok), HealthCheck("shutdown", shutdown))


ENDPOINTS: Final = ("healthz", "livez", "readyz")


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def answer(
    endpoint: str, checks: Sequence[HealthCheck], query: Mapping[str, Sequence[str]]
) -> HealthAnswer:
    """``handleRootHealth``: run ``checks`` with the query's ``verbose`` and ``exclude``."""
    pending = set(query.get("exclude", ()))
    lines: list[str] = []
    failures: list[str] = []
    for check in checks:
        if check.name in pending:
            pending.discard(check.name)
            lines.append(f"[+]{check.name} excluded: ok")
            continue
        reason = check.check()
        if reason is None:
            lines.append(f"[+]{check.name} ok")
        else:
            lines.append(f"[-]{check.name} failed: reason withheld")
            failures.append(f"[-]{check.name} failed: {reason}")
    if pending:
        lines.append(
            f"warn: some health checks cannot be excluded: no matches for {_quoted(sorted(pending))}"
        )
    listing = "".join(line + "\n" for line in lines)
    if failures:
        # Go's http.Error adds a newline after the message.
        return HealthAnswer(500, f"{listing}{endpoint} check failed\n", tuple(failures))
    if "verbose" not in query:
        return HealthAnswer(200, "ok")
    return HealthAnswer(200, f"{listing}{endpoint} check passed\n")


def answer_one(checks: Sequence[HealthCheck], name: str) -> HealthAnswer | None:
    """``/<endpoint>/<name>``: one check's answer, or None when no check has that name."""
    for check in checks:
        if check.name == name:
            reason = check.check()
            if reason is None:
                return HealthAnswer(200, "ok")
            return HealthAnswer(500, f"internal server error: {reason}\n", (reason,))
    return None
