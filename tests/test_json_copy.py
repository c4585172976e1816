"""``_json.plain_json``: the producers' copy of Python data, refused in document order.

And ``_json.plain_copy``: the copy of plain Python data pydantic's ``JsonValue`` gives.
"""

from __future__ import annotations

import decimal
import enum
import math
import uuid
from collections import OrderedDict
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ConfigDict, JsonValue, RootModel, TypeAdapter, ValidationError

from envelopekit import ProducerError
from envelopekit._json import plain_copy, plain_json, plain_json_nesting
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.som import SomEnvelope
from tests._verdicts import typed

SYSTEM = {"system_id": "ncs-nyc-01", "system_type": "ncs"}


class Level(enum.IntEnum):
    ONE = 1


class Tag(str, enum.Enum):
    A = "a"


class Line(BaseModel):
    sku: str
    extra: Any = None


class Lines(RootModel[list[Any]]):
    pass


def _babelqueue(data: dict[str, Any]) -> Any:
    return BabelEnvelope.create("urn:babel:orders:created", data)


def _som(data: dict[str, Any]) -> Any:
    return SomEnvelope.create("custom.event", data, originating_system=SYSTEM, allow_unknown=True)


PRODUCERS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "babelqueue": (_babelqueue, "/data"),
    "som": (_som, "/payload"),
}

# Data whose first refusal in document order lies before valid values and other refusals
# (the refusal's place below the producer's member).
REFUSED: dict[str, tuple[dict[Any, Any], str]] = {
    "container-before-a-bad-string": ({"a": {"x": object()}, "b": "\ud800"}, "/a/x"),
    "string-in-a-list-before-an-object": ({"a": ["ok", 1, "\ud800"], "b": object()}, "/a/2"),
    "first-of-two-in-a-list": ({"a": ["ok", {"x": object()}, b"y", "\ud800"]}, "/a/1/x"),
    "key-in-a-list-before-a-string": ({"a": [{"\ud800": 1}], "b": "é\ud800"}, "/a/0"),
    "non-string-key-after-good-members": ({"a": {"x": "y", 1: 2}, "b": object()}, "/a"),
    "escaped-segments": ({"a/b": {"~": [1.5, None, object()]}}, "/a~1b/~0/2"),
    "in-a-tuple": ({"a": (1, (2, b"x")), "b": "\ud800"}, "/a/1/1"),
    "in-a-model": ({"a": [Line(sku="a", extra={"x": {1, 2}})], "b": object()}, "/a/0/extra/x"),
    "non-ascii-string-before-an-object": ({"a": "é\udc00", "b": object()}, "/a"),
    "in-an-ordered-dict": ({"a": OrderedDict(x=[object()]), "b": "\ud800"}, "/a/x/0"),
}


@pytest.mark.parametrize(("data", "where"), REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize(("produce", "base"), PRODUCERS.values(), ids=PRODUCERS.keys())
def test_the_first_value_no_json_holds_is_refused_where_it_is(
    produce: Callable[[dict[str, Any]], Any], base: str, data: dict[Any, Any], where: str
) -> None:
    with pytest.raises(ProducerError) as caught:
        produce(data)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("json.invalid", base + where)
    ]


def test_the_copy_keeps_each_value_and_holds_no_container_of_the_input() -> None:
    inner = [1, "a", None]
    data: dict[str, Any] = {
        "scalars": [True, 2**70, -0.0, "é", Level.ONE, Tag.A],
        "inner": inner,
        "tuple": (inner, ("x",)),
        "proxy": MappingProxyType({"k": inner}),
        "model": Line(sku="s", extra=[inner]),
        "root": Lines([1, [inner]]),
        "nan": math.nan,
    }
    copied = plain_json(data)
    assert copied["scalars"] == [True, 2**70, -0.0, "é", 1, "a"]
    assert [type(one) for one in copied["scalars"]] == [bool, int, float, str, Level, Tag]
    assert copied["tuple"] == [[1, "a", None], ["x"]]
    assert copied["proxy"] == {"k": [1, "a", None]}
    assert type(copied["proxy"]) is dict
    assert copied["model"] == {"sku": "s", "extra": [[1, "a", None]]}
    assert copied["root"] == [1, [[1, "a", None]]]
    assert math.isnan(copied["nan"])
    inner.append("later")  # each list of the copy is its own
    assert copied["inner"] == [1, "a", None]
    assert copied["tuple"][0] == [1, "a", None]
    assert copied["proxy"]["k"] == [1, "a", None]


LEVELS: dict[str, tuple[Any, int]] = {
    "scalar": ("x", 0),
    "empty-object": ({}, 1),
    "flat": ({"a": 1, "b": "c"}, 1),
    "list-of-scalars": ({"a": [1, 2]}, 2),
    "deepest-last": ({"a": [1], "b": {"c": [{"d": []}]}}, 5),
    "in-a-model": ({"a": Line(sku="s", extra=[[1]])}, 4),
}


@pytest.mark.parametrize(("value", "levels"), LEVELS.values(), ids=LEVELS.keys())
def test_the_copy_reads_the_levels_it_nests(value: Any, levels: int) -> None:
    assert plain_json_nesting(value)[1] == levels


class Ratio(float, enum.Enum):
    HALF = 0.5


class Colour(enum.Enum):
    RED = "red"


class Whole(int):
    pass


_JSON_VALUE = TypeAdapter(JsonValue, config=ConfigDict(strict=True))


def _nested(levels: int) -> list[Any]:
    value: list[Any] = [1]
    for _ in range(levels - 1):
        value = [value]
    return value


# Read back equal, or (a NaN, an infinity) by the Rust schema: either way JsonValue's reading.
_COPIED: dict[str, Any] = {
    "json-types": [1, 1.0, True, False, None, "s", -0.0, {"a": [2**63 - 1, -(2**63)]}],
    "enum-members": {"i": Level.ONE, "s": Tag.A, "f": Ratio.HALF, "l": [Level.ONE]},
    "nan-beside-booleans-and-integers": [True, 1, 1.0, float("nan"), Level.ONE, Tag.A],
    "infinity-in-an-object": {"b": False, "x": [0, float("-inf")], "s": Ratio.HALF},
    "200-levels": _nested(200),
}


@pytest.mark.parametrize("value", _COPIED.values(), ids=_COPIED.keys())
def test_plain_copy_is_what_json_value_reads(value: Any) -> None:
    copy = plain_copy(value)
    assert typed(copy) == typed(_JSON_VALUE.validate_python(value))
    assert copy is not value


# What orjson refuses, or reads back unequal and the Rust schema refuses: left to JsonValue.
_LEFT: dict[str, Any] = {
    "tuple": [1, (2, 3)],
    "enum-member-of-no-json-type": [Colour.RED],
    "uuid": {"u": uuid.UUID(int=7)},
    "decimal": [decimal.Decimal(1)],
    "subclass": [Whole(1)],
    "beyond-64-bits": [2**64],
    "key-not-a-string": {1: 2},
    "key-of-a-str-enum": {Tag.A: 1},
    "lone-surrogate": ["\udc80"],
    "fragment-of-no-json": [orjson.Fragment(b"[1")],
    "fragment": [orjson.Fragment(b"1")],
    "tuple-beside-a-nan": [float("nan"), (1,)],
    "201-levels": _nested(201),
}


@pytest.mark.parametrize("value", _LEFT.values(), ids=_LEFT.keys())
def test_plain_copy_leaves_to_json_value_what_it_does_not_read_alike(value: Any) -> None:
    assert plain_copy(value) is None


def test_plain_copy_is_bounded_by_its_levels() -> None:
    assert plain_copy(_nested(10), levels=10) == _nested(10)
    assert plain_copy(_nested(11), levels=10) is None
    with pytest.raises(ValidationError):  # 255 levels: JsonValue's own bound
        _JSON_VALUE.validate_python(_nested(255))
