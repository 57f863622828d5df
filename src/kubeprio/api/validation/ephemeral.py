"""Validation of a pod's ``ephemeralcontainers`` subresource writes (``kubectl debug``).

Mirrors ``ValidatePodEphemeralContainersUpdate`` in ``pkg/apis/core/validation/
validation.go``; the rules of each ephemeral container (``validateEphemeralContainers``)
run with the rest of the pod spec (``validation.podspec``), on every pod write. The
strategy that keeps everything but ``spec.ephemeralContainers`` as stored is
``apiserver.strategy``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.core import Pod, is_mirror_pod
from kubeprio.api.errors import FieldError
from kubeprio.api.gotext import go_quote
from kubeprio.api.validation.core import (
    semantic_equal,
    spec_diff,
    validate_pod_metadata_and_spec,
)
from kubeprio.api.validation.meta import KindUpdateValidator


def validate_pod_ephemeral_containers_update(new: Pod, old: Pod) -> list[FieldError]:
    """``ValidatePodEphemeralContainersUpdate`` (metadata update rules are checked by the
    caller): the new pod's spec is valid, static pods take no ephemeral containers, and
    existing ephemeral containers are neither removed nor changed (matched by name, as a
    patch need not keep their order). The diff after "may not be changed" is go-cmp's
    layout over the changed JSON fields, as ``spec_diff``."""
    found = validate_pod_metadata_and_spec(new)
    if is_mirror_pod(old):
        # Upstream returns this error alone (kubernetes#113935).
        return [errors.forbidden("", "static pods do not support ephemeral containers")]
    path = "spec.ephemeralContainers"
    by_name = {c.name: c for c in (new.spec.ephemeral_containers if new.spec else None) or ()}
    for existing in (old.spec.ephemeral_containers if old.spec else None) or ():
        quoted = go_quote(existing.name or "")
        current = by_name.get(existing.name)
        if current is None:
            found.append(
                errors.forbidden(
                    path, f"existing ephemeral containers {quoted} may not be removed\n"
                )
            )
        elif not semantic_equal(existing, current):
            diff = spec_diff(existing, current, "core.EphemeralContainer")
            found.append(
                errors.forbidden(
                    path, f"existing ephemeral containers {quoted} may not be changed\n{diff}"
                )
            )
    return found


UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Pod: validate_pod_ephemeral_containers_update,
}
"""Model class -> validation of an ``ephemeralcontainers`` update (beyond metadata)."""
