"""Names are generated after mutating admission, as upstream's ``rest.BeforeCreate`` does.

Upstream ``admission.NewForbidden`` names the object by its ``generateName`` when it has
no name yet (``extractResourceName``), so a refused generateName pod reads
``pods "web-" is forbidden: ...``.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock


def _api() -> ApiService:
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(1))
    api.admission = default_chain(api.listers)
    return api


def test_refused_generate_name_pod_is_named_by_its_prefix() -> None:
    api = _api()
    template = pod("ignored").priority_class("nosuch").build()
    template = dataclasses.replace(
        template, metadata=ObjectMeta(generate_name="web-", namespace="default")
    )
    revision = api.store.current_revision()
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create(template)
    assert (
        caught.value.message
        == 'pods "web-" is forbidden: no PriorityClass with name nosuch was found'
    )
    assert api.store.current_revision() == revision


def test_admitted_generate_name_pod_gets_a_generated_name() -> None:
    api = _api()
    template = dataclasses.replace(
        pod("ignored").build(), metadata=ObjectMeta(generate_name="web-", namespace="default")
    )
    created = api.create(template)
    assert created.metadata.name.startswith("web-")
    assert len(created.metadata.name) == len("web-") + 5


class ScriptedNames(random.Random):
    """A generator whose name characters follow a script (uids stay random)."""

    def __init__(self, script: str) -> None:
        super().__init__(7)
        self._script = list(script)

    def choice(self, seq):  # type: ignore[no-untyped-def,override]
        return self._script.pop(0) if self._script else super().choice(seq)


def test_a_generated_name_that_is_taken_is_generated_again() -> None:
    """Upstream retries a taken generated name (KEP-4420, "Retry Generate Name", GA 1.32)."""
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=ScriptedNames("bbbbbbbbbbccccc"))
    api.admission = default_chain(api.listers)
    template = dataclasses.replace(
        pod("ignored").build(), metadata=ObjectMeta(generate_name="web-", namespace="default")
    )
    assert api.create(template).metadata.name == "web-bbbbb"
    assert api.create(template).metadata.name == "web-ccccc"
