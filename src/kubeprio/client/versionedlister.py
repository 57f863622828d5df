"""A lister that also says when its objects last changed.

What it is: ``VersionedLister`` is ``client.informer.Lister`` plus ``generation()``, a
number that moves whenever one of the listed objects is created, updated or deleted
(``Store.generation`` of the resource). Something derived from a few configuration
objects on every request (the admission webhook index, the admission policies) keeps
what it derived with the generation it saw, and lists again only when that moved:
upstream's admission plugins likewise rebuild their configuration snapshots from
informer events, not per request.

Who implements it: ``apiserver.listers.StoreLister``. Who reads it: the webhook and
policy admission plugins (``admission.webhookdispatch``, ``admission.validatingpolicy``).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from kubeprio.client.informer import Lister

L = TypeVar("L")


class VersionedLister(Lister[L], Protocol[L]):
    """``Lister`` with the generation of what it lists."""

    def generation(self) -> int:
        """A number that moves whenever a listed object changes, and only then."""
        ...
