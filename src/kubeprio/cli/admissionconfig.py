"""``--admission-control-config-file``: read kube-apiserver's AdmissionConfiguration file.

What it is: the reader of upstream's ``apiserver.config.k8s.io`` AdmissionConfiguration
(``staging/src/k8s.io/apiserver/pkg/admission/config.go``, ``ReadAdmissionConfiguration``):
a list of plugins, each with its ``configuration`` inline or a ``path`` to a file of its
own (relative to the AdmissionConfiguration). kubeprio reads the one plugin with
settings, ResourceQuota (its ``limitedResources``); entries for other plugins are
accepted and ignored, as upstream ignores configuration for plugins that are not on.

Who drives it: ``cli.serve`` and ``cli.simulate``, which add the flag (``add_flag``) and
hand what it names (``from_args``) to the control plane's admission chain. Problems
(unreadable file, not an AdmissionConfiguration, a malformed ResourceQuota configuration)
raise ``ManifestError`` naming the file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from kubeprio.admission.resourcequota import PLUGIN_NAME, LimitedResource, limited_resources
from kubeprio.api.manifest import ManifestError


def add_flag(parser: Any) -> None:
    """Add ``--admission-control-config-file`` to a subcommand's parser."""
    parser.add_argument(
        "--admission-control-config-file",
        metavar="FILE",
        help="an AdmissionConfiguration, as kube-apiserver's flag: the ResourceQuota "
        "plugin's limitedResources (for example, pods of some PriorityClasses only where a "
        "quota covers them)",
    )


def from_args(args: argparse.Namespace) -> tuple[LimitedResource, ...]:
    """The ``limitedResources`` the flag's file gives (none without the flag)."""
    path = args.admission_control_config_file
    return read_limited_resources(path) if path else ()


def read_limited_resources(path: str) -> tuple[LimitedResource, ...]:
    """The ResourceQuota plugin's ``limitedResources`` from an AdmissionConfiguration file
    (its ``configuration`` inline, or a ``path`` relative to the file)."""
    file = Path(path)
    try:
        document = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ManifestError(str(exc), source=str(path)) from exc
    if not isinstance(document, dict) or document.get("kind") != "AdmissionConfiguration":
        raise ManifestError("expected kind AdmissionConfiguration", source=path)
    for plugin in document.get("plugins") or ():
        if not isinstance(plugin, dict) or plugin.get("name") != PLUGIN_NAME:
            continue
        configuration = plugin.get("configuration")
        if configuration is None and plugin.get("path"):
            return _read_plugin_file(file.parent / str(plugin["path"]))
        return _limited(configuration, path)
    return ()


def _read_plugin_file(path: Path) -> tuple[LimitedResource, ...]:
    try:
        return _limited(yaml.safe_load(path.read_text()), str(path))
    except (OSError, yaml.YAMLError) as exc:
        raise ManifestError(str(exc), source=str(path)) from exc


def _limited(configuration: object, source: str) -> tuple[LimitedResource, ...]:
    if not isinstance(configuration, dict):
        raise ManifestError("the ResourceQuota configuration must be a mapping", source=source)
    try:
        return limited_resources(configuration)
    except ValueError as exc:
        raise ManifestError(str(exc), source=source) from exc
