"""Reading manifest files for commands that take ``PATH...`` (``check``, later ``simulate``).

The composition root does the I/O; ``api.manifest`` does the parsing (pure). A path is
a file (read whatever its name) or a directory, walked recursively in sorted order for
``*.yaml``, ``*.yml`` and ``*.json`` files, skipping hidden entries. Every file yields
its documents in order (multi-document YAML, JSON arrays and ``kind: List`` expanded);
a file that cannot be read or parsed yields one ``LoadFailure`` in its place, so a
caller can report it and carry on in input order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from kubeprio.api.manifest import Document, ManifestError, parse_text

MANIFEST_SUFFIXES: Final = frozenset({".yaml", ".yml", ".json"})


@dataclasses.dataclass(frozen=True, slots=True)
class LoadFailure:
    """A whole file that could not be read or parsed."""

    source: str
    message: str


class PathNotFoundError(FileNotFoundError):
    """A command-line path that does not exist."""


def manifest_files(paths: Sequence[str]) -> list[Path]:
    """The files to read, in order: each path as given, directories expanded and sorted."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(_walk(path))
        elif path.exists():
            files.append(path)
        else:
            raise PathNotFoundError(f"{raw}: no such file or directory")
    return files


def _walk(directory: Path) -> Iterator[Path]:
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            yield from _walk(entry)
        elif entry.suffix.lower() in MANIFEST_SUFFIXES:
            yield entry


def read_documents(paths: Sequence[str]) -> list[Document | LoadFailure]:
    """Every document of every file under ``paths``, in input order."""
    out: list[Document | LoadFailure] = []
    for path in manifest_files(paths):
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            out.append(LoadFailure(source, f"{source}: cannot read: {exc}"))
            continue
        try:
            out.extend(parse_text(text, source))
        except ManifestError as exc:
            out.append(LoadFailure(source, str(exc)))
    return out
