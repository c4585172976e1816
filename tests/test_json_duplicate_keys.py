"""``duplicate_keys``: its fast pre-test against an exact reference, case by case."""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc
from collections.abc import Callable
from types import FrameType
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelopekit import _duplicates, rules
from envelopekit._duplicates import duplicate_keys, may_repeat
from envelopekit._json import unquoted

# (text, the pointers of the repeated members, in document order: an object's names in the order
# they first appear, then what its members hold)
CASES: dict[str, tuple[bytes | str, list[str]]] = {
    "flat-distinct": (b'{"a":1,"b":2}', []),
    "flat-repeated": (b'{"a":1,"a":2}', ["/a"]),
    "several-repeated": (b'{"b":1,"a":1,"b":2,"c":0,"a":2,"b":3}', ["/b", "/a"]),
    "colon-in-value": (b'{"a":"x:y:z","b":1}', []),
    "colon-in-value-repeated": (b'{"a":"x:y","a":1}', ["/a"]),
    "colon-in-key-repeated": (b'{"a:b":1,"a:b":2}', ["/a:b"]),
    "escaped-quote-and-colon": (b'{"a\\":":1,"b":"\\":\\""}', []),
    "escaped-quote-key-repeated": (b'{"a\\":":1,"a\\":":2}', ['/a":']),
    "escaped-backslash-ends-key": (b'{"a\\\\":1,"a\\\\":2}', ["/a\\"]),
    "unicode-escape-quote": (b'{"\\u0022:":1,"\\"":2}', []),
    "unicode-escape-same-name": (b'{"\\u0061":1,"a":2}', ["/a"]),
    "whitespace-around-colons": (b'{ "a" : 1 ,\n "a" :\t2 }', ["/a"]),
    "nested-in-arrays": (b'[{"k":1},{"k":1,"k":2}]', ["/1/k"]),
    "deep-repeated-pointer-escaped": (
        b'{"x/y":{"~":[{"k":[1,{"z":0,"z":1}]}]}}',
        ["/x~1y/~0/0/k/1/z"],
    ),
    "empty-containers": (b'{"a":{},"b":[],"c":[[],{}]}', []),
    "nan-orjson-refuses-distinct": (b'{"a":NaN,"b":1}', []),
    "nan-orjson-refuses-repeated": (b'{"a":NaN,"a":1}', ["/a"]),
    "beyond-64-bits-distinct": (b'{"a":18446744073709551616,"b":1}', []),
    "beyond-64-bits-repeated": (b'{"a":18446744073709551616,"a":1}', ["/a"]),
    "str-with-lone-surrogate-repeated": ('{"a":"\ud800","a":1}', ["/a"]),
    "str-distinct": ('{"a":"é:","b":1}', []),
    "not-json": (b'{"a":1,"a":', []),
    "scalar": (b"1", []),
}


def _reference(text: bytes | str) -> bool:
    """Whether any object repeats a name, by the standard library's pairs."""
    repeated = False

    def pairs(found: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        repeated |= len({k for k, _ in found}) != len(found)
        return dict(found)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return False
    return repeated


@pytest.mark.parametrize(("text", "pointers"), CASES.values(), ids=CASES.keys())
def test_duplicate_keys(text: bytes | str, pointers: list[str]) -> None:
    found = duplicate_keys(text)
    assert [v.pointer for v in found] == pointers
    assert {v.rule for v in found} <= {rules.JSON_DUPLICATE_KEY}


@pytest.mark.parametrize("text", [text for text, _ in CASES.values()], ids=CASES.keys())
def test_pre_test_is_exact_where_orjson_reads(text: bytes | str) -> None:
    encoded = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        orjson.loads(encoded)
    except orjson.JSONDecodeError:
        assert may_repeat(text)  # not read: the exact scan decides
    else:
        assert may_repeat(text) == _reference(text)


@given(st.binary(max_size=40).map(lambda b: bytes(b'"":[{'[x % 5] for x in b)))
def test_the_unquoted_skeleton_is_the_even_pieces(skeleton: bytes) -> None:
    assert unquoted(skeleton) == b"".join(skeleton.split(b'"')[::2])


# Past 64 quotes (the split of a few): mostly quotes, so that adjacent pairs abound.
@given(st.binary(min_size=130, max_size=600).map(lambda b: bytes(b'""""":[{'[x % 8] for x in b)))
def test_a_skeleton_of_many_quotes_is_the_even_pieces_too(skeleton: bytes) -> None:
    assert skeleton.count(b'"') > 64
    assert unquoted(skeleton) == b"".join(skeleton.split(b'"')[::2])


def _peak(call: Callable[[], object]) -> int:
    """The most memory ``tracemalloc`` sees during ``call()``."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_skeleton_of_many_empty_strings_is_not_split_on_each_quote() -> None:
    # 1 MiB of one repeated key: 400,000 quotes, all but the head's in adjacent pairs. A split
    # on each would make 400,000 pieces (17.8 MB); the pairs go first, the rest is split.
    text = b'{"job":"urn:a:b","data":{' + b",".join([b'"k":0'] * 200_000) + b"}}"
    skeleton = text.translate(None, _duplicates._NOT_COLON_OR_QUOTE)
    assert unquoted(skeleton).count(b":") == 200_002
    assert _peak(lambda: unquoted(skeleton)) < 3 * len(skeleton)


def _lines_run(call: Callable[[], object], module: str) -> int:
    """How many lines of ``module`` run during ``call()`` (a measure of Python-level steps)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if frame.f_code.co_filename != module:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def test_many_repeats_of_a_name_cost_no_python_step_each() -> None:
    text = b'{"a":{' + b",".join([b'"k":0'] * 20_000) + b',"j":1,"j":2}}'
    assert [v.pointer for v in duplicate_keys(text)] == ["/a/k", "/a/j"]
    assert _lines_run(lambda: duplicate_keys(text), _duplicates.__file__) < 200
