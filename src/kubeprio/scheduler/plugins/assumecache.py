"""The volume binder's assume caches (upstream ``volumebinding/assume_cache.go``).

An informer's PersistentVolumes or PersistentVolumeClaims with in-memory "assumed"
versions on top: the binder assumes a volume's ``claimRef`` or a claim's selected node
during a pod's scheduling cycle, so the next pods' cycles see them taken before the API
writes land. Driven by ``volumebinder.VolumeBinder``; reads its informer only.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from kubeprio.api.meta import ApiObject
from kubeprio.api.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubeprio.client.informer import Informer

_T = TypeVar("_T", PersistentVolume, PersistentVolumeClaim)


def version_of(obj: ApiObject) -> int:
    """The object's resourceVersion as a number (0 when unset or not a number)."""
    try:
        return int(obj.metadata.resource_version or "0")
    except ValueError:
        return 0


class AssumeCache(Generic[_T]):
    """An informer's objects with in-memory "assumed" versions on top (``AssumeCache``).

    An assumed object wins until the informer holds a version newer than the one it was
    assumed from (upstream drops it on such an update); ``restore`` drops it at once.
    """

    def __init__(self, informer: Informer[_T]) -> None:
        self.informer: Informer[_T] = informer
        self._assumed: dict[tuple[str, str], tuple[_T, int]] = {}

    @staticmethod
    def _key(name: str, namespace: str | None) -> tuple[str, str]:
        return (namespace or "", name)

    def get(self, name: str, namespace: str | None = None) -> _T | None:
        """The assumed object if still current, else the informer's."""
        key = self._key(name, namespace)
        latest = self.informer.get(name, namespace)
        assumed = self._assumed.get(key)
        if assumed is not None:
            if latest is not None and version_of(latest) > assumed[1]:
                del self._assumed[key]
            else:
                return assumed[0]
        return latest

    def get_api(self, name: str, namespace: str | None = None) -> _T | None:
        """The informer's object, ignoring assumptions (``GetAPIPV``/``GetAPIPVC``)."""
        return self.informer.get(name, namespace)

    def assume(self, obj: _T) -> None:
        """Hold ``obj`` as the current version (``Assume``)."""
        meta = obj.metadata
        self._assumed[self._key(meta.name or "", meta.namespace)] = (obj, version_of(obj))

    def restore(self, name: str, namespace: str | None = None) -> None:
        """Forget the assumed version (``Restore``)."""
        self._assumed.pop(self._key(name, namespace), None)

    def assumed_names(self) -> set[str]:
        """Names of the objects currently assumed (for list views)."""
        return {key[1] for key in self._assumed}
