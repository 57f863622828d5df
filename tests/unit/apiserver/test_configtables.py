"""``kubectl get cm,secret,sa`` columns and cells, as upstream's printers build them.

``pkg/printers/internalversion/printers.go``: ConfigMap ``Name, Data, Age`` (DATA counts
``data`` and ``binaryData`` keys), Secret ``Name, Type, Data, Age`` (``data`` keys, which
hold the merged ``stringData``), ServiceAccount ``Name, Secrets, Age`` (references in
``secrets``); counts are integers in columns declared ``string``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.configmap import ConfigMap
from kubeprio.api.defaults import default_object
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import from_dict
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver.tables import build_table
from kubeprio.clock import parse_rfc3339

CREATED = "2026-01-01T00:00:00Z"
NOW = parse_rfc3339(CREATED) + 300


def obj(model: type[Any], **body: Any) -> Any:
    meta = {"name": "x", "namespace": "default", "creationTimestamp": CREATED}
    return default_object(from_dict(model, {"metadata": meta, **body}))


@pytest.mark.parametrize(
    ("item", "columns", "cells"),
    [
        (obj(ConfigMap), ["Name", "Data", "Age"], ["x", 0, "5m"]),
        (
            obj(ConfigMap, data={"a": "1", "b": "2"}, binaryData={"c": "AA=="}),
            ["Name", "Data", "Age"],
            ["x", 3, "5m"],
        ),
        (
            obj(Secret, data={"a": "YQ=="}, stringData={"b": "b"}),
            ["Name", "Type", "Data", "Age"],
            ["x", "Opaque", 2, "5m"],
        ),
        (
            obj(Secret, type="kubernetes.io/tls", stringData={"tls.crt": "c", "tls.key": "k"}),
            ["Name", "Type", "Data", "Age"],
            ["x", "kubernetes.io/tls", 2, "5m"],
        ),
        (obj(ServiceAccount), ["Name", "Secrets", "Age"], ["x", 0, "5m"]),
        (
            obj(ServiceAccount, secrets=[{"name": "a"}, {"name": "b"}]),
            ["Name", "Secrets", "Age"],
            ["x", 2, "5m"],
        ),
    ],
    ids=["empty-cm", "cm", "secret", "tls", "sa", "sa-secrets"],
)
def test_columns_and_cells(item, columns, cells):
    table = build_table(type(item), [item], now=NOW, resource_version="1")
    definitions = table["columnDefinitions"]
    assert [c["name"] for c in definitions] == columns
    assert {c["type"] for c in definitions} == {"string"}
    assert all(c["priority"] == 0 for c in definitions)
    assert table["rows"][0]["cells"] == cells
