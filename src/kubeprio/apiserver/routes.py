"""REST paths of the resource table: which kind, namespace, name and subresource a URL names.

What it is: a pure parser from a request path to a ``Target``, built once from
``api.kinds.RESOURCES`` (lightkube's ``ApiInfo`` idea, in reverse). Upstream registers the
same shapes in ``staging/src/k8s.io/apiserver/pkg/endpoints/installer.go``::

    /api/v1/<plural>                               cluster-scoped collection, or every namespace
    /api/v1/<plural>/<name>[/<subresource>]        cluster-scoped object
    /api/v1/namespaces/<ns>/<plural>               namespaced collection
    /api/v1/namespaces/<ns>/<plural>/<name>[/<subresource>]
    /apis/<group>/<version>/...                    the same below a named group

``/api/v1/namespaces/<name>/status`` is the namespace's own status subresource: a segment
after ``namespaces/<name>`` that is not a namespaced plural of the group version is a
subresource of the namespace.

Who drives it: ``apiserver.http`` for every resource request. Rules: no I/O; an unknown
path is ``None`` (the caller answers upstream's 404).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api import kinds
from kubeprio.api.kinds import ResourceInfo

NAMESPACES: Final = "namespaces"


@dataclass(frozen=True, slots=True)
class Target:
    """What a resource URL names.

    ``namespace`` is the namespace of a namespaced request, ``None`` for a cluster-scoped
    kind or a list/watch across all namespaces. ``name`` is empty for a collection.
    """

    info: ResourceInfo
    namespace: str | None
    name: str = ""
    subresource: str = ""

    @property
    def is_collection(self) -> bool:
        """Whether the URL names a collection (list, watch, create, deletecollection)."""
        return not self.name


class RouteTable:
    """Index of the resource table by group version and plural."""

    def __init__(self, resources: tuple[ResourceInfo, ...] = kinds.RESOURCES) -> None:
        self._by_gv: dict[str, dict[str, ResourceInfo]] = {}
        for info in resources:
            self._by_gv.setdefault(info.api_version, {})[info.plural] = info

    @property
    def group_versions(self) -> Mapping[str, Mapping[str, ResourceInfo]]:
        """``{"v1": {"pods": ...}, "apps/v1": {...}}``."""
        return self._by_gv

    def resolve(self, group_version: str, segments: list[str]) -> Target | None:
        """Resolve the path segments after ``/api/v1`` or ``/apis/<g>/<v>``."""
        plurals = self._by_gv.get(group_version)
        if plurals is None or not segments or any(not s for s in segments):
            return None
        if segments[0] == NAMESPACES and len(segments) >= 3:
            info = plurals.get(segments[2])
            if info is not None and info.namespaced:
                return _target(info, segments[1], segments[3:])
        info = plurals.get(segments[0])
        if info is None:
            return None
        rest = segments[1:]
        if info.namespaced:
            # Only the collection across all namespaces exists at the top level.
            return Target(info, None) if not rest else None
        return _target(info, None, rest)


def _target(info: ResourceInfo, namespace: str | None, rest: list[str]) -> Target | None:
    if not rest:
        return Target(info, namespace)
    if len(rest) == 1:
        return Target(info, namespace, rest[0])
    if len(rest) == 2 and info.has_subresource(rest[1]):
        return Target(info, namespace, rest[0], rest[1])
    return None


def split_path(path: str) -> list[str]:
    """``/a/b/`` -> ``["a", "b"]`` (a trailing slash is ignored, as upstream's mux does)."""
    return [segment for segment in path.strip("/").split("/")] if path.strip("/") else []
