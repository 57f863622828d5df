"""The Tables of FlowSchemas and PriorityLevelConfigurations (``kubectl get flowschemas``).

Mirrors upstream v1.32 ``pkg/printers/internalversion/printers.go``:

* ``printFlowSchema``: NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE
  MISSINGPL; the precedence is a number cell, the method ``<none>`` when unset, MISSINGPL
  the ``Dangling`` condition's status (``?`` before the API server has set it);
* ``printPriorityLevelConfiguration``: NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE
  QUEUELENGTHLIMIT AGE; a level that is not Limited prints ``<none>`` in the four
  number columns, a Limited one that rejects in the three queuing ones.

The column descriptions are the v1 types' field docs (``SwaggerDoc``), as upstream takes
them. Who drives it: ``apiserver.tables`` (the printer registry). Pure; ``now`` is the
caller's.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.flowcontrol import CONDITION_DANGLING, FlowSchema, PriorityLevelConfiguration
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

NONE: Final = "<none>"

PRIORITY_LEVEL_DOC: Final = (
    "`name` is the name of the priority level configuration being referenced Required."
)
MATCHING_PRECEDENCE_DOC: Final = (
    "`matchingPrecedence` is used to choose among the FlowSchemas that match a given"
    " request. The chosen FlowSchema is among those with the numerically lowest"
    " (which we take to be logically highest) MatchingPrecedence.  Each"
    " MatchingPrecedence value must be ranged in [1,10000]. Note that if the"
    " precedence is not specified, it will be set to 1000 as default."
)
DISTINGUISHER_METHOD_DOC: Final = (
    "`distinguisherMethod` defines how to compute the flow distinguisher for requests"
    " that match this schema. `nil` specifies that the distinguisher is disabled and"
    " thus will always be the empty string."
)
TYPE_DOC: Final = (
    "`type` indicates whether this priority level is subject to limitation on request"
    ' execution.  A value of `"Exempt"` means that requests of this priority level'
    " are not subject to a limit (and thus are never queued) and do not detract from"
    ' the capacity made available to other priority levels.  A value of `"Limited"`'
    " means that (a) requests of this priority level _are_ subject to limits and (b)"
    " some of the server's limited capacity is made available exclusively to this"
    " priority level. Required."
)
SHARES_DOC: Final = (
    "`nominalConcurrencyShares` (NCS) contributes to the computation of the"
    " NominalConcurrencyLimit (NominalCL) of this level. This is the number of"
    " execution seats available at this priority level. This is used both for"
    " requests dispatched from this priority level as well as requests dispatched"
    " from other priority levels borrowing seats from this level. The server's"
    " concurrency limit (ServerCL) is divided among the Limited priority levels in"
    " proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) /"
    " sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger"
    " nominal concurrency limit, at the expense of every other priority level.\n\nIf"
    " not specified, this field defaults to a value of 30.\n\nSetting this field to"
    ' zero supports the construction of a "jail" for this priority level that is used'
    " to hold some request(s)"
)
QUEUES_DOC: Final = (
    "`queues` is the number of queues for this priority level. The queues exist"
    " independently at each apiserver. The value must be positive.  Setting it to 1"
    " effectively precludes shufflesharding and thus makes the distinguisher method"
    " of associated flow schemas irrelevant.  This field has a default value of 64."
)
HAND_SIZE_DOC: Final = (
    "`handSize` is a small positive number that configures the shuffle sharding of"
    " requests into queues.  When enqueuing a request at this priority level the"
    " request's flow identifier (a string pair) is hashed and the hash value is used"
    " to shuffle the list of queues and deal a hand of the size specified here.  The"
    " request is put into one of the shortest queues in that hand. `handSize` must be"
    " no larger than `queues`, and should be significantly smaller (so that a few"
    " heavy flows do not saturate most of the queues).  See the user-facing"
    " documentation for more extensive guidance on setting this field.  This field"
    " has a default value of 8."
)
QUEUE_LENGTH_LIMIT_DOC: Final = (
    "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a"
    " given queue of this priority level at a time; excess requests are rejected. "
    " This value must be positive.  If not specified, it will be defaulted to 50."
)

FLOW_SCHEMA_COLUMNS: Final = (
    name_column(),
    Column("PriorityLevel", "string", PRIORITY_LEVEL_DOC),
    Column("MatchingPrecedence", "string", MATCHING_PRECEDENCE_DOC),
    Column("DistinguisherMethod", "string", DISTINGUISHER_METHOD_DOC),
    age_column(),
    Column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
)

PRIORITY_LEVEL_COLUMNS: Final = (
    name_column(),
    Column("Type", "string", TYPE_DOC),
    Column("NominalConcurrencyShares", "string", SHARES_DOC),
    Column("Queues", "string", QUEUES_DOC),
    Column("HandSize", "string", HAND_SIZE_DOC),
    Column("QueueLengthLimit", "string", QUEUE_LENGTH_LIMIT_DOC),
    age_column(),
)


def print_flow_schema(schema: FlowSchema, now: float) -> tuple[Cells, RowConditions]:
    """``printFlowSchema``."""
    spec = schema.spec
    level = spec.priority_level_configuration if spec else None
    method = spec.distinguisher_method if spec else None
    missing = "?"
    for condition in (schema.status.conditions if schema.status else None) or ():
        if condition.type == CONDITION_DANGLING:
            missing = condition.status or ""
            break
    return [
        schema.metadata.name or "",
        (level.name if level else None) or "",
        (spec.matching_precedence if spec else None) or 0,
        (method.type or "") if method is not None else NONE,
        since(schema.metadata.creation_timestamp, now),
        missing,
    ], None


def print_priority_level(
    level: PriorityLevelConfiguration, now: float
) -> tuple[Cells, RowConditions]:
    """``printPriorityLevelConfiguration``."""
    spec = level.spec
    limited = spec.limited if spec else None
    shares: int | str = NONE
    queues: int | str = NONE
    hand_size: int | str = NONE
    length_limit: int | str = NONE
    if limited is not None:
        shares = limited.nominal_concurrency_shares or 0
        queuing = limited.limit_response.queuing if limited.limit_response else None
        if queuing is not None:
            queues = queuing.queues or 0
            hand_size = queuing.hand_size or 0
            length_limit = queuing.queue_length_limit or 0
    return [
        level.metadata.name or "",
        (spec.type if spec else None) or "",
        shares,
        queues,
        hand_size,
        length_limit,
        since(level.metadata.creation_timestamp, now),
    ], None
