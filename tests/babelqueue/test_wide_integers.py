"""Integer literals beyond int64 inside ``data`` (babelqueue.md, Decisions §6).

Go and Node write a double as an integer literal whenever they can (``1e20`` becomes
``100000000000000000000``, int64 max becomes ``9223372036854776000``), so a conformant message
that passed through one of their hops can carry an integer beyond int64. A consumer reads it
exactly, with a ``number.beyond_int64`` warning at its pointer, and re-emits it unchanged; a
producer never writes one. Driven by every column of the vendored encoder corpus.
"""

from __future__ import annotations

import decimal
import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import envelopekit as ek
from envelopekit import ProducerError, rules
from envelopekit.babelqueue import BabelEnvelope
from tests.conftest import DATA

ENCODING = DATA / "babelqueue" / "encoding"
INPUT: dict[str, Any] = json.loads((ENCODING / "edge-input.json").read_bytes())
COLUMNS: dict[str, str] = json.loads((ENCODING / "edge-output-by-encoder.json").read_bytes())
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# What the corpus shows (babelqueue.md §8), pinned so that a broken walker below cannot make
# the column tests vacuous: Python and Java keep 12345678901234567890123 exact, PHP writes it
# as a double, Go and Node round int64 max up and write 1e20 as an integer literal.
BEYOND_INT64_BY_COLUMN = {
    "python_json_dumps": {"/data/beyond_int64"},
    "php_json_encode": set(),
    "go_encoding_json_struct": {"/data/int64_max", "/data/big_float"},
    "node_JSON_stringify": {"/data/int64_max", "/data/big_float"},
    "java_sdk_Json_write": {"/data/beyond_int64"},
}


def numbers(value: Any, at: str = "") -> Iterator[tuple[str, int | float]]:
    """Every number under ``value`` with its JSON pointer (booleans are not numbers)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{at}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from numbers(item, f"{at}/{i}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield at, value


def typed(value: Any) -> Any:
    """``value`` with every number tagged by its type, so ``1`` and ``1.0`` compare unequal."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (type(value).__name__, value)
    return value


def beyond_int64(document: Any) -> set[str]:
    return {
        at
        for at, value in numbers(document)
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX
    }


def wide_warnings(warnings: list[ek.Violation]) -> set[str]:
    return {w.pointer for w in warnings if w.rule == rules.NUMBER_BEYOND_INT64}


@pytest.mark.parametrize("column", sorted(COLUMNS), ids=sorted(COLUMNS))
def test_every_encoder_column_is_accepted_with_its_wide_integers_warned(column: str) -> None:
    raw = COLUMNS[column].encode("utf-8")
    reference = json.loads(raw)  # Python's parser reads any integer exactly
    verdict = ek.check(raw, spec="babelqueue")
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert wide_warnings(verdict.warnings) == beyond_int64(reference)
    assert wide_warnings(verdict.warnings) == BEYOND_INT64_BY_COLUMN[column]
    # The values read are the column's values, numbers with their JSON type.
    assert typed(verdict.envelope.to_wire()) == typed(reference)


@pytest.mark.parametrize("column", sorted(COLUMNS), ids=sorted(COLUMNS))
def test_every_door_reads_the_column_alike(column: str) -> None:
    raw = COLUMNS[column].encode("utf-8")
    from_json = BabelEnvelope.model_validate_json(raw)
    from_dict = BabelEnvelope.model_validate(json.loads(raw))  # Python ints are unbounded
    assert from_dict.envelope_warnings() == from_json.envelope_warnings()
    assert typed(from_dict.to_wire()) == typed(from_json.to_wire())
    assert from_dict.to_json() == from_json.to_json()
    assert wide_warnings(from_json.envelope_warnings()) == BEYOND_INT64_BY_COLUMN[column]


@pytest.mark.parametrize("column", sorted(COLUMNS), ids=sorted(COLUMNS))
def test_retry_reemits_each_wide_integer_unchanged(column: str) -> None:
    raw = COLUMNS[column].encode("utf-8")
    retried = BabelEnvelope.model_validate_json(raw).retried().to_json()
    again = ek.check(retried, spec="babelqueue")
    assert again.ok, again.violations
    assert again.envelope is not None
    expected = json.loads(raw)
    expected["attempts"] = 1
    assert typed(again.envelope.to_wire()) == typed(expected)
    assert wide_warnings(again.warnings) == BEYOND_INT64_BY_COLUMN[column]
    # Byte for byte: the literal the other SDK wrote is the literal re-emitted.
    for at in BEYOND_INT64_BY_COLUMN[column]:
        key = at.rsplit("/", 1)[1]
        literal = re.search(rb'"' + key.encode() + rb'":(-?[0-9]+)[,}]', raw)
        assert literal is not None
        assert b'"' + key.encode() + b'":' + literal[1] in retried


@pytest.mark.parametrize("column", sorted(COLUMNS), ids=sorted(COLUMNS))
def test_every_spelling_reads_the_number_the_input_held(column: str) -> None:
    """Each encoder's spelling of a member is the input's number (as a double, once rounded)."""
    env = BabelEnvelope.model_validate_json(COLUMNS[column].encode("utf-8"))
    ours = dict(numbers(env.to_wire()))
    sent = dict(numbers(INPUT))
    assert set(ours) == set(sent)
    for at, value in sent.items():
        assert float(ours[at]) == float(value), at


# The spellings the columns use for the input's doubles, and .NET's `1E+20` (babelqueue.md §8).
SPELLINGS = [
    "1e-7",
    "1.0e-7",
    "1.0E-7",
    "1e-07",
    "1.0e+20",
    "1.0E20",
    "1E+20",
    "1e+20",
    "100000000000000000000",
    "1e+21",
    "1.0e+21",
    "1.0E21",
    "1.5e+300",
    "1.5E300",
    "1.2345678901234568e+22",
    "9223372036854776000",
    "-0",
    "-0.0",
    "0",
]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=SPELLINGS)
def test_spellings_read_as_the_same_number(spelling: str) -> None:
    raw = orjson.dumps({**INPUT, "data": {"n": 0}}).replace(b'"n":0', b'"n":' + spelling.encode())
    verdict = ek.check(raw, spec="babelqueue")
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    value = verdict.envelope.data["n"]
    # JSON's grammar: a literal with no fraction and no exponent is an integer, read exactly;
    # anything else is the nearest double, as Python's reference parser reads it.
    if re.fullmatch(r"-?[0-9]+", spelling):
        assert type(value) is int
        assert value == int(spelling)
    else:
        assert type(value) is float
        assert value == float(spelling)
        assert math.copysign(1.0, value) == math.copysign(1.0, float(spelling))
    assert typed(value) == typed(json.loads(spelling))
    again = ek.check(verdict.envelope.retried().to_json(), spec="babelqueue")
    assert again.envelope is not None
    assert typed(again.envelope.data) == typed(verdict.envelope.data)


# --- what stays refused -----------------------------------------------------------------------


def message(**members: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(COLUMNS["python_json_dumps"])
    document["data"] = {"order_id": 1042}
    document.update(members)
    return document


@pytest.mark.parametrize(
    ("where", "pointer"),
    [("extra", "/extra"), ("meta", "/meta/vendor"), ("dead_letter", "/dead_letter/vendor")],
)
@pytest.mark.parametrize("door", ["check", "model_validate_json", "model_validate"])
def test_outside_data_an_integer_beyond_int64_is_still_refused(
    where: str, pointer: str, door: str
) -> None:
    document = message()
    wide = 100000000000000000000
    if where == "extra":
        document["extra"] = wide
    elif where == "meta":
        document["meta"]["vendor"] = wide
    else:
        document["dead_letter"] = {
            "reason": "failed",
            "failed_at": 1,
            "original_queue": "q",
            "attempts": 1,
            "vendor": wide,
        }
    raw = json.dumps(document).encode()
    if door == "check":
        assert [(v.rule, v.pointer) for v in ek.check(raw, spec="babelqueue").violations] == [
            (rules.NUMBER_OUT_OF_RANGE, pointer)
        ]
        return
    with pytest.raises(ValidationError) as info:
        if door == "model_validate_json":
            BabelEnvelope.model_validate_json(raw)
        else:
            BabelEnvelope.model_validate(json.loads(raw))
    assert [(v.rule, v.pointer) for v in ek.violations(info.value)] == [
        (rules.NUMBER_OUT_OF_RANGE, pointer)
    ]


@pytest.mark.parametrize("field", ["attempts", "created_at", "schema_version"])
def test_the_envelopes_own_integers_keep_their_bounds(field: str) -> None:
    document = message()
    if field == "attempts":
        document["attempts"] = 100000000000000000000
    else:
        document["meta"][field] = 100000000000000000000
    pointer = "/attempts" if field == "attempts" else f"/meta/{field}"
    rule = rules.SCHEMA_VERSION_UNSUPPORTED if field == "schema_version" else None
    verdict = ek.check(json.dumps(document), spec="babelqueue")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rule or "message-envelope.maximum", pointer)
    ]


def test_an_integer_too_long_to_write_back_is_refused_not_a_crash() -> None:
    # pydantic's JSON parser stops at 4300 digits; a dict may hold more, which no encoder here
    # could write back.
    too_long = 10**4300
    with pytest.raises(ValidationError) as info:
        BabelEnvelope.model_validate(message(data={"n": [too_long]}))
    assert [(v.rule, v.pointer) for v in ek.violations(info.value)] == [
        (rules.NUMBER_OUT_OF_RANGE, "/data/n/0")
    ]
    raw = json.dumps(message(data={"n": 0})).replace('"n": 0', '"n": 1' + "0" * 4300)
    # Issue 12: refused at its member, not as json.invalid for the whole document.
    assert [(v.rule, v.pointer) for v in ek.check(raw, spec="babelqueue").violations] == [
        (rules.NUMBER_OUT_OF_RANGE, "/data/n")
    ]
    longest = 10**4300 - 1
    env = BabelEnvelope.model_validate(message(data={"n": longest}))
    assert wide_warnings(env.envelope_warnings()) == {"/data/n"}
    assert ek.check(env.to_json(), spec="babelqueue").ok


def test_the_int_str_limit_bounds_what_is_accepted() -> None:
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(ValidationError) as info:
            BabelEnvelope.model_validate(message(data={"n": 10**700}))
        assert ek.violations(info.value)[0].rule == rules.NUMBER_OUT_OF_RANGE
        assert BabelEnvelope.model_validate(message(data={"n": 10**639})).to_json()
    finally:
        sys.set_int_max_str_digits(previous)


# --- producing still refuses ------------------------------------------------------------------


class Reading(BaseModel):
    value: int


@pytest.mark.parametrize(
    ("data", "pointer"),
    [
        ({"n": 2**63}, "/data/n"),
        ({"n": [1, -(2**63) - 1]}, "/data/n/1"),
        ({"a/b": {"c": 100000000000000000000}}, "/data/a~1b/c"),
    ],
    ids=["int64-max-plus-one", "int64-min-minus-one", "nested"],
)
def test_producing_refuses_an_integer_beyond_int64(data: dict[str, Any], pointer: str) -> None:
    with pytest.raises(ProducerError, match=f"^{re.escape(pointer)}: "):
        BabelEnvelope.create("urn:babel:a:b", data)
    parent: BabelEnvelope[dict[str, Any]] = BabelEnvelope.create("urn:babel:a:b", {})
    with pytest.raises(ProducerError, match=f"^{re.escape(pointer)}: "):
        parent.child("urn:babel:a:c", data)


def test_producing_a_typed_payload_refuses_an_integer_beyond_int64() -> None:
    with pytest.raises(ProducerError, match=r"^/data/value: "):
        BabelEnvelope[Reading].create("urn:babel:a:b", Reading(value=2**64))
    assert BabelEnvelope[Reading].create("urn:babel:a:b", Reading(value=2**63 - 1))
    # The same model on the consuming side reads it, warned.
    raw = BabelEnvelope.create("urn:babel:a:b", {"value": 1}).to_json()
    wide = raw.replace(b'"value":1', b'"value":18446744073709551616')
    env = BabelEnvelope[Reading].model_validate_json(wide)
    assert env.data.value == 2**64
    assert wide_warnings(env.envelope_warnings()) == {"/data/value"}
    assert env.to_json() == wide


class Aliased(BaseModel):
    """A typed ``data`` whose wire names are not its Python names."""

    model_config = ConfigDict(populate_by_name=True)
    order_id: int = Field(alias="orderId")
    inner: Reading = Field(alias="innerReading")
    readings: list[float] = Field(alias="someReadings")


@pytest.mark.parametrize(
    ("data", "door", "rule", "pointer"),
    [
        (
            {"orderId": 2**60, "innerReading": {"value": 1}, "someReadings": [1.0]},
            "consume",
            "number.unsafe_integer",
            "/data/orderId",
        ),
        (
            {"orderId": 1, "innerReading": {"value": 2**60}, "someReadings": [1.0]},
            "consume",
            "number.unsafe_integer",
            "/data/innerReading/value",
        ),
        (
            {"orderId": 2**60, "innerReading": {"value": 1}, "someReadings": [1.0]},
            "create",
            "number.unsafe_integer",
            "/data/orderId",
        ),
        (
            {"orderId": 1, "innerReading": {"value": 1}, "someReadings": [float("nan")]},
            "create",
            "number.non_finite",
            "/data/someReadings/0",
        ),
    ],
    ids=["consumed-top", "consumed-nested", "created-warned", "created-refused"],
)
def test_a_typed_payload_s_numbers_are_pointed_at_by_their_wire_names(
    data: dict[str, Any], door: str, rule: str, pointer: str
) -> None:
    if door == "consume":
        raw = BabelEnvelope.create("urn:babel:a:b", data).to_json()
        env = BabelEnvelope[Aliased].model_validate_json(raw)
        assert [(w.rule, w.pointer) for w in env.envelope_warnings()] == [(rule, pointer)]
        return
    model = Aliased.model_validate(data)
    if rule == "number.unsafe_integer":
        made = BabelEnvelope[Aliased].create("urn:babel:a:b", model)
        assert [(w.rule, w.pointer) for w in made.envelope_warnings()] == [(rule, pointer)]
        return
    with pytest.raises(ProducerError) as caught:
        BabelEnvelope[Aliased].create("urn:babel:a:b", model)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [(rule, pointer)]


# --- any number a Go or Node encoder writes for a double ---------------------------------------


def shortest_digits(x: float) -> tuple[str, int]:
    """The shortest round-trip digits of a positive double and its decimal point position ``n``.

    ``x == 0.d1d2...dk × 10^n``, as ECMA-262 Number::toString and Go's strconv define them.
    """
    _, digits, exponent = decimal.Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(text)
    return text, exponent + len(text)


def node_spelling(x: float) -> str:
    """``JSON.stringify(x)`` for a finite double (ECMA-262 Number::toString, radix 10)."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + node_spelling(-x)
    digits, n = shortest_digits(x)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def go_spelling(x: float) -> str:
    """``encoding/json``'s float64: ``'f'`` unless below 1e-6 or from 1e21, then ``'e'``."""
    sign = "-" if str(x).startswith("-") else ""
    size = abs(x)
    if size == 0:
        return sign + "0"
    digits, n = shortest_digits(size)
    if 1e-6 <= size < 1e21:
        if n >= len(digits):
            return sign + digits + "0" * (n - len(digits))
        if n > 0:
            return sign + digits[:n] + "." + digits[n:]
        return sign + "0." + "0" * -n + digits
    mantissa = digits if len(digits) == 1 else digits[0] + "." + digits[1:]
    # strconv writes at least two exponent digits; encoding/json trims `e-07` to `e-7` only.
    exponent = f"{abs(n - 1):02d}"
    if n - 1 < 0 and exponent.startswith("0"):
        exponent = exponent[1:]
    return f"{sign}{mantissa}e{'+' if n - 1 >= 0 else '-'}{exponent}"


@pytest.mark.parametrize(
    ("x", "node", "go"),
    [
        (1e20, "100000000000000000000", "100000000000000000000"),
        (9223372036854775807.0, "9223372036854776000", "9223372036854776000"),
        (1e21, "1e+21", "1e+21"),
        (1e-7, "1e-7", "1e-7"),
        (1.5e300, "1.5e+300", "1.5e+300"),
        (-0.0, "0", "-0"),
        (99.9, "99.9", "99.9"),
        (1.0, "1", "1"),
        (1.2345678901234568e22, "1.2345678901234568e+22", "1.2345678901234568e+22"),
        (0.000001, "0.000001", "0.000001"),
        (1e-10, "1e-10", "1e-10"),
    ],
)
def test_the_spellers_match_the_corpus_and_the_references(x: float, node: str, go: str) -> None:
    assert (node_spelling(x), go_spelling(x)) == (node, go)


doubles = st.floats(allow_nan=False, allow_infinity=False)
double_literals = st.one_of(doubles.map(node_spelling), doubles.map(go_spelling))
# Every integer a double's integer literal can spell: 1.8e308 has 309 digits. The length is
# drawn first, so every length from 1 to 309 is as likely (a plain range draws mostly ~309).
integer_literals = st.tuples(st.sampled_from(["", "-"]), st.integers(1, 309)).flatmap(
    lambda signed: st.integers(10 ** (signed[1] - 1), 10 ** signed[1] - 1).map(
        lambda magnitude: f"{signed[0]}{magnitude}"
    )
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(double_literals, integer_literals))
@example(str(int(sys.float_info.max)))  # the largest double, all 309 digits
@example("-" + "9" * 309)
@example("-9223372036854775809")
@example("9223372036854775808")
@example("5e-324")
def test_any_number_a_go_or_node_encoder_writes_is_accepted_in_data(literal: str) -> None:
    raw = orjson.dumps({**INPUT, "data": {"n": [0]}}).replace(b"[0]", f"[{literal}]".encode())
    verdict = ek.check(raw, spec="babelqueue")
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    value = verdict.envelope.data["n"][0]
    is_integer = bool(re.fullmatch(r"-?[0-9]+", literal))
    if is_integer:
        assert value == int(literal)
        assert type(value) is int
    else:
        assert value == float(literal)
    wide = is_integer and not INT64_MIN <= int(literal) <= INT64_MAX
    assert wide_warnings(verdict.warnings) == ({"/data/n/0"} if wide else set())
    out = verdict.envelope.retried().to_json()
    if is_integer:
        assert f"[{int(literal)}]".encode() in out
    again = ek.check(out, spec="babelqueue")
    assert again.ok, again.violations
    assert again.envelope is not None
    assert typed(again.envelope.data) == typed(verdict.envelope.data)
