"""Tests for kubeprio.api.quantity.

Tables are ported from k8s.io/apimachinery/pkg/api/resource/quantity_test.go and
quantity_example_test.go; each table names the upstream test it comes from.
Property tests check parsing against an independent exact oracle (fractions.Fraction).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kubeprio.api.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_RANGE,
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    QuantityFormat,
    canonical,
    parse_quantity,
    quantity_from_json,
)
from kubeprio.errors import KubeprioError

DSI = QuantityFormat.DECIMAL_SI
BSI = QuantityFormat.BINARY_SI
DEX = QuantityFormat.DECIMAL_EXPONENT
MAX_INT64 = 2**63 - 1
KI = 1024


def nanos(value: str | int) -> int:
    """Exact nano count of a decimal literal such as "1.5" or "1e-9"."""
    with localcontext(prec=100):
        exact = Decimal(value) * 10**9
    assert exact == exact.to_integral_value(), value
    return int(exact)


# --- parsing: TestQuantityParse -------------------------------------------------

# (input, value, format) from upstream TestQuantityParse.
PARSE_TABLE = [
    ("0", "0", DSI),
    ("0n", "0", DSI),
    ("0u", "0", DSI),
    ("0m", "0", DSI),
    ("0Ki", "0", BSI),
    ("0k", "0", DSI),
    ("0Mi", "0", BSI),
    ("0M", "0", DSI),
    ("0Gi", "0", BSI),
    ("0G", "0", DSI),
    ("0Ti", "0", BSI),
    ("0T", "0", DSI),
    # Quantity less numbers are allowed
    ("1", "1", DSI),
    # Binary suffixes
    ("1Ki", 1024, BSI),
    ("8Ki", 8 * KI, BSI),
    ("7Mi", 7 * KI**2, BSI),
    ("6Gi", 6 * KI**3, BSI),
    ("5Ti", 5 * KI**4, BSI),
    ("4Pi", 4 * KI**5, BSI),
    ("3Ei", 3 * KI**6, BSI),
    ("10Ti", 10 * KI**4, BSI),
    ("100Ti", 100 * KI**4, BSI),
    # Decimal suffixes
    ("5n", "5e-9", DSI),
    ("4u", "4e-6", DSI),
    ("3m", "3e-3", DSI),
    ("9", "9", DSI),
    ("8k", "8e3", DSI),
    ("50k", "5e4", DSI),
    ("7M", "7e6", DSI),
    ("6G", "6e9", DSI),
    ("5T", "5e12", DSI),
    ("40T", "4e13", DSI),
    ("300T", "3e14", DSI),
    ("2P", "2e15", DSI),
    ("1E", "1e18", DSI),
    # Decimal exponents
    ("1E-3", "1e-3", DEX),
    ("1e3", "1e3", DEX),
    ("1E6", "1e6", DEX),
    ("1e9", "1e9", DEX),
    ("1E12", "1e12", DEX),
    ("1e15", "1e15", DEX),
    ("1E18", "1e18", DEX),
    # Nonstandard but still parsable
    ("1e14", "1e14", DEX),
    ("1e13", "1e13", DEX),
    ("100.035k", "100035", DSI),
    # Things that look like floating point
    ("0.001", "1e-3", DSI),
    ("0.0005k", "0.5", DSI),
    ("0.005", "5e-3", DSI),
    ("0.05", "5e-2", DSI),
    ("0.5", "0.5", DSI),
    ("0.00050k", "0.5", DSI),
    ("0.00500", "5e-3", DSI),
    ("0.05000", "5e-2", DSI),
    ("0.50000", "0.5", DSI),
    ("0.5e0", "0.5", DEX),
    ("0.5e-1", "5e-2", DEX),
    ("0.5e-2", "5e-3", DEX),
    ("10.035M", "10035e3", DSI),
    ("1.2e3", "12e2", DEX),
    ("1.3E+6", "13e5", DEX),
    ("1.40e9", "14e8", DEX),
    ("1.53E12", "153e10", DEX),
    ("1.6e15", "16e14", DEX),
    ("1.7E18", "17e17", DEX),
    ("9.01", "9.01", DSI),
    ("8.1k", "81e2", DSI),
    ("7.123456M", "7123456", DSI),
    ("6.987654321G", "6987654321", DSI),
    ("5.444T", "5444e9", DSI),
    ("40.1T", "401e11", DSI),
    ("300.2T", "3002e11", DSI),
    ("2.5P", "25e14", DSI),
    ("1.01E", "101e16", DSI),
    # Things that saturate/round
    ("3.001n", "4e-9", DSI),
    ("1.1E-9", "2e-9", DEX),
    ("0.0000000001", "1e-9", DSI),
    ("0.0000000005", "1e-9", DSI),
    ("0.00000000050", "1e-9", DSI),
    ("0.5e-9", "1e-9", DEX),
    ("0.9n", "1e-9", DSI),
    ("0.00000012345", "124e-9", DSI),
    ("0.00000012354", "124e-9", DSI),
    ("9Ei", MAX_INT64, BSI),
    ("9223372036854775807Ki", MAX_INT64, BSI),
    ("12E", "12e18", DSI),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", "102435.84", BSI),
    ("0.5Mi", 524288, BSI),
    ("0.05Gi", "53687091.2", BSI),
    ("0.025Ti", "27487790694.4", BSI),
    # Things written by trolls
    ("0.000000000001Ki", "2e-9", DSI),  # rounds up, changes format
    (".001", "1e-3", DSI),
    (".0001k", "0.1", DSI),
    ("1.", "1", DSI),
    ("1.G", "1e9", DSI),
]


@pytest.mark.parametrize(("text", "value", "fmt"), PARSE_TABLE, ids=[r[0] for r in PARSE_TABLE])
@pytest.mark.parametrize("prefix", ["", "+", "-"], ids=["bare", "plus", "minus"])
def test_parse_value_and_format_match_upstream_table(text, value, fmt, prefix):
    """Upstream TestQuantityParse, including its "-" and "+" variants."""
    got = parse_quantity(prefix + text)
    expected = nanos(value)
    assert got.nanos == (-expected if prefix == "-" else expected)
    assert got.format == fmt


INVALID_TABLE = [
    # upstream TestQuantityParse "invalid"
    ("1.1.M", ERR_FORMAT_WRONG),
    ("1+1.0M", ERR_FORMAT_WRONG),
    ("0.1mi", ERR_SUFFIX),
    ("0.1am", ERR_FORMAT_WRONG),
    ("aoeu", ERR_FORMAT_WRONG),
    (".5i", ERR_SUFFIX),
    ("1i", ERR_SUFFIX),
    ("-3.01i", ERR_SUFFIX),
    ("-3.01e-", ERR_SUFFIX),
    (" 1", ERR_FORMAT_WRONG),  # whitespace is forbidden
    ("1 ", ERR_FORMAT_WRONG),
    # upstream: ParseQuantity("") returns ErrFormatWrong
    ("", ERR_FORMAT_WRONG),
    # TestQuantityParseNonNumericPanic
    ("Non-Numeric", ERR_FORMAT_WRONG),
    # derived from suffix.go interpret / strconv.ParseInt
    ("1e", ERR_SUFFIX),
    ("1e+", ERR_SUFFIX),
    ("1ee3", ERR_SUFFIX),
    ("1Ki3", ERR_SUFFIX),
    ("1e99999999999999999999", ERR_SUFFIX),  # exponent overflows int64
    ("1e1.5", ERR_FORMAT_WRONG),
    ("1_000", ERR_FORMAT_WRONG),
    ("١", ERR_FORMAT_WRONG),  # non-ASCII digit
    ("1\n", ERR_FORMAT_WRONG),
    # derived from the inf.Dec path of ParseQuantity: no digits to read
    ("Ei", ERR_NUMERIC),
    ("-Pi", ERR_NUMERIC),
    (".e-10", ERR_NUMERIC),
    ("-e-20", ERR_NUMERIC),
]


@pytest.mark.parametrize(
    ("text", "message"), INVALID_TABLE, ids=[repr(r[0]) for r in INVALID_TABLE]
)
def test_invalid_strings_raise_upstream_errors(text, message):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == message


def test_error_is_a_kubeprio_and_value_error():
    with pytest.raises(KubeprioError):
        parse_quantity("abc")
    with pytest.raises(ValueError, match="regular expression"):
        parse_quantity("abc")


def test_format_wrong_message_is_upstream_text():
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


# Strings upstream's fast scanner accepts although they hold no digit
# (parseQuantityString; TestParseQuantityString covers "." and "-.").
DIGITLESS_ZERO_TABLE = [
    (".", DSI),
    ("-.", DSI),
    ("+", DSI),
    ("-", DSI),
    ("k", DSI),
    ("e5", DEX),
    ("Ki", BSI),
    ("+.Ti", BSI),
    (".e-9", DEX),
]


@pytest.mark.parametrize(
    ("text", "fmt"), DIGITLESS_ZERO_TABLE, ids=[r[0] for r in DIGITLESS_ZERO_TABLE]
)
def test_digitless_strings_parse_as_zero_like_upstream(text, fmt):
    got = parse_quantity(text)
    assert got.is_zero()
    assert got.format == fmt
    assert str(got) == "0"


def test_exponent_wraps_like_upstream_int32_conversion():
    # suffix.go: int32(strconv.ParseInt(...)); 2**32 wraps to 0.
    assert parse_quantity("1e4294967296").nanos == nanos(1)
    assert parse_quantity("1e4294967299").nanos == nanos("1e3")


def test_tiny_values_round_up_to_one_nano_without_huge_powers():
    assert parse_quantity("1e-1000000000").nanos == 1
    assert parse_quantity("-1e-2000000000").nanos == -1
    assert parse_quantity("0e-2000000000").nanos == 0
    assert parse_quantity("0e2000000000").nanos == 0


@pytest.mark.parametrize(
    "text",
    ["1" * 1001, "0." + "1" * 1000, "1e1000", "10e999", "1" * 1000 + "k"],
    ids=["1001-digits", "1001-digits-fraction", "1e1000", "10e999", "1000-digits-k"],
)
def test_out_of_range_is_rejected(text):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == ERR_RANGE


def test_largest_accepted_magnitude():
    assert parse_quantity("9" * 1000).nanos == (10**1000 - 1) * 10**9
    assert parse_quantity("1e999").nanos == 10 ** (999 + 9)


def test_parse_rejects_non_strings():
    with pytest.raises(TypeError):
        parse_quantity(1)  # type: ignore[arg-type]


# --- upstream TestParseQuantity: values around int64 and 10^18 ------------------

# (input, canonical); canonical None means the input prints back unchanged.
BIG_TABLE = [
    ("-999999999999999999", None),
    ("999999999999999999", None),
    ("-999999999999999999.0", "-999999999999999999"),
    ("999999999999999999.0", "999999999999999999"),
    ("-999999999999999999.1", "-999999999999999999100m"),
    ("999999999999999999.1", "999999999999999999100m"),
    ("-9999999999999999999", None),
    ("9999999999999999999", None),
    ("-1E", None),
    ("1E", None),
    ("-1000000000000000000", "-1E"),
    ("1000000000000000000", "1E"),
    ("-9999999999999999999.0", "-9999999999999999999"),
    ("9999999999999999999.0", "9999999999999999999"),
    ("-1.0E", "-1E"),
    ("1.0E", "1E"),
    ("-1000000000000000000.0", "-1E"),
    ("1000000000000000000.0", "1E"),
    ("-9999999999999999999000m", "-9999999999999999999"),
    ("9999999999999999999000m", "9999999999999999999"),
    ("-9999999999999999999.1", "-9999999999999999999100m"),
    ("9999999999999999999.1", "9999999999999999999100m"),
    ("-1.0000000000000000001E", "-1000000000000000000100m"),
    ("1.0000000000000000001E", "1000000000000000000100m"),
    ("-1000000000000000000.1", "-1000000000000000000100m"),
    ("1000000000000000000.1", "1000000000000000000100m"),
    ("-1.000000000000000001E", "-1000000000000000001"),
    ("1.000000000000000001E", "1000000000000000001"),
    ("-1000000000000000001", None),
    ("1000000000000000001", None),
    ("-10E", None),
    ("10E", None),
    ("-10000000000000000000", "-10E"),
    ("10000000000000000000", "10E"),
    ("-10.0E", "-10E"),
    ("10.0E", "10E"),
    ("-10000000000000000000.0", "-10E"),
    ("10000000000000000000.0", "10E"),
    ("-10000000000000000000000m", "-10E"),
    ("10000000000000000000000m", "10E"),
    ("-10.0000000000000000001E", "-10000000000000000000100m"),
    ("10.0000000000000000001E", "10000000000000000000100m"),
    ("-10000000000000000000.1", "-10000000000000000000100m"),
    ("10000000000000000000.1", "10000000000000000000100m"),
    ("-10.000000000000000001E", "-10000000000000000001"),
    ("10.000000000000000001E", "10000000000000000001"),
    ("-10000000000000000001", None),
    ("10000000000000000001", None),
    ("-9223372036854775809", None),
    ("9223372036854775806", None),
    ("-9223372036854775809.0", "-9223372036854775809"),
    ("9223372036854775806.0", "9223372036854775806"),
    ("-9223372036854775809000m", "-9223372036854775809"),
    ("9223372036854775806000m", "9223372036854775806"),
    ("-9223372036854775809.1", "-9223372036854775809100m"),
    ("9223372036854775806.1", "9223372036854775806100m"),
    ("-9223372036854775808", None),
    ("9223372036854775807", None),
    ("-9223372036854775808.0", "-9223372036854775808"),
    ("9223372036854775807.0", "9223372036854775807"),
    ("-9223372036854775808000m", "-9223372036854775808"),
    ("9223372036854775807000m", "9223372036854775807"),
    ("-9223372036854775808.1", "-9223372036854775808100m"),
    ("9223372036854775807.1", "9223372036854775807100m"),
    ("-9223372036854775807", None),
    ("9223372036854775808", None),
    ("-9223372036854775807.0", "-9223372036854775807"),
    ("9223372036854775808.0", "9223372036854775808"),
    ("-9223372036854775807000m", "-9223372036854775807"),
    ("9223372036854775808000m", "9223372036854775808"),
    ("-9223372036854775807.1", "-9223372036854775807100m"),
    ("9223372036854775808.1", "9223372036854775808100m"),
]


def _big_table_value(text: str) -> int:
    if text.endswith("E"):
        return nanos(text[:-1] + "e18")
    if text.endswith("m"):
        return nanos(text[:-1] + "e-3")
    return nanos(text)


@pytest.mark.parametrize(("text", "expected"), BIG_TABLE, ids=[r[0] for r in BIG_TABLE])
def test_values_beyond_int64_keep_value_and_print_like_upstream(text, expected):
    """Upstream TestParseQuantity (min/max 18, 19, 20 digits and int64 +- 1)."""
    got = parse_quantity(text)
    assert got.nanos == _big_table_value(text)
    assert str(got) == (expected or text)


# --- printing: TestQuantityString and TestQuantityParseEmit ---------------------

# (value, format, expected, alternate) from upstream TestQuantityString.
STRING_TABLE = [
    (KI**3, BSI, "1Gi", "1024Mi"),
    (300 * KI**2, BSI, "300Mi", "307200Ki"),
    (6 * KI, BSI, "6Ki", ""),
    (1001 * KI**3, BSI, "1001Gi", "1025024Mi"),
    (KI**4, BSI, "1Ti", "1024Gi"),
    (5, BSI, "5", "5000m"),
    ("0.5", BSI, "500m", "0.5"),
    ("1e9", DSI, "1G", "1000M"),
    ("1000e6", DSI, "1G", "0.001T"),
    ("1000000e3", DSI, "1G", ""),
    ("1000000000", DSI, "1G", ""),
    ("1e-3", DSI, "1m", "1000u"),
    ("80e-3", DSI, "80m", ""),
    ("1080e-3", DSI, "1080m", "1.08"),
    ("108e-2", DSI, "1080m", "1080000000n"),
    ("10800e-4", DSI, "1080m", ""),
    ("300e6", DSI, "300M", ""),
    ("1e12", DSI, "1T", ""),
    ("1234567e6", DSI, "1234567M", ""),
    ("1234567e-3", BSI, "1234567m", ""),
    ("3e3", DSI, "3k", ""),
    (1025, BSI, "1025", ""),
    (0, DSI, "0", ""),
    (0, BSI, "0", ""),
    ("1e9", DEX, "1e9", ".001e12"),
    ("1e-3", DEX, "1e-3", "0.001e0"),
    ("1e-9", DEX, "1e-9", "1000e-12"),
    ("80e-3", DEX, "80e-3", ""),
    ("300e6", DEX, "300e6", ""),
    ("1e12", DEX, "1e12", ""),
    ("1e3", DEX, "1e3", ""),
    ("3e3", DEX, "3e3", ""),
    ("3e3", DSI, "3k", ""),
    (0, DEX, "0", "00"),
    ("1e-9", DSI, "1n", ""),
    ("80e-9", DSI, "80n", ""),
    ("1080e-9", DSI, "1080n", ""),
    ("108e-8", DSI, "1080n", ""),
    ("10800e-10", DSI, "1080n", ""),
    ("1e-6", DSI, "1u", ""),
    ("80e-6", DSI, "80u", ""),
    ("1080e-6", DSI, "1080u", ""),
]
STRING_IDS = [f"{r[2]}-{r[1].value}-{r[0]}" for r in STRING_TABLE]


@pytest.mark.parametrize(("value", "fmt", "expected", "alternate"), STRING_TABLE, ids=STRING_IDS)
def test_string_is_upstream_canonical_form(value, fmt, expected, alternate):
    """Upstream TestQuantityString, including the negated values."""
    q = Quantity(nanos(value), fmt)
    assert str(q) == expected
    assert q.canonicalize() == expected
    assert str(parse_quantity(expected)) == expected
    if alternate:
        assert str(parse_quantity(alternate)) == expected
    if not q.is_zero():
        assert str(-q) == "-" + expected


EMIT_TABLE = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
]


@pytest.mark.parametrize(("text", "expected"), EMIT_TABLE, ids=[r[0] for r in EMIT_TABLE])
def test_parse_then_emit(text, expected):
    """Upstream TestQuantityParseEmit, including the negated inputs."""
    assert str(parse_quantity(text)) == expected
    assert str(parse_quantity("-" + text)) == "-" + expected


def test_zero_prints_as_zero():
    """Upstream TestQuantityParseZero and TestQuantityCanocicalizeZero."""
    assert str(parse_quantity("0")) == "0"
    assert str(parse_quantity("1000m") - parse_quantity("1")) == "0"


# Upstream String() echoes the input when its fast path judges it canonical
# (quantity.go ParseQuantity; kubernetes/kubernetes#138165).
KEPT_TEXT_TABLE = [
    ("+1", "1"),
    ("01", "1"),
    ("1E3", "1e3"),
    ("1e+3", "1e3"),
    ("1e0", "1"),
    ("1.001", "1001m"),
    ("100.035k", "100035"),
    ("1.G", "1G"),
    ("+1Ki", "1Ki"),
    ("01Gi", "1Gi"),
]


@pytest.mark.parametrize(("text", "strict"), KEPT_TEXT_TABLE, ids=[r[0] for r in KEPT_TEXT_TABLE])
def test_string_echoes_input_the_fast_path_judges_canonical(text, strict):
    q = parse_quantity(text)
    assert str(q) == text
    assert canonical(text) == text
    assert q.canonicalize() == strict
    # Arithmetic clears the kept text, as upstream Add/Sub clear Quantity.s.
    assert str(q + Quantity(0)) == strict


@pytest.mark.parametrize(
    "text", ["1000", "5000m", "1024Mi", "0.5", "1.5", "00", "1.10"], ids=lambda t: t
)
def test_string_does_not_echo_non_canonical_input(text):
    q = parse_quantity(text)
    assert str(q) == q.canonicalize()


def test_replace_does_not_carry_a_stale_string():
    import dataclasses

    q = parse_quantity("+1")
    assert str(dataclasses.replace(q, nanos=nanos(2))) == "2"


# Values past the last suffix print in exponent form, following the fix merged
# upstream in kubernetes/kubernetes#140459 (before it, "1000E" printed as "1").
BEYOND_SUFFIX_TABLE = [
    ("1e21", DSI, "1e21"),
    ("1e22", DSI, "10e21"),
    ("1e20", DSI, "100E"),
    (2**70, BSI, "1180591620717411303424"),
    ("1e70", BSI, "10e69"),
    # The PR describes an e-notation fallback; a DecimalSI one would print "...k".
    (2**70 * 1000, BSI, "1180591620717411303424e3"),
    (KI**6, BSI, "1Ei"),
    (2000, BSI, "2000"),
    (3 * KI**5 * 1000, BSI, "3000Pi"),
]


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    BEYOND_SUFFIX_TABLE,
    ids=[f"{r[2]}-{r[1].value}" for r in BEYOND_SUFFIX_TABLE],
)
def test_values_past_the_last_suffix_print_in_exponent_form(value, fmt, expected):
    q = Quantity(nanos(value), fmt)
    assert str(q) == expected
    assert parse_quantity(expected) == q


def test_parsed_decimal_si_past_exa_prints_in_exponent_form():
    assert str(parse_quantity("1000E")) == "1e21"
    assert str(parse_quantity("-1000E")) == "-1e21"
    assert str(parse_quantity("12000P")) == "12E"
    assert str(parse_quantity("1000000000000000000000")) == "1e21"


def test_binary_si_sum_past_int64_prints_but_reparses_capped():
    """Upstream: 4Ei + 4Ei prints "8Ei"; parsing "8Ei" caps BinarySI at 2^63-1."""
    total = parse_quantity("4Ei") + parse_quantity("4Ei")
    assert str(total) == "8Ei"
    assert parse_quantity("8Ei").nanos == MAX_INT64 * 10**9


def test_binary_si_integer_ending_in_000_is_not_idempotent_upstream():
    """NewQuantity(2000, BinarySI) prints "2000", which parses as DecimalSI "2k"."""
    q = Quantity.from_int(2000, BSI)
    assert str(q) == "2000"
    assert str(parse_quantity(str(q))) == "2k"


# --- constructors and accessors -------------------------------------------------

MILLI_TABLE = [
    (1, DSI, "1m"),
    (1000, DSI, "1"),
    (1234000, DSI, "1234"),
    (1024, BSI, "1024m"),  # Format changes
    (1000000, DEX, "1e3"),  # upstream: "invalidFormatDefaultsToExponent"
    (1024 * 1024, BSI, "1048576m"),  # Format changes
]


@pytest.mark.parametrize(("milli", "fmt", "expected"), MILLI_TABLE, ids=[r[2] for r in MILLI_TABLE])
def test_from_milli(milli, fmt, expected):
    """Upstream TestMilliNewSet."""
    q = Quantity.from_milli(milli, fmt)
    assert str(q) == expected
    assert parse_quantity(str(q)).milli_value() == milli


INT_TABLE = [
    (1, DSI, "1"),
    (1000, DSI, "1k"),
    (1234000, DSI, "1234k"),
    (1024, BSI, "1Ki"),
    (1000000, DEX, "1e6"),  # upstream: "invalidFormatDefaultsToExponent"
    (1024 * 1024, BSI, "1Mi"),
]


@pytest.mark.parametrize(("value", "fmt", "expected"), INT_TABLE, ids=[r[2] for r in INT_TABLE])
def test_from_int(value, fmt, expected):
    """Upstream TestNewSet."""
    q = Quantity.from_int(value, fmt)
    assert str(q) == expected
    assert parse_quantity(str(q)).value() == value


def test_constructors_default_to_decimal_si_and_check_input():
    assert Quantity.from_int(3).format == DSI
    assert Quantity.from_milli(3).format == DSI
    with pytest.raises(TypeError):
        Quantity.from_int(True)
    with pytest.raises(TypeError):
        Quantity.from_milli(1.5)  # type: ignore[arg-type]
    with pytest.raises(QuantityError):
        Quantity.from_int(10**1000)


def test_examples_from_upstream_documentation():
    """Upstream ExampleFormat and ExampleMustParse."""
    assert str(Quantity.from_int(5 * 1024**3, BSI)) == "5Gi"
    assert str(Quantity.from_int(5 * 1000**3, DSI)) == "5G"
    assert str(Quantity.from_milli(5300, DSI)) == "5300m"
    assert parse_quantity("5Gi").value() == 5368709120
    assert parse_quantity("5Gi").format == BSI
    assert parse_quantity("5G").value() == 5000000000
    assert parse_quantity("5300m").milli_value() == 5300
    assert parse_quantity("5.4").milli_value() == 5400


ROUNDING_TABLE = [
    # (text, value(), milli_value()); upstream rounds up, away from zero on the
    # int64 path (negativeScaleInt64), and TestScaledValue covers n/u/m/unit.
    ("1n", 1, 1),
    ("1u", 1, 1),
    ("1m", 1, 1),
    ("999m", 1, 999),
    ("1001m", 2, 1001),
    ("1.5", 2, 1500),
    ("1500001n", 1, 2),
    ("0", 0, 0),
    ("-1n", -1, -1),
    ("-1.5", -2, -1500),
    ("-1500001n", -1, -2),
    ("9223372036854775807", MAX_INT64, MAX_INT64 * 1000),
    ("1000E", 10**21, 10**24),  # no int64 overflow in Python
]


@pytest.mark.parametrize(
    ("text", "value", "milli"), ROUNDING_TABLE, ids=[r[0] for r in ROUNDING_TABLE]
)
def test_value_and_milli_value_round_away_from_zero(text, value, milli):
    q = parse_quantity(text)
    assert q.value() == value
    assert q.milli_value() == milli


def test_sign_and_is_zero():
    assert parse_quantity("-1m").sign() == -1
    assert parse_quantity("0Ki").sign() == 0
    assert parse_quantity("0Ki").is_zero()
    assert parse_quantity("1n").sign() == 1


# --- comparison and arithmetic --------------------------------------------------

CMP_TABLE = [
    # upstream TestQuantityCmp
    ("0", "0", 0),
    ("100m", "50m", 1),
    ("50m", "100m", -1),
    ("10000T", "100Gi", 1),
    # formats are ignored
    ("1Ki", "1024", 0),
    ("1e3", "1k", 0),
    ("-1", "1", -1),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), CMP_TABLE, ids=[f"{r[0]}~{r[1]}" for r in CMP_TABLE]
)
def test_comparison_uses_value_only(a, b, expected):
    x, y = parse_quantity(a), parse_quantity(b)
    assert (x > y, x == y, x < y) == (expected > 0, expected == 0, expected < 0)
    assert (x >= y, x <= y, x != y) == (expected >= 0, expected <= 0, expected != 0)
    if expected == 0:
        assert hash(x) == hash(y)


def test_comparison_with_other_types_is_not_supported():
    one = parse_quantity("1")
    assert one != 1
    assert one != "1"
    with pytest.raises(TypeError):
        assert one < 2  # type: ignore[operator]
    with pytest.raises(TypeError):
        one + 1  # type: ignore[operator]


ADD_TABLE = [
    # upstream TestAdd
    ((10, DSI), (10, DSI), (20, DSI)),
    ((10, DSI), (1, BSI), (11, DSI)),
    ((10, BSI), (1, DSI), (11, BSI)),
    ((0, DSI), (50, DSI), (50, DSI)),
    ((50, DSI), (0, DSI), (50, DSI)),
    ((0, DSI), (0, DSI), (0, DSI)),
    # a zero left operand takes the right operand's format
    ((0, DSI), (5, BSI), (5, BSI)),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), ADD_TABLE, ids=[f"{r[0]}+{r[1]}" for r in ADD_TABLE]
)
def test_add(a, b, expected):
    got = Quantity.from_int(*a) + Quantity.from_int(*b)
    assert (got.value(), got.format) == expected


SUB_TABLE = [
    # upstream TestSub
    ((10, DSI), (10, DSI), (0, DSI)),
    ((10, DSI), (1, BSI), (9, DSI)),
    ((10, BSI), (1, DSI), (9, BSI)),
    ((0, DSI), (50, DSI), (-50, DSI)),
    ((50, DSI), (0, DSI), (50, DSI)),
    ((0, DSI), (0, DSI), (0, DSI)),
    ((0, DSI), (5, BSI), (-5, BSI)),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), SUB_TABLE, ids=[f"{r[0]}-{r[1]}" for r in SUB_TABLE]
)
def test_sub(a, b, expected):
    got = Quantity.from_int(*a) - Quantity.from_int(*b)
    assert (got.value(), got.format) == expected


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_adding_or_subtracting_zero_preserves_suffix(text):
    """Upstream TestQuantityAddZeroPreservesSuffix and TestQuantitySubZeroPreservesSuffix."""
    value, zero = parse_quantity(text), parse_quantity("0")
    assert str(value + zero) == text
    assert str(zero + value) == text
    assert str(value - zero) == text
    assert str(zero - value) == str(-value) == "-" + text


def test_negation():
    """Upstream TestQuantityNeg and TestNeg."""
    q = parse_quantity("9.01")
    assert str(-q) == "-9010m"
    assert q.__neg__().__neg__() == q
    assert (-Quantity.from_int(10, BSI)).format == BSI


# --- JSON / YAML values ---------------------------------------------------------

JSON_TABLE = [
    # upstream TestJSONWhitespace
    (" 1", "1"),
    ("1 ", "1"),
    (1, "1"),
    (10, "10"),
    (-1, "-1"),
    (" -1", "-1"),
    # Go strings.TrimSpace whitespace, beyond ASCII
    ("\u00a0\u30001Gi\u2028", "1Gi"),
    # ints and floats from YAML; floats become the text Go's JSON encoder writes
    (2, "2"),
    (0.5, "500m"),
    (0.1, "100m"),
    (1.001, "1.001"),
    (1000.0, "1k"),
    (1e16, "10P"),
    (1e21, "1e+21"),
    (1.5e-7, "150e-9"),
    (-0.0, "0"),
    (None, "0"),  # JSON null leaves a zero quantity
]


@pytest.mark.parametrize(("value", "expected"), JSON_TABLE, ids=[repr(r[0]) for r in JSON_TABLE])
def test_quantity_from_json(value, expected):
    assert str(quantity_from_json(value)) == expected


@pytest.mark.parametrize(
    "value",
    [True, False, [1], {"a": 1}, math.inf, math.nan, b"1", "\x1c1"],
    ids=["true", "false", "list", "dict", "inf", "nan", "bytes", "file-separator"],
)
def test_quantity_from_json_rejects_other_values(value):
    with pytest.raises(QuantityError) as info:
        quantity_from_json(value)
    assert str(info.value) == ERR_FORMAT_WRONG


def test_quantity_from_json_rejects_huge_ints():
    with pytest.raises(QuantityError):
        quantity_from_json(10**5000)


# --- properties -----------------------------------------------------------------

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

_MULTIPLIERS = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}

digits = st.text(alphabet="0123456789", max_size=22)


@st.composite
def quantity_texts(draw):
    """Well-formed quantity strings with at least one digit."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(digits)
    fraction = draw(st.none() | digits)
    if not whole and not fraction:
        whole = draw(st.text(alphabet="0123456789", min_size=1, max_size=5))
    number = whole + ("" if fraction is None else "." + fraction)
    if draw(st.booleans()):
        suffix = draw(st.sampled_from(sorted(_MULTIPLIERS)))
    else:
        letter = draw(st.sampled_from(["e", "E"]))
        exp_sign = draw(st.sampled_from(["", "+", "-"]))
        suffix = f"{letter}{exp_sign}{draw(st.integers(0, 40))}"
    return sign + number + suffix


def oracle(text: str) -> tuple[int, QuantityFormat]:
    """Exact value of a quantity_texts() string, rounded and capped as upstream describes."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    end = len(body) - len(body.lstrip("0123456789."))
    number, suffix = body[:end], body[end:]
    whole, _, fraction = number.partition(".")
    value = Fraction(int(whole + fraction or "0"), 10 ** len(fraction))
    if suffix in _MULTIPLIERS:
        value *= _MULTIPLIERS[suffix]
        fmt = BSI if suffix.endswith("i") else DSI
    else:
        value *= Fraction(10) ** int(suffix[1:])
        fmt = DEX
    exact = value * 10**9
    magnitude = math.ceil(exact)  # away from zero: exact is not negative here
    if fmt == BSI:
        magnitude = min(magnitude, MAX_INT64 * 10**9)
        if 0 < magnitude < 10**9:
            fmt = DSI
    return sign * magnitude, fmt


@PROPERTY_SETTINGS
@given(quantity_texts())
def test_parse_matches_exact_oracle(text):
    q = parse_quantity(text)
    assert (q.nanos, q.format) == oracle(text)


@PROPERTY_SETTINGS
@given(quantity_texts())
def test_parsed_quantities_round_trip_through_their_string(text):
    q = parse_quantity(text)
    printed = str(q)
    assert parse_quantity(printed) == q
    assert parse_quantity(q.canonicalize()) == q
    # Upstream's one exception to idempotence: a BinarySI integer that has no
    # binary suffix but ends in 000 re-parses as DecimalSI ("2000" -> "2k").
    assume(not (q.format == BSI and printed.endswith("000")))
    assert str(parse_quantity(printed)) == printed


formats = st.sampled_from(list(QuantityFormat))
quantities = st.builds(Quantity, st.integers(-(10**40), 10**40), formats)


@PROPERTY_SETTINGS
@given(quantities)
def test_any_quantity_round_trips_through_its_string(q):
    # Parsing caps BinarySI at 2^63-1, so larger BinarySI values cannot return.
    assume(q.format != BSI or abs(q.nanos) <= MAX_INT64 * 10**9)
    printed = str(q)
    assert parse_quantity(printed) == q
    assume(not (q.format == BSI and printed.endswith("000")))
    assert str(parse_quantity(printed)) == printed


@PROPERTY_SETTINGS
@given(quantities, quantities)
def test_ordering_follows_nanos(a, b):
    assert (a < b) == (a.nanos < b.nanos)
    assert (a <= b) == (a.nanos <= b.nanos)
    assert (a == b) == (a.nanos == b.nanos)
    assert sorted([a, b]) == sorted([a, b], key=lambda q: q.nanos)


@PROPERTY_SETTINGS
@given(quantities, quantities)
def test_value_accessors_are_monotone(a, b):
    low, high = sorted([a, b])
    assert low.milli_value() <= high.milli_value()
    assert low.value() <= high.value()
    assert abs(a.milli_value() * 10**6 - a.nanos) < 10**6
    assert abs(a.value() * 10**9 - a.nanos) < 10**9


@PROPERTY_SETTINGS
@given(quantities, quantities)
def test_arithmetic_is_exact(a, b):
    assert (a + b).nanos == a.nanos + b.nanos
    assert (a - b).nanos == a.nanos - b.nanos
    assert (a + b) - b == a
    assert (a + b).format == (b.format if a.is_zero() else a.format)
