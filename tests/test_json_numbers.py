"""``plain_numbers``: the C-pass proof that a text holds no number to walk for, and its use."""

from __future__ import annotations

import datetime
import decimal
import enum
import fractions
import json
import uuid
from functools import partial
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envelopekit as ek
from envelopekit import _json, rules
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit._json import _HEAD_BYTES, PLAIN_NUMBERS, needs_scan, plain_numbers, proven_context
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.babelqueue import _fast as fast_module
from tests._calls import peak_memory, python_calls
from tests.conftest import DATA
from tests.test_check_properties import EDGES, WIDE

FIXTURE = orjson.loads((DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes())

CASES: dict[str, tuple[bytes, bool]] = {
    "small-ints": (b'{"a":[1,-2,3,999999999999999]}', True),
    "fractions": (b'{"a":1.5,"b":-0.25,"c":123456789012345.5}', True),
    "literals": (b'{"a":true,"b":false,"c":null}', True),
    "letters-in-strings": (b'{"NaN":"Infinity","e":"1e400","big":"99999999999999999"}', True),
    "escapes-in-strings": (b'{"a\\"":"\\\\","b":"\\"1e5\\"","c":"\\u0049"}', True),
    "sixteen-digits": (b'{"a":9007199254740993}', False),
    "sixteen-fraction-digits": (b'{"a":0.1234567890123456}', False),  # errs to the walk
    "sixteen-digits-before-a-point": (b'{"a":1234567890123456.5}', False),
    # A float with an exponent of two digits and fewer than 16 digits is below 1e115: finite.
    "exponent": (b'{"a":1e5}', True),
    "exponent-capital": (b'{"a":1E-5}', True),
    "exponent-two-digits": (b'{"a":[999999999999999e99,-9.99999999999999E+99]}', True),
    "exponent-after-true": (b"[true,1e2,false,1e-2]", True),
    "exponent-three-digits": (b'{"a":1e308}', False),
    "exponent-three-digits-signed": (b'{"a":[1e+400,1E-400]}', False),
    "exponent-leading-zeros": (b'{"a":1e0001}', False),  # errs to the walk
    "exponent-sixteen-digits": (b'{"a":1234567890123456e1}', False),
    "nan": (b'{"a":NaN}', False),
    "infinity": (b'{"a":-Infinity}', False),
    "many-small-ints": (b"[" + b",".join(b"7" for _ in range(100)) + b"]", True),
    "backslash-outside": (b'{"a":1}\\', False),
}


@pytest.mark.parametrize(("text", "plain"), CASES.values(), ids=CASES.keys())
def test_plain_numbers(text: bytes, plain: bool) -> None:
    assert plain_numbers(text) is plain


_SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(alphabet='0123456789eENIaus"\\:,[]{} ', max_size=12),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.text(alphabet='eNI1"\\', max_size=4), inner, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=500, deadline=None)
@given(_VALUES)
def test_a_text_with_plain_numbers_has_nothing_to_scan(value: Any) -> None:
    # json.dumps writes NaN and Infinity as their tokens, big integers in full, floats with
    # exponents: every kind of number the scan looks for.
    text = json.dumps(value).encode()
    if plain_numbers(text):
        assert not needs_scan(json.loads(text))


def _finite(value: Any) -> bool:
    """Whether every float under ``value`` is finite (integers of any size pass)."""
    if type(value) is float:
        return value - value == 0.0
    if type(value) is list:
        return all(map(_finite, value))
    if type(value) is dict:
        return all(map(_finite, value.values()))
    return True


_FINITE_CASES: dict[str, tuple[bytes, bool]] = {
    "sixteen-digits": (b'{"a":9007199254740993}', True),
    "sixty-digits": (b'{"a":[' + b"9" * 60 + b", -" + b"9" * 60 + b".5]}", True),
    "199-digits-two-digit-exponent": (b"[" + b"9" * 199 + b"e99]", True),
    "200-digits": (b"[" + b"9" * 200 + b".0]", False),  # errs to the scan
    "309-digits": (b"[" + b"9" * 309 + b".0]", False),  # infinite as a double
    "exponent-three-digits": (b'{"a":1e308}', False),
    "nan": (b'{"a":NaN}', False),
    "infinity-in-a-head": (b"[" + b"1," * 40_000 + b"Infinity]", False),
    "letters-in-strings": (b'{"NaN":"Infinity","e":"1e400"}', True),
}


@pytest.mark.parametrize(("text", "finite"), _FINITE_CASES.values(), ids=_FINITE_CASES.keys())
def test_finite_numbers(text: bytes, finite: bool) -> None:
    assert _json.finite_numbers(text) is finite


@settings(max_examples=500, deadline=None)
@given(_VALUES)
def test_a_text_with_finite_numbers_has_no_nan_or_infinity(value: Any) -> None:
    # SOM's reading proves only this: its free-form JSON refuses NaN and Infinity alone.
    text = json.dumps(value).encode()
    if plain_numbers(text):
        assert _json.finite_numbers(text)
    if _json.finite_numbers(text):
        assert _finite(json.loads(text))


@given(_VALUES)
def test_the_proof_also_holds_for_indented_text(value: Any) -> None:
    text = json.dumps(value, indent=1, ensure_ascii=False).encode()
    if plain_numbers(text):
        assert not needs_scan(json.loads(text))


# What stands across the end of the head (read first, alone), and whether it is a number to
# note: a string with escapes and brackets, a run of digits, a literal, an escape, an exponent.
_ACROSS = {
    "string": (b'"a\\\\b\\"c:[1e5]"', False),
    "digits": (b"123456789012345", False),
    "literal": (b"true", False),
    "escape": (b'"\\u0041 NaN"', False),
    "fraction": (b"-0.5", False),
    "exponent": (b"12345e5", False),
    "exponent-three-digits": (b"12345e500", True),
    "nan": (b"NaN", True),
}


@pytest.mark.parametrize(("piece", "noted"), _ACROSS.values(), ids=_ACROSS.keys())
@pytest.mark.parametrize("shift", range(-20, 3))
@pytest.mark.parametrize("after", [b"", b",1e500", b",NaN", b",12345678901234567"])
def test_the_head_read_first_never_changes_the_answer(
    piece: bytes, noted: bool, shift: int, after: bytes
) -> None:
    # The piece is placed so that the head's end falls inside it, or just past it.
    filler = b"[" + b"0," * ((_HEAD_BYTES + shift - len(piece) // 2) // 2)
    text = filler + piece + b"," + b",".join([b'"x"'] * 10) + after + b"]"
    json.loads(text)  # the text is JSON
    assert plain_numbers(text) is not (noted or after)


@pytest.mark.parametrize("early", [b"", b"1e500,", b"12345678901234567,"])
def test_a_text_a_reading_has_cut_is_proven_without_its_head_alone(
    monkeypatch: pytest.MonkeyPatch, early: bytes
) -> None:
    # Within a reading whose copy the depth scan has made, the proof translates that copy: the
    # head is not cut out on its own first (0.6 ms in a MiB dense with strings). Alone, it is.
    text = b"[" + early + b",".join([b'"1{"'] * 40_000) + b"]"
    assert len(text) > _HEAD_BYTES
    cuts: list[int] = []
    real = _json._cut_out

    def cut(raw: bytes, table: bytes | None, delete: bytes) -> bytes:
        cuts.append(len(raw))
        return real(raw, table, delete)

    monkeypatch.setattr(_json, "_cut_out", cut)
    alone = plain_numbers(text)
    assert cuts[0] == _HEAD_BYTES
    with _json.one_reading(text, numbers=True):
        _json.outside_strings(text)  # the depth scan's reading makes the copy
        cuts.clear()
        assert plain_numbers(text) is alone is (not early)
        assert _json.finite_numbers(text) is (early != b"1e500,")
    assert cuts == []


def _outside_by_pairs(raw: bytes) -> bytes:
    """The reading of many strings: ``\\\\`` and ``\\"`` replaced first, then strings cut out."""
    text = raw.replace(b"\\\\", b"\\x").replace(b'\\"', b"\\x")
    return _json.unquoted(text.translate(_json._NUMBER_SKELETON, _json._NOT_NUMBER_SKELETON))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet='a"\\1eN{}[]:, ', max_size=60))
def test_strings_cut_at_their_quotes_are_those_the_pairs_show(text: str) -> None:
    """Any text (JSON, a head cut anywhere, or not JSON): a quote is escaped by an odd run of
    backslashes before it, as replacing the pairs left to right finds. A backslash left
    outside (not JSON) is kept by either reading, in its own way: the text is not plain."""
    raw = ('"\\\\",' + text).encode()  # a string holding an escape, then anything
    found = _json._outside(raw, _json._NUMBER_SKELETON, _json._NOT_NUMBER_SKELETON)
    expected = _outside_by_pairs(raw)
    assert (b"\\" in found) is (b"\\" in expected)
    if b"\\" not in expected:
        assert found == expected


def test_a_long_string_of_escapes_is_cut_out_at_its_quotes() -> None:
    """1 MiB of ``\\u0001`` in one string: the pairs are never searched for (two searches of a
    text dense with backslashes cost 2 ms, five times ``orjson.loads``)."""
    raw = orjson.dumps({**FIXTURE, "data": {"t": "\x01" * 170_000, "n": 1}})
    assert plain_numbers(raw)
    assert python_calls(lambda: plain_numbers(raw)).count(_json.unquoted.__code__) == 0
    assert not plain_numbers(raw.replace(b'"n":1', b'"n":1e500'))


def test_proven_context_keeps_the_callers_context() -> None:
    assert proven_context(b"[1]", None) == {PLAIN_NUMBERS: True}
    given_context = {"max_violations": 3}
    assert proven_context(b"[1]", given_context) == {"max_violations": 3, PLAIN_NUMBERS: True}
    assert given_context == {"max_violations": 3}  # a copy, not the caller's dict changed
    assert proven_context(b"[1e500]", given_context) == {"max_violations": 3, PLAIN_NUMBERS: False}
    marker = object()
    assert proven_context(b"[1]", marker) is marker  # not a dict: left alone


def _large(data: Any) -> bytes:
    raw = orjson.dumps({**FIXTURE, "data": {"items": data}})
    assert len(raw) > FULL_REPORT_BYTES
    return raw


def _scans(call: Any) -> int:
    """How many times ``needs_scan`` runs during ``call()``."""
    return python_calls(call).count(needs_scan.__code__)


MANY_OBJECTS = [{"a": i % 10, "b": [1, 2]} for i in range(3_000)]


@pytest.mark.parametrize("door", ["check", "model_validate_json"])
def test_a_large_message_of_plain_numbers_is_not_walked_for_them(door: str) -> None:
    raw = _large(MANY_OBJECTS)
    if door == "check":
        verdict = ek.check(raw, "babelqueue")
        assert verdict.ok
        assert _scans(lambda: ek.check(raw, "babelqueue")) == 0
    else:
        assert BabelEnvelope.model_validate_json(raw).data == {"items": MANY_OBJECTS}
        assert _scans(lambda: BabelEnvelope.model_validate_json(raw)) == 0
    # One number to note anywhere: the proof fails, and the data is scanned without a walk.
    risky = _large([*MANY_OBJECTS, {"big": 2**60}])
    entered = python_calls(lambda: ek.check(risky, "babelqueue"))
    assert entered.count(needs_scan.__code__) == 0
    assert entered.count(_json.scan_numbers.__code__) == 1


@pytest.mark.parametrize(
    ("last", "rule"),
    [
        (b"NaN", rules.NUMBER_NON_FINITE),
        (b"1e400", rules.NUMBER_NON_FINITE),
        (b"18446744073709551616", rules.NUMBER_BEYOND_INT64),
    ],
    ids=["nan", "overflow", "beyond-int64"],
)
def test_a_large_message_still_reports_its_numbers(last: bytes, rule: str) -> None:
    raw = _large([*MANY_OBJECTS, 0]).replace(b",0]", b"," + last + b"]", 1)
    verdict = ek.check(raw, "babelqueue")
    found = {v.rule for v in verdict.violations} | {w.rule for w in verdict.warnings}
    assert rule in found
    assert [v.pointer for v in (*verdict.violations, *verdict.warnings) if v.rule == rule] == [
        f"/data/items/{len(MANY_OBJECTS)}"
    ]


def test_an_unknown_key_with_a_number_to_note_is_still_reported() -> None:
    raw = orjson.dumps({**FIXTURE, "data": {"items": MANY_OBJECTS}, "extra": 2**60})
    assert len(raw) > FULL_REPORT_BYTES
    verdict = ek.check(raw, "babelqueue")
    assert rules.NUMBER_UNSAFE_INTEGER in {w.rule for w in verdict.warnings}
    assert _json.plain_numbers(raw) is False


@pytest.mark.parametrize("place", ["extra", "meta"])
def test_unknown_keys_are_scanned_without_a_walk_where_the_proof_failed(place: str) -> None:
    """Their numbers were walked, then scanned where the walk found one (3,000 objects and an
    integer beyond 2^53 at the end: read twice, a Python step an object each time); where the
    text's proof failed, the walk would only say where to look."""
    unknown = {"x": [*MANY_OBJECTS, {"big": 2**60}]}
    document = (
        {**FIXTURE, **unknown}
        if place == "extra"
        else {**FIXTURE, "meta": {**FIXTURE["meta"], **unknown}}
    )
    raw = orjson.dumps(document)
    assert len(raw) > FULL_REPORT_BYTES
    found: list[ek.Verdict[Any]] = []
    entered = python_calls(lambda: found.append(ek.check(raw, "babelqueue")))
    assert entered.count(needs_scan.__code__) <= 1
    at = "/x" if place == "extra" else "/meta/x"
    assert [(w.rule, w.pointer) for w in found[0].warnings] == [
        (rules.NUMBER_UNSAFE_INTEGER, f"{at}/{len(MANY_OBJECTS)}/big")
    ]


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.integers(min_value=0, max_value=40), st.integers(min_value=1, max_value=4))
def test_a_reading_answers_as_the_walk_does(value: Any, budget: int, asked: int) -> None:
    """Whatever its budget, a reading spares only a value the walk finds nothing in, and every
    such value once its proof holds; its proof is taken once; told what the caller's scans
    find, it is clean exactly when no value asked had a number to note."""
    text = json.dumps(value).encode()
    reading = _json.NumberReading(text)
    reading.left = budget
    context = {PLAIN_NUMBERS: reading}
    values = [json.loads(text) for _ in range(asked)]
    spared: list[bool] = []
    proofs = python_calls(
        lambda: spared.extend(_json.numbers_spared(item, context) for item in values)
    ).count(plain_numbers.__code__)
    assert proofs <= 1
    for item, answer in zip(values, spared, strict=True):
        assert not (answer and needs_scan(item))
        assert answer or reading.plain is not True
        if not answer and needs_scan(item):  # the caller's scan finds it
            _json.note_numbers(context)
    assert _json.numbers_clean(context) is not needs_scan(value)


def test_a_reading_walks_within_its_budget_then_proves_once() -> None:
    """A text of 4,000 arrays: the walk stops past its budget (a step a value, one for 16
    bytes) and the proof answers for every value after it."""
    value = [[1, 2, 3]] * 4_000
    text = orjson.dumps(value)
    context = _json.reading_context(text, None)
    reading = context[PLAIN_NUMBERS]
    assert reading.left == len(text) // _json.BYTES_A_STEP
    calls = python_calls(lambda: [_json.numbers_spared(value, context) for _ in range(5)])
    assert calls.count(needs_scan.__code__) == 1  # the outer array alone spends the budget
    assert calls.count(plain_numbers.__code__) == 1
    assert reading.plain is True and _json.numbers_clean(context)
    # A text of few values for its size: the walk answers within the budget, no proof.
    few = [["x" * 100, 1]]
    small = _json.reading_context(orjson.dumps(few), {"max_violations": 3})
    assert _json.numbers_spared(few, small)
    assert small[PLAIN_NUMBERS].plain is None and small["max_violations"] == 3


def test_a_context_without_a_reading_walks() -> None:
    assert _json.numbers_spared([1, 2], None) and not _json.numbers_spared([2**60], None)
    assert _json.numbers_spared([2**60], {PLAIN_NUMBERS: True})  # the caller's proof
    assert not _json.numbers_spared([1, 2], {PLAIN_NUMBERS: False})  # failed: the caller scans
    assert _json.numbers_clean(None) is None and _json.numbers_clean({PLAIN_NUMBERS: True})
    assert _json.numbers_clean({PLAIN_NUMBERS: False}) is None
    _json.note_numbers({PLAIN_NUMBERS: True})  # nothing to tell: no reading
    marker = object()
    assert _json.reading_context(b"[1]", marker) is marker  # not a dict: left alone


def test_the_scan_of_many_containers_holds_a_key_each() -> None:
    """One warning after 100,000 small objects (an unknown key of a Matrix reply, 1 MiB): the
    scan held a pointer node and a segment for each object waiting its turn (about 140 bytes),
    and ``check`` peaked at 36.5 MiB; it holds the key (about 56 bytes, the int an index is),
    and builds the node of the one it takes. What it finds, and where, is unchanged. (Objects
    deeper than the C passes of a long list read, so that each is read in Python.)"""
    value = [{"a": {"b": {"c": -1}}}] * 100_000 + [{"a": 2**53}]
    found: list[Any] = []
    peak = peak_memory(lambda: found.append(_json.scan_numbers(value, "/x", max_warnings=3)))
    assert peak < 8 * 2**20
    errors, warnings = found[0]
    assert errors == []
    assert [(v.rule, v.pointer) for v in warnings] == [(rules.NUMBER_UNSAFE_INTEGER, "/x/100000/a")]


@pytest.mark.parametrize(
    ("last", "rule"),
    [
        (float("nan"), rules.NUMBER_NON_FINITE),
        (2**53, rules.NUMBER_UNSAFE_INTEGER),
        (2**64, rules.NUMBER_OUT_OF_RANGE),
    ],
)
def test_a_long_list_of_small_objects_is_cleared_by_c_passes(last: Any, rule: str) -> None:
    """20,000 small objects, then one number to note: the walk and the scan read each object in
    Python, a call and ten lines each (a Matrix reply of 1 MiB of them, then a 16-digit
    fraction: 12x ``orjson.loads``). Passes over their values, a level at a time, clear 256
    objects at once (a few calls, of C passes or a comprehension); only the part holding the
    number is read item by item."""
    record = {"name": "notes.txt", "size": 7, "tags": ["a", 1.5], "meta": {"ok": True, "n": None}}
    value = [record] * 20_000 + [{"tags": [last]}]
    assert len(python_calls(lambda: needs_scan(value))) < 2_000  # 60,006 on the old code
    found: list[Any] = []
    entered = python_calls(lambda: found.append(_json.scan_numbers(value, "/x", max_warnings=3)))
    assert len(entered) < 2_000
    errors, warnings = found[0]
    assert [(v.rule, v.pointer) for v in errors + warnings] == [(rule, "/x/20000/tags/0")]


def test_large_finite_floats_are_cleared_whose_sum_overflows() -> None:
    """1e308 twice is infinite: where a part's floats sum to an infinity, each is asked (a C
    pass) before the part is read item by item."""
    value = [{"a": 1e308, "b": [-1e308, 1.5]}] * 20_000 + [{"a": float("inf")}]
    assert len(python_calls(lambda: needs_scan(value))) < 2_000
    errors, _ = _json.scan_numbers(value, "/x", first_refusal=True)
    assert [(v.rule, v.pointer) for v in errors] == [(rules.NUMBER_NON_FINITE, "/x/20000/a")]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        WIDE,
        # What only Python data holds: a tuple, a key that is not a string (orjson refuses it).
        st.lists(st.one_of(WIDE, st.tuples(EDGES), st.dictionaries(st.integers(), EDGES))),
    )
)
def test_containers_read_as_text_give_what_the_walk_gives(value: Any) -> None:
    # A container of BY_TEXT members or more is first read as orjson writes it; where that
    # shows nothing to note it is not walked. The walk alone says the same.
    assert needs_scan(value) is needs_scan(value, None, False)
    if isinstance(value, (dict, list)) and _json.written_plain(value) is not None:
        assert not needs_scan(value, None, False)


def test_a_wide_container_is_written_not_walked() -> None:
    items = [{"sku": f"a{i}", "qty": i, "tags": ["x", "y"]} for i in range(40)]
    assert not needs_scan({"items": items})
    # One call for the object, one for the list, which is written whole: no step an item.
    document = {"items": items}
    assert [code.co_name for code in python_calls(partial(needs_scan, document))] == [
        "needs_scan",
        "needs_scan",
        "written_plain",
    ]
    # A list holding NaN is written with `null`: walked, and found.
    assert needs_scan({"items": [*items, float("nan")]})


@pytest.mark.parametrize(
    "value", [2**53 - 1, 2**53, -(2**53), 2**64, float("nan"), float("inf"), None, (2**60,)]
)
def test_each_bound_is_read_from_the_text_as_the_walk_reads_it(value: Any) -> None:
    wide = [0] * (_json.BY_TEXT - 1) + [{"a": [value]}]
    assert needs_scan(wide) is needs_scan(wide, None, False)


class _CountedOrjson:
    """``orjson``, counting what ``dumps`` writes."""

    def __init__(self) -> None:
        self.written: list[Any] = []

    def dumps(self, value: Any, option: int | None = None) -> bytes:
        self.written.append(value)
        return orjson.dumps(value, option=option)

    def __getattr__(self, name: str) -> Any:
        return getattr(orjson, name)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ([{"a": i, "b": None} for i in range(10)], False),  # the first row holds null
        ([[i, None] for i in range(10)], False),
        ({f"k{i}": None if i == 5 else i for i in range(10)}, False),  # scalars: looked at all
        ([{"a": i, "b": 1} for i in range(10)], True),
        ([{"a": 1}] * 9 + [{"a": None}], True),  # a null past the first row: written, walked
    ],
    ids=["rows-with-null", "arrays-with-null", "scalars-with-null", "no-null", "a-late-null"],
)
def test_a_table_holding_null_is_walked_without_being_written(
    monkeypatch: pytest.MonkeyPatch, value: Any, written: bool
) -> None:
    # orjson writes NaN as null too: where a container's first row holds null, its text would
    # only be set aside, so it is not written (a list of 40 such rows: 23% slower before).
    counted = _CountedOrjson()
    monkeypatch.setattr(_json, "orjson", counted)
    assert not needs_scan(value)
    assert (counted.written == [value]) is written


def test_a_container_is_written_once_however_deep_its_late_nulls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The hostile shape for the writing: every level wide, each with a null in its last row,
    # so that each level's text would be set aside. Only the outermost is written: below a
    # container whose text did not show it plain, the walk decides alone (each value written
    # at most once, whatever the depth), for needs_scan and the BabelQueue fast path alike.
    value: Any = [1] * _json.BY_TEXT
    for _ in range(6):
        value = [[0] * _json.BY_TEXT, *[value] * (_json.BY_TEXT - 1), [None]]
    counted = _CountedOrjson()
    monkeypatch.setattr(_json, "orjson", counted)
    assert not needs_scan(value)
    assert counted.written == [value]
    counted.written.clear()
    assert fast_module._within(value, 10)
    assert counted.written == [value]


class _Status(enum.IntEnum):
    OK = 1
    BIG = 2**60


class _Float(float):
    pass


# Python data the walks read (a dict door, a producer): values of no exact JSON type, beside a
# number that sends the walk to the scan. A subclass is read as its base type's number; any
# other value holds no number (whether it is JSON at all is another rule's).
_NOT_EXACTLY_JSON: dict[str, tuple[Any, list[str], list[str]]] = {
    "intenum": ({"big": 2**53, "s": _Status.OK}, [], ["number.unsafe_integer /big"]),
    "intenum-unsafe": ({"s": [_Status.BIG]}, [], ["number.unsafe_integer /s/0"]),
    "float-subclass-nan": (
        {"big": 2**53, "f": _Float("nan")},
        ["number.non_finite /f"],
        ["number.unsafe_integer /big"],
    ),
    "decimal": ({"big": 2**53, "d": decimal.Decimal("9.99")}, [], ["number.unsafe_integer /big"]),
    "date": ({"big": 2**53, "d": datetime.date(2026, 1, 1)}, [], ["number.unsafe_integer /big"]),
    "uuid": ({"big": 2**53, "u": uuid.UUID(int=1)}, [], ["number.unsafe_integer /big"]),
    "fraction": ({"big": 2**53, "q": fractions.Fraction(1, 3)}, [], ["number.unsafe_integer /big"]),
    "object": ({"big": 2**53, "o": object()}, [], ["number.unsafe_integer /big"]),
    "tuple": ({"t": (1, 2**53)}, [], ["number.unsafe_integer /t/1"]),
    "wide-list": ([1] * 70 + [_Status.BIG], [], ["number.unsafe_integer /70"]),
}


@pytest.mark.parametrize(
    ("value", "refused", "warned"), _NOT_EXACTLY_JSON.values(), ids=_NOT_EXACTLY_JSON.keys()
)
def test_the_walks_read_values_of_no_exact_json_type(
    value: Any, refused: list[str], warned: list[str]
) -> None:
    assert needs_scan(value)
    errors, warnings = _json.scan_numbers(value, "")
    assert [f"{v.rule} {v.pointer}" for v in errors] == refused
    assert [f"{v.rule} {v.pointer}" for v in warnings] == warned


def _nest(levels: int) -> Any:
    value: Any = [1, 2]
    for _ in range(levels - 1):
        value = [value, 1]
    return value


@pytest.mark.parametrize("levels", [2, 3, 31, 198, 253])
def test_a_container_written_within_a_depth_bound_is_refused_past_it(levels: int) -> None:
    """orjson's own limit, with the container inside arrays, is the bound (to the level); the
    container is let go after, and the walk gives the same answer."""
    assert _json.written_plain(_nest(levels), levels=levels) is not None
    assert _json.written_plain(_nest(levels + 1), levels=levels) is None
    assert _json._CHAINS.slot == [None]
    assert not needs_scan([_nest(levels - 1)] * 40, levels=levels)
    assert needs_scan([_nest(levels)] * 40, levels=levels)
    assert needs_scan([_nest(levels)] * 10, levels=levels)  # a narrow one: its text is read
