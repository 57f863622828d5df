"""A loop inside the API server that reconciles after writes to the kinds it follows.

What it is: the driving half shared by the server's own reconciling loops (the API
Priority and Fairness configuration, the local APIService registration). ``follow``
opens a store watch per resource; ``pump`` notes that one of them was written;
``run_once`` then calls the subclass's ``reconcile`` once, however many writes came in
between; there is no timer. Nothing runs per request or on the scheduling path.

Who drives it: ``serve.server`` pumps and runs the loops with the other components;
``apiserver.flowcontrolconfig`` and ``apiserver.autoregister`` build on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeprio.store.interface import KeyPrefix, Store, StoreWatch


class WriteFollower:
    """Reconciles once after any write to the followed resources."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._watches: list[StoreWatch] = []
        self._dirty = False

    def follow(self, resources: Iterable[str]) -> None:
        """Watch ``resources`` from the store's current revision on."""
        revision = self._store.current_revision()
        self._watches = [self._store.watch(KeyPrefix(r), revision) for r in resources]

    def pump(self) -> int:
        """Note writes to the followed resources; how many there were."""
        changes = sum(len(watch.poll()) for watch in self._watches)
        if changes:
            self._dirty = True
        return changes

    def run_once(self) -> bool:
        """Reconcile once after a change; False when nothing changed."""
        if not self._dirty:
            return False
        self._dirty = False
        self.reconcile()
        return True

    def next_wakeup(self) -> float | None:
        """Event-driven: no timer."""
        return None

    def stop(self) -> None:
        """Stop following writes."""
        for watch in self._watches:
            watch.close()

    def reconcile(self) -> None:
        """Bring what this loop keeps in line with the store (the subclass's work)."""
        raise NotImplementedError
