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
