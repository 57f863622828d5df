"""Kubernetes resource quantities ("500m", "1Gi", "1e3") as exact integers.

This module mirrors ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``,
``amount.go``, ``suffix.go``, ``math.go``, ``scale_int.go``): what
``ParseQuantity`` accepts and rejects, with the same error texts; the value it
stores (rounded away from zero to a whole nano, BinarySI capped at 2^63-1); the
format it remembers; and what ``Quantity.String`` prints. A :class:`Quantity`
holds the value as an exact count of nano-units, so the two representations
upstream switches between (``int64Amount`` and ``inf.Dec``) collapse into one
Python ``int``, and no value is ever a float.

It is pure: no I/O, no clock, no randomness, and it imports only the standard
library and :mod:`kubeprio.errors`. Models, validation, serialization,
admission and the scheduler all call it; it calls none of them. The one piece of
state is an ``lru_cache`` on parsing, which is safe because a Quantity is
immutable.

Printing follows upstream ``String()``, which is ``CanonicalizeBytes`` except for
one upstream quirk that we keep: when ``ParseQuantity`` takes its int64 fast
path and judges the input already canonical, it remembers the input text and
``String()`` echoes it. That judgement is loose, so ``"+1"``, ``"01"``,
``"1E3"`` and ``"1.001"`` print back unchanged (kubernetes/kubernetes#138165),
exactly as a real API server echoes them. :meth:`Quantity.canonicalize` always
gives the ``CanonicalizeBytes`` form, and arithmetic results always print
canonically, as upstream's ``Add``/``Sub`` clear the remembered text.

Points worth knowing, including where we differ from upstream on purpose:

* A DecimalSI value past ``E``, and a BinarySI value that would need a suffix
  past ``Ei`` (reachable by arithmetic only, since parsing caps BinarySI), print
  in exponent form (``"1e21"``). Released apimachinery drops the exponent and
  prints ``"1"``; we follow the fix merged in kubernetes/kubernetes#140459.
* ``value()`` and ``milli_value()`` are exact Python ints: they never overflow,
  and negative values round away from zero, as upstream's int64 path does
  (``negativeScaleInt64``). Upstream's ``inf.Dec`` path rounds negative values
  differently and inconsistently.
* Numbers with more than 1000 digits, or of magnitude 10^1000 or more, are
  rejected. This bounds CPU and memory, and stays inside Python's int/str
  conversion limit. Upstream has no such limit.
* An exponent past int32 wraps around as upstream's ``int32(parsed)`` does
  (``"1e4294967296"`` is 1), but upstream's later int32 scale arithmetic is not
  reproduced for exponents near -2^31.
"""

from __future__ import annotations

import decimal
import enum
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Final

from kubeprio.api.model import INT64_MAX, INT64_MIN, wrap_int32
from kubeprio.errors import KubeprioError

__all__ = [
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_RANGE",
    "ERR_SUFFIX",
    "Quantity",
    "QuantityError",
    "QuantityFormat",
    "canonical",
    "parse_quantity",
    "quantity_from_json",
]


class QuantityFormat(enum.StrEnum):
    """How a quantity prints its exponent (upstream ``resource.Format``)."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
    BINARY_SI = "BinarySI"  # 12Mi (12 * 2^20)
    DECIMAL_SI = "DecimalSI"  # 12M (12 * 10^6)


class QuantityError(KubeprioError, ValueError):
    """A string or JSON value is not a valid resource quantity.

    The message is the upstream error text (``ErrFormatWrong``, ``ErrNumeric``
    or ``ErrSuffix``), or :data:`ERR_RANGE` for kubeprio's own size limit.
    """


# The regular expression upstream quotes in ErrFormatWrong. The scanner below is
# stricter than this pattern in one way and looser in another, exactly as
# upstream's hand-written parseQuantityString is.
_SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

#: Upstream ``ErrFormatWrong``.
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{_SPLIT_RE_STRING}'"
#: Upstream ``ErrNumeric``.
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
#: Upstream ``ErrSuffix``.
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

_MAX_DIGITS: Final = 1000
#: kubeprio's own limit; upstream parses arbitrarily long numbers.
ERR_RANGE: Final = (
    f"quantity out of range: kubeprio accepts at most {_MAX_DIGITS} digits "
    f"and magnitudes below 10^{_MAX_DIGITS}"
)

_NANO: Final = 10**9
_MILLI_IN_NANOS: Final = 10**6
_MAX_NANOS: Final = 10 ** (_MAX_DIGITS + 9)  # exclusive bound on |nanos|
_BINARY_SI_CAP_NANOS: Final = INT64_MAX * _NANO  # upstream maxAllowed
_BINARY_SI_MIN_NANOS: Final = 1024 * _NANO  # below this BinarySI prints as DecimalSI

# Mirrors parseQuantityString: sign, leading zeros, integer digits, optional
# "." and fraction digits, then suffix letters, an optional sign and digits.
# Every segment is greedy and the next segment cannot start with a character
# the previous one accepts, so the first match is the scanner's split.
_SCAN: Final = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
# strconv.ParseInt(s, 10, 64) accepts an optional sign and at least one digit.
_PARSE_INT: Final = re.compile(r"([+-]?)([0-9]+)")

# (base, exponent, format) per suffix: upstream suffixer.interpret.
_SUFFIXES: Final[dict[str, tuple[int, int, QuantityFormat]]] = {
    "": (10, 0, QuantityFormat.DECIMAL_SI),
    "n": (10, -9, QuantityFormat.DECIMAL_SI),
    "u": (10, -6, QuantityFormat.DECIMAL_SI),
    "m": (10, -3, QuantityFormat.DECIMAL_SI),
    "k": (10, 3, QuantityFormat.DECIMAL_SI),
    "M": (10, 6, QuantityFormat.DECIMAL_SI),
    "G": (10, 9, QuantityFormat.DECIMAL_SI),
    "T": (10, 12, QuantityFormat.DECIMAL_SI),
    "P": (10, 15, QuantityFormat.DECIMAL_SI),
    "E": (10, 18, QuantityFormat.DECIMAL_SI),
    "Ki": (2, 10, QuantityFormat.BINARY_SI),
    "Mi": (2, 20, QuantityFormat.BINARY_SI),
    "Gi": (2, 30, QuantityFormat.BINARY_SI),
    "Ti": (2, 40, QuantityFormat.BINARY_SI),
    "Pi": (2, 50, QuantityFormat.BINARY_SI),
    "Ei": (2, 60, QuantityFormat.BINARY_SI),
}
# Decimal exponent (a multiple of 3) -> DecimalSI suffix, for printing.
_DECIMAL_SUFFIX: Final = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
# Power of 1024 -> BinarySI suffix. Power 0 prints bare: upstream's lookup of
# (2, 0) fails and leaves the suffix empty.
_BINARY_SUFFIX: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")

# Go's unicode.IsSpace, which strings.TrimSpace uses; str.strip() would also
# remove the ASCII separators \x1c-\x1f.
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass(frozen=True, slots=True, eq=False)
class Quantity:
    """An exact resource quantity: ``nanos`` units of 10^-9, printed per ``format``.

    Equality, hashing and ordering look at the value only (upstream ``Cmp`` and
    ``Equal``), so ``parse_quantity("1Ki") == parse_quantity("1024")``.
    """

    nanos: int
    format: QuantityFormat = QuantityFormat.DECIMAL_SI
    # What String() returns: the input text kept by parse_quantity (upstream
    # Quantity.s), or the canonical form once computed. init=False keeps it out
    # of evolve(), which therefore never carries a stale string.
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_int(cls, value: int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> Quantity:
        """``value`` whole units (upstream ``NewQuantity``)."""
        return cls(_checked_nanos(value, _NANO), fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: QuantityFormat = QuantityFormat.DECIMAL_SI) -> Quantity:
        """``milli`` thousandths of a unit (upstream ``NewMilliQuantity``)."""
        return cls(_checked_nanos(milli, _MILLI_IN_NANOS), fmt)

    def __str__(self) -> str:
        """Upstream ``String()``: the canonical form, or the parsed text if it was kept."""
        text = self._text
        if text is None:
            text = _canonicalize(self.nanos, self.format)
            object.__setattr__(self, "_text", text)
        return text

    def canonicalize(self) -> str:
        """Upstream ``CanonicalizeBytes``: the canonical form, never the input text.

        ``1.5Gi`` is ``1536Mi``, ``1000`` is ``1k``, ``0.1`` is ``100m``; zero is
        ``0``. BinarySI values in (-1024, 1024) or with a fraction print as
        DecimalSI.
        """
        return _canonicalize(self.nanos, self.format)

    def value(self) -> int:
        """Whole units, rounded away from zero (upstream ``Value``)."""
        return _divide_away_from_zero(self.nanos, _NANO)

    def milli_value(self) -> int:
        """Thousandths of a unit, rounded away from zero (upstream ``MilliValue``)."""
        return _divide_away_from_zero(self.nanos, _MILLI_IN_NANOS)

    def is_zero(self) -> bool:
        """Whether the value is zero (upstream ``IsZero``)."""
        return self.nanos == 0

    def sign(self) -> int:
        """-1, 0 or 1 (upstream ``Sign``)."""
        return (self.nanos > 0) - (self.nanos < 0)

    def __add__(self, other: Quantity) -> Quantity:
        """The sum, in this format unless this is zero (upstream ``Add``)."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos + other.nanos, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        """The difference, in this format unless this is zero (upstream ``Sub``)."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.nanos == 0 else self.format
        return Quantity(self.nanos - other.nanos, fmt)

    def __neg__(self) -> Quantity:
        """The negated value in the same format (upstream ``Neg``)."""
        return Quantity(-self.nanos, self.format)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos == other.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos < other.nanos

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos <= other.nanos

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos > other.nanos

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.nanos >= other.nanos


def parse_quantity(text: str) -> Quantity:
    """Parse ``text`` as upstream ``ParseQuantity`` does, or raise :class:`QuantityError`.

    Whitespace is not trimmed (``" 1"`` is an error, as upstream); use
    :func:`quantity_from_json` for values read from JSON or YAML.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_quantity() needs a str, not {type(text).__name__}")
    return _parse_cached(text)


def canonical(text: str) -> str:
    """What an API server prints for the quantity ``text``: ``str(parse_quantity(text))``."""
    return str(parse_quantity(text))


def quantity_from_json(value: object) -> Quantity:
    """Decode a JSON or YAML value as upstream ``Quantity.UnmarshalJSON`` does.

    A string has surrounding whitespace trimmed (Go ``strings.TrimSpace``). An
    int is parsed from its decimal text, a float from the text Go's JSON encoder
    writes for it, which is the text the API server receives when kubectl turns
    YAML into JSON. ``None`` (JSON null) is zero, as upstream leaves a zero
    Quantity. A bool or any other type is rejected with the upstream format
    error, since its JSON text (``true``, ``[...]``) is not a quantity.
    """
    if isinstance(value, str):
        return parse_quantity(value.strip(_GO_SPACE))
    if value is None:
        return Quantity(0, QuantityFormat.DECIMAL_SI)
    if isinstance(value, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(value, int):
        if abs(value) >= 10**_MAX_DIGITS:
            raise QuantityError(ERR_RANGE)
        return parse_quantity(str(value))
    if isinstance(value, float):
        return parse_quantity(_go_json_float(value))
    raise QuantityError(ERR_FORMAT_WRONG)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    return _parse(text)


def _parse(text: str) -> Quantity:
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return _with_text(Quantity(0, QuantityFormat.DECIMAL_SI), text)

    match = _SCAN.fullmatch(text)
    if match is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    sign, zeros, num, denom, suffix = match.groups()
    if denom is None:
        denom = ""

    entry = _SUFFIXES.get(suffix)
    if entry is None:
        entry = _exponent_suffix(suffix)
    base, exponent, fmt = entry

    if not (zeros or num or denom):
        # Nothing but a sign, "." and/or a suffix. Upstream's int64 fast path
        # reads that as 0; its inf.Dec path finds no digits and fails.
        if (base == 10 and exponent < -9) or (base == 2 and exponent > 40):
            raise QuantityError(ERR_NUMERIC)
        return Quantity(0, fmt)

    if not num:
        num = "0"
    if len(num) + len(denom) > _MAX_DIGITS:
        raise QuantityError(ERR_RANGE)

    if base == 10:
        nanos, keep_text = _decimal_nanos(num, denom, exponent)
    else:
        nanos, keep_text = _binary_nanos(num, denom, exponent)
        if nanos < _NANO and nanos != 0:
            fmt = QuantityFormat.DECIMAL_SI
    quantity = Quantity(-nanos if sign == "-" else nanos, fmt)
    return _with_text(quantity, text) if keep_text else quantity


def _decimal_nanos(num: str, denom: str, exponent: int) -> tuple[int, bool]:
    """|value| in nanos, rounded up, and whether upstream keeps the input text."""
    digits = num + denom
    scale = exponent - len(denom)  # value == int(digits) * 10**scale
    keep_text = (
        len(digits) <= 18  # upstream: precision >= 0, the int64 fast path
        and scale >= -9
        and scale % 3 == 0
        and digits[0] != "0"
        and not digits.endswith("000")
    )
    shift = scale + 9  # to nanos
    if shift >= 0:
        significant = digits.lstrip("0")
        if not significant:
            return 0, keep_text
        if len(significant) + scale > _MAX_DIGITS:
            raise QuantityError(ERR_RANGE)
        return int(significant) * 10**shift, keep_text
    # Finer than a nano: keep the whole nanos and round any remainder up,
    # without ever building 10**(-shift), which may be astronomically large.
    cut = len(digits) + shift
    head = int(digits[:cut]) if cut > 0 else 0
    tail = digits[cut:] if cut > 0 else digits
    return head + (1 if tail.strip("0") else 0), keep_text


def _binary_nanos(num: str, denom: str, exponent: int) -> tuple[int, bool]:
    """|value| in nanos, rounded up and capped, and whether upstream keeps the text."""
    keep_text = False
    if not denom:
        whole = int(num)
        # Upstream's fast path: a rough digit budget, then an int64 overflow check.
        precision = 15 - len(num) - exponent * 3 // 10 - 1
        keep_text = precision >= 0 and (whole << exponent) <= INT64_MAX and whole & 7 != 0
        nanos = (whole << exponent) * _NANO
    else:
        scaled = int(num + denom) << exponent
        if len(denom) <= 9:
            nanos = scaled * 10 ** (9 - len(denom))
        else:
            nanos = -(-scaled // 10 ** (len(denom) - 9))
    # Upstream caps BinarySI at parse time only ("8Ei" parses as 2^63-1).
    return min(nanos, _BINARY_SI_CAP_NANOS), keep_text


def _exponent_suffix(suffix: str) -> tuple[int, int, QuantityFormat]:
    """Interpret ``e<int>``/``E<int>`` as upstream suffixHandler.interpret does."""
    if len(suffix) > 1 and suffix[0] in "eE":
        match = _PARSE_INT.fullmatch(suffix, 1)
        if match is not None:
            sign, digits = match.groups()
            digits = digits.lstrip("0") or "0"
            # len() first: Python refuses int() of very long strings.
            if len(digits) <= 19:
                parsed = -int(digits) if sign == "-" else int(digits)
                if INT64_MIN <= parsed <= INT64_MAX:
                    # Upstream stores int32(parsed), which wraps.
                    return 10, wrap_int32(parsed), QuantityFormat.DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _canonicalize(nanos: int, fmt: QuantityFormat) -> str:
    """Upstream ``CanonicalizeBytes`` over an exact nano count."""
    if nanos == 0:
        return "0"
    sign = "-" if nanos < 0 else ""
    magnitude = -nanos if nanos < 0 else nanos

    if fmt == QuantityFormat.BINARY_SI:
        units, fraction = divmod(magnitude, _NANO)
        if magnitude < _BINARY_SI_MIN_NANOS or fraction:
            fmt = QuantityFormat.DECIMAL_SI
        else:
            power = ((units & -units).bit_length() - 1) // 10
            if power < len(_BINARY_SUFFIX):
                return f"{sign}{units >> (10 * power)}{_BINARY_SUFFIX[power]}"
            # Past "Ei": kubernetes/kubernetes#140459 falls back to exponent form.
            fmt = QuantityFormat.DECIMAL_EXPONENT
    elif fmt != QuantityFormat.DECIMAL_SI:
        fmt = QuantityFormat.DECIMAL_EXPONENT

    # Move every factor of ten into the exponent, then lower the exponent to a
    # multiple of three (amount.go AsCanonicalBytes).
    digits = str(magnitude)
    mantissa = digits.rstrip("0")
    exponent = len(digits) - len(mantissa) - 9
    pad = exponent % 3
    if pad:
        mantissa += "0" * pad
        exponent -= pad

    if fmt == QuantityFormat.DECIMAL_SI:
        suffix = _DECIMAL_SUFFIX.get(exponent)
        if suffix is not None:
            return f"{sign}{mantissa}{suffix}"
        # Past "E": kubernetes/kubernetes#140459 falls back to exponent form.
    return f"{sign}{mantissa}e{exponent}" if exponent else f"{sign}{mantissa}"


def _divide_away_from_zero(nanos: int, divisor: int) -> int:
    quotient, remainder = divmod(abs(nanos), divisor)
    if remainder:
        quotient += 1
    return quotient if nanos >= 0 else -quotient


def _checked_nanos(value: int, factor: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a quantity needs an int, not {type(value).__name__}")
    nanos = value * factor
    if abs(nanos) >= _MAX_NANOS:
        raise QuantityError(ERR_RANGE)
    return nanos


def _with_text(quantity: Quantity, text: str) -> Quantity:
    object.__setattr__(quantity, "_text", text)
    return quantity


def _go_json_float(value: float) -> str:
    """The text Go's encoding/json writes for a float64 (shortest round-trip digits)."""
    if not math.isfinite(value):
        raise QuantityError(ERR_FORMAT_WRONG)
    exact = decimal.Decimal(repr(value))
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        return format(exact, "e")  # "1e+21", "1.5e-7": Go's form after its e-09 clean-up
    text = format(exact, "f")
    return text[:-2] if text.endswith(".0") else text
