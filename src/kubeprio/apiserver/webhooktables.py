"""The Tables of webhook configurations (``kubectl get mutatingwebhookconfigurations``,
``kubectl get validatingwebhookconfigurations``): NAME WEBHOOKS AGE.

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``
(``mutatingWebhookColumnDefinitions``/``printMutatingWebhook`` and the validating pair,
which are the same): the name, how many webhooks the configuration lists (an integer
column), and the age. Who drives it: ``apiserver.tables`` (the printer registry). Pure;
``now`` is the caller's.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

WEBHOOK_CONFIGURATION_COLUMNS: Final = (
    name_column(),
    Column(
        "Webhooks",
        "integer",
        "Webhooks indicates the number of webhooks registered in this configuration",
    ),
    age_column(),
)


def print_webhook_configuration(
    config: MutatingWebhookConfiguration | ValidatingWebhookConfiguration, now: float
) -> tuple[Cells, RowConditions]:
    """``printMutatingWebhook`` / ``printValidatingWebhook``."""
    return [
        config.metadata.name or "",
        len(config.webhooks or ()),
        since(config.metadata.creation_timestamp, now),
    ], None
