"""``--enable-admission-plugins`` and ``--disable-admission-plugins``, as kube-apiserver's.

What it is: the two flags of ``kubeprio serve``, ``simulate`` and ``check``: their help, the
parsing of their values (pflag's ``StringSlice``: comma-separated, read as one CSV record,
repeatable, an empty value is an empty list, nothing trimmed) and the notes a command
prints when a user names a plugin whose switch changes nothing in kubeprio. Resolution and
the plugin table are ``admission.plugins``.

Who drives it: the ``register``/``run`` functions of ``cli.serve``, ``cli.simulate`` and
``cli.check``. A bad value raises ``admission.plugins.AdmissionPluginsError`` (a
``ValueError``) with upstream's text; the command prints it and exits 2.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from typing import Any

from kubeprio.admission import plugins
from kubeprio.admission.serviceaccount import PLUGIN_NAME as SERVICE_ACCOUNT
from kubeprio.api.gotext import go_quote

ENABLE: str = "--enable-admission-plugins"
DISABLE: str = "--disable-admission-plugins"


def _implemented(command: str) -> str:
    """What the help says ``command`` implements, from ``plugins.IMPLEMENTED`` in run order
    (``AlwaysAdmit``, which does nothing anyway, left out)."""
    remarks = {plugins.NAMESPACE_LIFECYCLE: "always on"}
    if command != "serve":
        remarks |= {
            SERVICE_ACCOUNT: "serve only",
            plugins.NAMESPACE_AUTO_PROVISION: "always on here",
        }
    upstream = plugins.IMPLEMENTED - plugins.KUBEPRIO_PLUGINS - {plugins.ALWAYS_ADMIT}
    named = [
        name + (f" ({remarks[name]})" if name in remarks else "")
        for name in plugins.ordered(upstream)
    ]
    own = " and ".join(plugins.ordered(plugins.KUBEPRIO_PLUGINS))
    return (
        f"kubeprio implements {', '.join(named)} and its own {own}; the other names are "
        "accepted and do nothing (a note says so)."
    )


def _help(command: str) -> tuple[str, str]:
    defaults = ", ".join(plugins.default_enabled())
    names = ", ".join(plugins.registered())
    implemented = _implemented(command)
    tail = (
        f"Comma-delimited list of admission plugins: {names}. The order of plugins in this "
        f"flag does not matter: they run in the recommended order. {implemented}"
    )
    return (
        "admission plugins that should be enabled in addition to default enabled ones "
        f"({defaults}). {tail}",
        "admission plugins that should be disabled although they are in the default enabled "
        f"plugins list ({defaults}). {tail}",
    )


def add_flags(parser: Any, *, command: str) -> None:
    """Add both flags to a subcommand's parser (``command``: its name, for the help)."""
    enable, disable = _help(command)
    parser.add_argument(
        ENABLE, action="append", metavar="PLUGINS", dest="enable_admission_plugins", help=enable
    )
    parser.add_argument(
        DISABLE,
        action="append",
        metavar="PLUGINS",
        dest="disable_admission_plugins",
        help=disable,
    )


def split_values(values: Sequence[str] | None, flag: str) -> list[str]:
    """The names of a repeated ``StringSlice`` flag (pflag's ``readAsCSV``, appended)."""
    names: list[str] = []
    for value in values or ():
        if value == "":
            continue
        try:
            record = next(csv.reader([value], strict=True), [])
        except csv.Error as exc:
            raise plugins.AdmissionPluginsError(
                f"invalid argument {go_quote(value)} for {go_quote(flag)} flag: {exc}"
            ) from exc
        names.extend(record)
    return names


def _named(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    return (
        split_values(args.enable_admission_plugins, ENABLE),
        split_values(args.disable_admission_plugins, DISABLE),
    )


def enabled_plugins(args: argparse.Namespace) -> plugins.EnabledPlugins:
    """The plugins the flags turn on; ``AdmissionPluginsError`` for bad values."""
    enable, disable = _named(args)
    return plugins.resolve(enable, disable)


def notes(args: argparse.Namespace, *, command: str) -> list[str]:
    """One line per kind of plugin the user named whose switch does nothing in kubeprio
    ``command`` (call after ``enabled_plugins`` accepted the flags)."""
    enable, disable = _named(args)
    named = plugins.ordered([*enable, *disable])
    lines: list[str] = []
    inert = [name for name in named if name in plugins.NOT_IMPLEMENTED]
    if inert:
        lines.append(
            "note: accepted, but not implemented by kubeprio (no effect): " + ", ".join(inert)
        )
    if plugins.NAMESPACE_LIFECYCLE in disable:
        lines.append(
            f"note: {plugins.NAMESPACE_LIFECYCLE} stays on: kubeprio's API service makes its "
            "checks itself"
        )
    if command != "serve":
        webhooks = [
            name
            for name in named
            if name in (plugins.MUTATING_ADMISSION_WEBHOOK, plugins.VALIDATING_ADMISSION_WEBHOOK)
        ]
        if webhooks:
            lines.append(
                f"note: kubeprio {command} calls no webhooks ({', '.join(webhooks)} run in "
                "serve only; docs/admission.md)"
            )
        if SERVICE_ACCOUNT in named:
            lines.append(
                f"note: kubeprio {command} does not run {SERVICE_ACCOUNT} (no service account "
                "controller; docs/admission.md)"
            )
        if plugins.NAMESPACE_AUTO_PROVISION in disable:
            lines.append(
                f"note: kubeprio {command} always creates a namespace on first use "
                f"({plugins.NAMESPACE_AUTO_PROVISION} stays on)"
            )
    return lines
