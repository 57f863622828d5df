"""Read upstream's Go API types at a release tag: which JSON fields each struct has.

Why: the official Python client kubeprio pins for its tests is newer than the Kubernetes
release kubeprio reproduces (v1.32), so the field table generated from it
(``gen_upstream_fields.py``) lists fields a v1.32 API server does not know
(``PodSpec.hostnameOverride``, ``PodCondition.observedGeneration``, ...). A v1.32 server's
strict decoder refuses them and its OpenAPI does not publish them; this module reads the
``types.go`` files of k8s.io/api and k8s.io/apimachinery at a tag (``v0.32.9`` is
Kubernetes v1.32.9) so both generators keep only what that release has.

It reads git mirrors (git dirs, no work tree) with ``git show REF:PATH``; it does not
fetch anything.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from functools import cache

# k8s.io/api and k8s.io/apimachinery tag v0.32.x for Kubernetes v1.32.x.
DEFAULT_REF = "v0.32.9"

# One field line of a Go struct: optional name, type, then the json tag.
_FIELD = re.compile(r'^\s*(?:(\w+)\s+)?([\w.*\[\]]+)\s+`json:"([^"]*)"')
_OPENING = re.compile(r"^type\s+(\w+)\s+struct\s*\{")
# Fields of an embedded struct of another package, by its Go type (apimachinery's own).
_FOREIGN_INLINE = {"metav1.TypeMeta": {"apiVersion", "kind"}, "TypeMeta": {"apiVersion", "kind"}}


def release_arguments(description: str) -> argparse.Namespace:
    """The command line every generator reads: the git dirs of the k8s.io/api and
    k8s.io/apimachinery mirrors, and the release tag to read both at."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--api", required=True, help="git dir of k8s.io/api")
    parser.add_argument("--apimachinery", required=True, help="git dir of k8s.io/apimachinery")
    parser.add_argument("--ref", default=DEFAULT_REF, help="the release tag of both mirrors")
    return parser.parse_args()


def read_at(git_dir: str, ref: str, path: str) -> str | None:
    """The text of ``path`` at ``ref`` in a git mirror, or None when it has no such file."""
    done = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{ref}:{path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def struct_tags(text: str) -> dict[str, list[tuple[str, str, bool]]]:
    """Per Go struct: its fields as (JSON name, Go type as written, ``omitempty``): the
    type keeps its ``*`` so a pointer can be told from a value; an embedded inline struct
    is ("", its type, False)."""
    structs: dict[str, list[tuple[str, str, bool]]] = {}
    current: list[tuple[str, str, bool]] | None = None
    for line in text.splitlines():
        opening = _OPENING.match(line)
        if opening:
            current = structs.setdefault(opening.group(1), [])
            continue
        if line.startswith("}"):
            current = None
            continue
        field = _FIELD.match(line) if current is not None else None
        if field is None or current is None:
            continue
        json_name, *options = field.group(3).split(",")
        if json_name == "-":
            continue
        current.append((json_name, field.group(2), "omitempty" in options))
    return structs


class GoTypes:
    """The JSON field names of upstream's API structs at one tag of the two mirrors."""

    def __init__(self, api: str, apimachinery: str, ref: str = DEFAULT_REF) -> None:
        self._repos = {"api": api, "apimachinery": apimachinery}
        self.ref = ref

    @cache  # noqa: B019 - one instance per run; the cache lives as long as the script
    def _package_tags(self, repo: str, directory: str) -> dict[str, list[tuple[str, str, bool]]]:
        text = read_at(self._repos[repo], self.ref, f"{directory}/types.go")
        return struct_tags(text) if text is not None else {}

    @cache  # noqa: B019 - as _package_tags; one flattening per type
    def field_tags(self, schema: str) -> dict[str, tuple[str, bool]] | None:
        """``schema``'s fields by JSON name as (Go type as written, ``omitempty``), inline
        structs flattened (TypeMeta's two strings are ``omitempty``); None when the release
        has no such struct."""
        located = self._locate(schema)
        return None if located is None else self._flatten_tags(*located)

    def _locate(self, schema: str) -> tuple[str, str, str] | None:
        if schema.startswith("io.k8s.api."):
            repo, parts = "api", schema.removeprefix("io.k8s.api.").split(".")
        elif schema.startswith("io.k8s.apimachinery."):
            repo, parts = "apimachinery", schema.removeprefix("io.k8s.apimachinery.").split(".")
        else:
            return None
        return repo, "/".join(parts[:-1]), parts[-1]

    def _flatten_tags(
        self, repo: str, directory: str, name: str
    ) -> dict[str, tuple[str, bool]] | None:
        fields = self._package_tags(repo, directory).get(name)
        if fields is None:
            return None
        tags: dict[str, tuple[str, bool]] = {}
        for json_name, go_type, omitempty in fields:
            if json_name:
                tags[json_name] = (go_type, omitempty)
            elif go_type in _FOREIGN_INLINE:
                tags |= {key: ("string", True) for key in _FOREIGN_INLINE[go_type]}
            else:
                tags |= self._flatten_tags(repo, directory, go_type.lstrip("*")) or {}
        return tags

    def json_fields(self, schema: str) -> set[str] | None:
        """The JSON names of ``schema``'s struct (``io.k8s.api.core.v1.PodSpec``) with its
        inline structs flattened; None when the release has no such struct."""
        tags = self.field_tags(schema)
        return None if tags is None else set(tags)
