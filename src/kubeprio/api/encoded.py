"""The JSON bytes of an API object, encoded once for every reader of the same version.

A stored object version is immutable (a frozen model), and in ``serve`` the same version
is encoded several times: for the reply to the write that made it and once more for each
watch stream that carries it (the SQLite log row is the object's sparse form,
``held_json_bytes``). Upstream's watch cache does the
same saving with its ``cachingObject`` (one serialization per object version, shared by
every watcher). ``json_bytes`` keeps the encoding of the most recent objects, keyed by
identity: the cache holds a strong reference to each object, so an ``id`` cannot be
reused while its entry lives, and an object that left the cache is simply encoded again.

Who drives it: ``store.sqlite`` (log rows, sparse), ``apiserver.rest`` (single-object replies)
and ``apiserver.watchstream`` (watch events). Single-threaded, as the API service.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from kubeprio.api.serialization import to_dict, to_sparse_dict

CAPACITY: Final = 4096
"""Objects whose encoding is kept: far more than one settle round of the serve driver
writes before the watch streams drain (a few hundred), and a few MB of pods."""


class EncodingCache:
    """Compact JSON of recently encoded objects, oldest dropped first."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._entries: dict[int, tuple[Any, bytes]] = {}

    def json_bytes(self, obj: Any, *, remember: bool = True) -> bytes:
        """``orjson.dumps(to_dict(obj))``, from the cache when ``obj`` was encoded lately.

        ``remember=False`` reads the cache but leaves it as it is: a long list of old
        objects would only push out the recent ones that watchers are about to read.
        """
        entry = self._entries.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        encoded = orjson.dumps(to_dict(obj))
        if not remember:
            return encoded
        entries = self._entries
        if len(entries) >= self.capacity:
            # Dicts keep insertion order: the first key is the oldest entry.
            del entries[next(iter(entries))]
        entries[id(obj)] = (obj, encoded)
        return encoded

    def __len__(self) -> int:
        return len(self._entries)


_SHARED: Final = EncodingCache()


def json_bytes(obj: Any, *, remember: bool = True) -> bytes:
    """The compact JSON encoding of ``obj`` (a model object), shared process-wide."""
    return _SHARED.json_bytes(obj, remember=remember)


def json_fragment(obj: Any, *, remember: bool = True) -> orjson.Fragment:
    """``json_bytes(obj)`` to embed as is in a larger ``orjson.dumps`` document."""
    return orjson.Fragment(json_bytes(obj, remember=remember))


def held_json_bytes(obj: Any) -> bytes:
    """The compact JSON of only what ``obj`` holds (``to_sparse_dict``), without the zero
    values Go writes for unset fields: what ``store.sqlite`` logs, so that an object read
    back after a restart is the very object that was stored (an unset struct stays unset
    rather than coming back empty). Not cached: the served form is the shared one."""
    return orjson.dumps(to_sparse_dict(obj))
