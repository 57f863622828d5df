"""Shared fixtures: a controllable clock, a seeded rng, stores and an in-process API."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
REAL_CLUSTERS = SHARED / "fixtures" / "real-clusters"
EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class ManualClock:
    """A clock that moves only when a test says so."""

    def __init__(self, start: float = EPOCH) -> None:
        self.time = start

    def now(self) -> float:
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def api(store: MemoryStore, clock: ManualClock, rng: random.Random) -> ApiService:
    """An API service with no admission plugins (unit tests of the write path)."""
    return ApiService(store, clock=clock, rng=rng, admission=AdmissionChain())
