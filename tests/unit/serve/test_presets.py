"""``--preset``: the shipped manifests match the examples of the seeds they come from."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.api import manifest
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.storageclass import StorageClass, is_default_class
from kubeprio.api.tenant import Tenant
from kubeprio.apiserver.service import ApiService
from kubeprio.serve.presets import PRESETS, apply_preset, preset_objects, preset_users
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

EXAMPLES = Path(__file__).parents[3] / "examples"


def _example(*names: str) -> list[object]:
    objects = []
    for name in names:
        path = EXAMPLES / name
        objects += [
            manifest.decode_document(d) for d in manifest.parse_text(path.read_text(), str(path))
        ]
    return objects


def _without_users(obj: object) -> object:
    if isinstance(obj, Tenant) and obj.spec is not None:
        return dataclasses.replace(obj, spec=dataclasses.replace(obj.spec, users=None))
    return obj


@pytest.mark.parametrize(
    ("preset", "files"),
    [
        (
            "kestrel",
            (
                "kestrel/00-priorityclasses.yaml",
                "kestrel/01-namespaces.yaml",
                "kestrel/02-tenant.yaml",
            ),
        ),
        ("openshift", ("openshift-classes/00-priorityclasses.yaml",)),
    ],
)
def test_presets_are_the_examples_objects(preset, files):
    objects = [o for o in preset_objects(preset) if not isinstance(o, StorageClass)]
    assert [_without_users(o) for o in objects] == _example(*files)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_ships_the_default_storage_class(preset):
    """As kind and k3s: one default class, WaitForFirstConsumer, provisioned by kubeprio's
    simulated provisioner (controllers.provisioner)."""
    classes = [o for o in preset_objects(preset) if isinstance(o, StorageClass)]
    assert [(c.metadata.name, c.provisioner, c.volume_binding_mode) for c in classes] == [
        ("standard", "kubeprio.io/simulated", "WaitForFirstConsumer")
    ]
    assert is_default_class(classes[0])


def test_the_kubernetes_preset_is_seed_001s_example_class():
    (pc, _standard) = preset_objects("kubernetes")
    assert isinstance(pc, PriorityClass)
    assert (pc.metadata.name, pc.value, pc.global_default) == ("high-priority", 1000000, False)


def test_kestrel_names_its_demo_user():
    assert preset_users("kestrel") == ["alice"]
    assert preset_users("openshift") == []


@pytest.mark.parametrize("preset", PRESETS)
def test_applying_a_preset_twice_creates_once(preset):
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(0))
    api.admission = default_chain(api.listers)
    created = apply_preset(api, preset)
    assert len(created) == len(preset_objects(preset))
    assert apply_preset(api, preset) == []


def test_an_unknown_preset():
    with pytest.raises(ValueError, match="unknown preset 'x'"):
        preset_objects("x")
