"""A DaemonSet's template generation, as the daemonset registry strategy keeps it.

Upstream stores an internal ``spec.templateGeneration`` that apps/v1 shows as the
annotation ``deprecated.daemonset.template.generation`` (the v1 conversion writes it on
every read and strips it on every write), and ``pkg/registry/apps/daemonset/strategy.go``
owns it:

* ``PrepareForCreate``: at least 1 (a client-sent value of 1 or more is kept);
* ``PrepareForUpdate``: the client's value is ignored; the stored one is kept, plus one
  when the pod template changed (``Semantic.DeepEqual``).

The DaemonSet controller labels pods with it (``pod-template-generation``). An annotation
that is not an integer counts as absent (upstream's conversion would refuse the request).
Called by ``apiserver.strategy``. Pure: no I/O.
"""

from __future__ import annotations

from kubeprio.api.daemonset import TEMPLATE_GENERATION_ANNOTATION, DaemonSet, template_generation
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.validation.core import semantic_equal


def _with_generation(ds: DaemonSet, generation: int) -> DaemonSet:
    annotations = {
        **(ds.metadata.annotations or {}),
        TEMPLATE_GENERATION_ANNOTATION: str(generation),
    }
    metadata: ObjectMeta = evolve(ds.metadata, annotations=annotations)
    return evolve(ds, metadata=metadata)


def prepare_for_create(ds: DaemonSet) -> DaemonSet:
    """The generation of a new DaemonSet: the client's when 1 or more, else 1."""
    return _with_generation(ds, max(template_generation(ds) or 0, 1))


def prepare_for_update(new: DaemonSet, old: DaemonSet) -> DaemonSet:
    """The stored generation, moved on when the template changed."""
    generation = template_generation(old) or 0
    new_template = new.spec.template if new.spec else None
    old_template = old.spec.template if old.spec else None
    if not semantic_equal(new_template, old_template):
        generation += 1
    return _with_generation(new, generation)
