"""The ``kubeprio serve`` load benchmark (``bench/serve_load.py``), as a slow test.

Run with ``pytest -m slow tests/e2e/test_serve_bench.py``; figures are printed (``-s``)
and asserted only for correctness: no errors, no lost writes, no missed watch events,
every created pod bound. The rates depend on the machine (see bench/README.md).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from bench import serve_load

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_fifty_clients_for_a_minute_lose_nothing():
    result = asyncio.run(serve_load.load(clients=50, seconds=60, nodes=10))
    print(json.dumps(result))
    assert result["errors"] == 0, result["first_errors"]
    assert result["lost_writes"] == 0
    assert result["watch_events_missed"] == 0
    assert result["acknowledged_pods"] > 0


def test_pods_created_through_http_are_all_scheduled_on_1000_nodes():
    result = asyncio.run(serve_load.throughput(nodes=1000, pods=5000, writers=16))
    print(json.dumps(result))
    assert result["errors"] == 0
    assert result["bound"] == result["created"] == result["placed_in_final_list"] == 5000
