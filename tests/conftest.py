"""Shared fixtures: a controllable clock, a seeded rng, stores and an in-process API."""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
REAL_CLUSTERS = SHARED / "fixtures" / "real-clusters"
EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def _share_bytecode() -> None:
    """Let the servers the tests start read compiled modules instead of compiling each time.

    Every e2e test module starts ``kubeprio serve`` in a fresh interpreter. Where the
    environment forbids writing bytecode (``PYTHONDONTWRITEBYTECODE``, often set to keep a
    checkout free of ``__pycache__``), each of those interpreters compiled every module it
    imports: about a second of CPU per server start, a quarter of an e2e module's CPU.
    The bytecode goes to a cache outside the checkout instead (``PYTHONPYCACHEPREFIX``), so
    the checkout stays clean and only the first interpreter compiles. Python checks each
    cached file against its source's size and mtime, so an edited module is recompiled.
    """
    if not os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        return
    prefix = os.environ.setdefault(
        "PYTHONPYCACHEPREFIX",
        str(Path(tempfile.gettempdir()) / f"kubeprio-pycache-{os.getuid()}"),
    )
    # This interpreter imports most modules before any server starts: it fills the cache.
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_share_bytecode()


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
