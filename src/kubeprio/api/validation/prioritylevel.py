"""PriorityLevelConfiguration validation (flowcontrol.apiserver.k8s.io/v1).

Mirrors v1.32's ``pkg/apis/flowcontrol/validation/validation.go``
(``ValidatePriorityLevelConfiguration`` and below) as the v1 strategy calls it, with
``AllowZeroLimitedNominalConcurrencyShares`` on (as since v1.30): ``type`` ``Exempt``
exactly for the level named ``exempt``, only the matching section set; shares
non-negative, ``lendablePercent`` 0..100, ``borrowingLimitPercent`` non-negative;
``Queue`` needs ``queuing`` (queues 1..10^7, queue length positive, hand size positive,
at most queues and within 60 bits of entropy, ``ceil(handSize * log2(queues))``),
``Reject`` forbids it; the mandatory levels' specs must equal the bootstrap ones
(``exempt``'s own ``spec.exempt`` excepted); status updates: condition types set and each
once (``validation.flowcontrol`` shares those rules and the spec rendering). Pure.
"""

from __future__ import annotations

import math
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.flowcontrol import (
    EXEMPT,
    LIMIT_QUEUE,
    LIMIT_REJECT,
    TYPE_EXEMPT,
    TYPE_LIMITED,
    ExemptPriorityLevelConfiguration,
    LimitedPriorityLevelConfiguration,
    LimitResponse,
    PriorityLevelConfiguration,
    PriorityLevelConfigurationSpec,
    QueuingConfiguration,
)
from kubeprio.api.flowcontrolbootstrap import MANDATORY_LEVELS_BY_NAME
from kubeprio.api.model import evolve
from kubeprio.api.serialization import to_dict
from kubeprio.api.validation.flowcontrol import semantic, spec_value, validate_conditions
from kubeprio.api.validation.meta import KindUpdateValidator, KindValidator, child

LEVEL_TYPES: Final = (TYPE_EXEMPT, TYPE_LIMITED)
LIMIT_TYPES: Final = (LIMIT_QUEUE, LIMIT_REJECT)
MAX_QUEUES: Final = 10_000_000
MAX_HASH_BITS: Final = 60
"""``shufflesharding.MaxHashBits``."""
NOT_LIMITED: Final = "must be nil if limited.limitResponse.type is not Limited"


def validate_priority_level(level: PriorityLevelConfiguration) -> list[FieldError]:
    """``ValidatePriorityLevelConfiguration`` beyond metadata."""
    spec = level.spec or PriorityLevelConfigurationSpec()
    name = level.metadata.name or ""
    found = validate_priority_level_spec(spec, name, "spec")
    mandatory = MANDATORY_LEVELS_BY_NAME.get(name)
    if mandatory is not None and mandatory.spec is not None:
        want = mandatory.spec
        have = spec
        detail = f"spec of '{name}' must equal the fixed value"
        if name == EXEMPT:
            # Admins may tune the exempt level's own section; the rest is fixed.
            have = evolve(spec, exempt=want.exempt)
            detail = f"spec of '{name}' except the 'spec.exempt' field must equal the fixed value"
        if semantic(to_dict(have)) != semantic(to_dict(want)):
            found.append(errors.invalid("spec", spec_value(spec), detail))
    found.extend(validate_conditions((level.status.conditions if level.status else None) or ()))
    return found


def validate_priority_level_spec(
    spec: PriorityLevelConfigurationSpec, name: str, path: str
) -> list[FieldError]:
    """``ValidatePriorityLevelConfigurationSpec``."""
    found: list[FieldError] = []
    kind = spec.type or ""
    if (name == EXEMPT) != (kind == TYPE_EXEMPT):
        found.append(
            errors.invalid(
                child(path, "type"), kind, "type must be 'Exempt' if and only if name is 'exempt'"
            )
        )
    if kind == TYPE_EXEMPT:
        if spec.limited is not None:
            found.append(
                errors.forbidden(child(path, "limited"), "must be nil if the type is not Limited")
            )
        if spec.exempt is not None:
            found.extend(_validate_exempt(spec.exempt, child(path, "exempt")))
    elif kind == TYPE_LIMITED:
        if spec.exempt is not None:
            found.append(
                errors.forbidden(child(path, "exempt"), "must be nil if the type is Limited")
            )
        if spec.limited is None:
            found.append(
                errors.required(child(path, "limited"), "must not be empty when type is Limited")
            )
        else:
            found.extend(_validate_limited(spec.limited, child(path, "limited")))
    else:
        found.append(errors.not_supported(child(path, "type"), kind, LEVEL_TYPES))
    return found


def _validate_lendable(value: int | None, path: str) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [
            errors.invalid(
                child(path, "lendablePercent"), value, "must be between 0 and 100, inclusive"
            )
        ]
    return []


def _validate_exempt(exempt: ExemptPriorityLevelConfiguration, path: str) -> list[FieldError]:
    """``ValidateExemptPriorityLevelConfiguration``."""
    found: list[FieldError] = []
    shares = exempt.nominal_concurrency_shares
    if shares is not None and shares < 0:
        found.append(
            errors.invalid(
                child(path, "nominalConcurrencyShares"), shares, "must be a non-negative number"
            )
        )
    return [*found, *_validate_lendable(exempt.lendable_percent, path)]


def _validate_limited(limited: LimitedPriorityLevelConfiguration, path: str) -> list[FieldError]:
    """``ValidateLimitedPriorityLevelConfiguration`` (zero shares allowed)."""
    found: list[FieldError] = []
    shares = limited.nominal_concurrency_shares or 0
    if shares < 0:
        found.append(
            errors.invalid(
                child(path, "nominalConcurrencyShares"), shares, "must be a non-negative integer"
            )
        )
    found.extend(
        _validate_limit_response(
            limited.limit_response or LimitResponse(), child(path, "limitResponse")
        )
    )
    found.extend(_validate_lendable(limited.lendable_percent, path))
    borrowing = limited.borrowing_limit_percent
    if borrowing is not None and borrowing < 0:
        found.append(
            errors.invalid(
                child(path, "borrowingLimitPercent"),
                borrowing,
                "if specified, must be a non-negative integer",
            )
        )
    return found


def _validate_limit_response(response: LimitResponse, path: str) -> list[FieldError]:
    """``ValidateLimitResponse``."""
    kind = response.type or ""
    if kind == LIMIT_REJECT:
        if response.queuing is not None:
            return [errors.forbidden(child(path, "queuing"), NOT_LIMITED)]
        return []
    if kind == LIMIT_QUEUE:
        if response.queuing is None:
            return [
                errors.required(
                    child(path, "queuing"),
                    "must not be empty if limited.limitResponse.type is Limited",
                )
            ]
        return validate_queuing(response.queuing, child(path, "queuing"))
    return [errors.not_supported(child(path, "type"), kind, LIMIT_TYPES)]


def required_entropy_bits(deck: int, hand: int) -> int:
    """``shufflesharding.RequiredEntropyBits``."""
    return math.ceil(hand * math.log2(deck))


def validate_queuing(queuing: QueuingConfiguration, path: str) -> list[FieldError]:
    """``ValidatePriorityLevelQueuingConfiguration``."""
    found: list[FieldError] = []
    length = queuing.queue_length_limit or 0
    if length <= 0:
        found.append(errors.invalid(child(path, "queueLengthLimit"), length, "must be positive"))
    queues = queuing.queues or 0
    if queues <= 0:
        found.append(errors.invalid(child(path, "queues"), queues, "must be positive"))
    elif queues > MAX_QUEUES:
        found.append(
            errors.invalid(child(path, "queues"), queues, f"must not be greater than {MAX_QUEUES}")
        )
    hand = queuing.hand_size or 0
    hand_path = child(path, "handSize")
    if hand <= 0:
        found.append(errors.invalid(hand_path, hand, "must be positive"))
    elif hand > queues:
        found.append(
            errors.invalid(hand_path, hand, f"should not be greater than queues ({queues})")
        )
    elif required_entropy_bits(queues, hand) > MAX_HASH_BITS:
        found.append(
            errors.invalid(
                hand_path,
                hand,
                f"required entropy bits of deckSize {queues} and handSize {hand} should not be "
                f"greater than {MAX_HASH_BITS}",
            )
        )
    return found


def validate_priority_level_status(
    new: PriorityLevelConfiguration, _old: PriorityLevelConfiguration
) -> list[FieldError]:
    """``ValidatePriorityLevelConfigurationStatusUpdate``."""
    return validate_conditions((new.status.conditions if new.status else None) or ())


CREATE: Final[dict[type[Any], KindValidator]] = {
    PriorityLevelConfiguration: validate_priority_level
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    PriorityLevelConfiguration: lambda new, _old: validate_priority_level(new),
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    PriorityLevelConfiguration: validate_priority_level_status,
}
