"""The refusal of a custom resource update that names no ``metadata.resourceVersion``.

Custom resources allow no unconditional update (``AllowUnconditionalUpdate`` is false in
``apiextensions-apiserver/pkg/registry/customresource/strategy.go`` and its status
strategy), so the generic store's ``Update`` (``registry/generic/registry/store.go``)
answers 422 when the object it got from ``UpdatedObject`` (the body after the mutating
admission) has none. Its ``NewInvalid`` is built on a GroupKind whose kind is the
*resource* (an upstream TODO): ``widgets.example.com "w" is invalid:
metadata.resourceVersion: Invalid value: 0x0: must be specified for an update``, with
``details.kind`` the plural. The value is Go's ``%#v`` of the uint64 zero.

Who drives it: ``apiserver.crwrites`` on a PUT of a custom object or its status.
"""

from __future__ import annotations

from kubeprio.api import errors


def version_required(plural: str, group: str, name: str) -> errors.InvalidError:
    """The 422 of an update of ``name`` without a resourceVersion."""
    return errors.invalid_error(
        plural,
        group,
        name,
        [
            errors.invalid(
                "metadata.resourceVersion",
                errors.GoValue("0x0"),
                "must be specified for an update",
            )
        ],
    )
