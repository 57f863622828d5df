"""core/v1 ConfigMap: configuration data for pods, by key.

Mirrors ``k8s.io/api/core/v1/types.go`` (``ConfigMap``): ``data`` holds UTF-8 strings,
``binaryData`` raw bytes (base64 on the wire), and the two may not share a key;
``immutable: true`` freezes both for good. Every other key stays in ``extra`` and
round-trips unchanged. Two names matter to the rest of the system: every namespace gets
the ``kube-root-ca.crt`` ConfigMap of the root CA publisher (``controllers.rootcacert``),
and ConfigMaps count against the ``configmaps`` quota (``api.quotausage``).
Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

MAX_CONFIG_SIZE: Final = 1024 * 1024
"""``core.MaxSecretSize``: the most bytes a ConfigMap's or a Secret's values may hold."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigMap:
    """A v1 ConfigMap."""

    api_version: str | None = "v1"
    kind: str | None = "ConfigMap"
    metadata: ObjectMeta = ObjectMeta()
    immutable: bool | None = None
    data: Mapping[str, str] | None = None
    binary_data: Mapping[str, bytes] | None = None
    extra: JsonDict = extra_field()


def data_count(config_map: ConfigMap) -> int:
    """How many keys it holds (``kubectl get cm``'s DATA): ``data`` plus ``binaryData``."""
    return len(config_map.data or {}) + len(config_map.binary_data or {})
