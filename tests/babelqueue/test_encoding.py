"""``to_json`` is byte-identical to the Python reference encoder (expected-bytes, column python)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import TypedDict

from envelopekit import _json
from envelopekit.babelqueue import BabelEnvelope
from tests.conftest import DATA

ENCODING = DATA / "babelqueue" / "encoding"
EXPECTED: dict[str, Any] = json.loads(
    (ENCODING / "expected-bytes.newest.json").read_text(encoding="utf-8")
)
# Fixtures a consumer refuses: there is no decoded envelope to re-encode.
REFUSED = {
    "data-array-rejected.json",
    "invalid-missing-urn.json",
    "invalid-unknown-schema-version.json",
}
# The Python reference keeps the inbound `urn` alias; envelopekit never emits `urn` (the seed
# page: "`job`, with `urn` accepted only as an inbound alias") and writes `job` in its place,
# as the Go and Java references do.
ALIAS_REWRITTEN = {"urn-alias.json": "go"}


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_reencode_matches_reference(name: str) -> None:
    raw = (DATA / "babelqueue" / "fixtures" / name).read_bytes()
    if name in REFUSED:
        with pytest.raises(ValidationError):
            BabelEnvelope.model_validate_json(raw)
        return
    column = ALIAS_REWRITTEN.get(name, "python")
    expected = EXPECTED[name]["by_sdk"][column].encode("utf-8")
    assert BabelEnvelope.model_validate_json(raw).to_json() == expected


def test_alias_rewrite_is_the_only_difference_from_python() -> None:
    raw = (DATA / "babelqueue" / "fixtures" / "urn-alias.json").read_bytes()
    ours = orjson.loads(BabelEnvelope.model_validate_json(raw).to_json())
    python = orjson.loads(EXPECTED["urn-alias.json"]["by_sdk"]["python"])
    python["job"] = python.pop("urn")
    assert ours == python
    assert list(ours) == ["job", "trace_id", "data", "meta", "attempts"]


def test_edge_input_matches_python_json_dumps() -> None:
    raw = (ENCODING / "edge-input.json").read_bytes()
    expected = json.loads((ENCODING / "edge-output-by-encoder.json").read_text("utf-8"))
    reference = expected["python_json_dumps"]
    document = json.loads(raw)
    assert _json.dumps(document) == reference.encode("utf-8")
    # Its integer beyond int64 inside `data` is read with a warning (Decisions §6), so the
    # whole message decodes and re-encodes as the Python reference does, through every door.
    assert BabelEnvelope.model_validate_json(raw).to_json() == reference.encode("utf-8")
    assert BabelEnvelope.model_validate(document).to_json() == reference.encode("utf-8")


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_dumps_equals_python_reference(value: Any) -> None:
    reference = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        expected = reference.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: not UTF-8, refused by both
        with pytest.raises((TypeError, UnicodeEncodeError)):
            _json.dumps(value)
        return
    assert _json.dumps(value) == expected


class _Item(BaseModel):
    sku: str = Field(alias="SKU")


@dataclass
class _Order:
    order_id: int
    item: _Item


class TypedOrder(TypedDict):
    order_id: int
    item: _Item


_TYPED_RAW = BabelEnvelope.create(
    "urn:babel:orders:created", {"order_id": 1, "item": {"SKU": "a-1"}}
).to_json()


@pytest.mark.parametrize(
    "data_type",
    [_Order, dict[str, object], dict[str, int | _Item], TypedOrder, dict[str, Any], Any],
    ids=["dataclass", "dict-object", "dict-of-models", "typeddict", "dict-any", "any"],
)
def test_a_message_read_with_typed_data_is_written_again_as_read(data_type: Any) -> None:
    # Its data holds what only its type's serializer writes (a model inside a dataclass or a
    # dict): to_json, to_wire and everything built on them write it as model_dump_json does.
    envelope = BabelEnvelope[data_type].model_validate_json(_TYPED_RAW)
    assert envelope.to_json() == _TYPED_RAW
    assert orjson.loads(envelope.model_dump_json(by_alias=True)) == orjson.loads(_TYPED_RAW)


class _Tenanted(BabelEnvelope[dict[str, int]]):
    """A user's envelope with a field of its own."""

    tenant: str = "none"
    region: str = Field(default="eu", alias="Region")


def test_a_subclass_writes_its_own_fields() -> None:
    # to_json wrote the spec's keys and the unknown ones: a subclass's own field was lost on
    # the wire (`retried`, the Router's sends), read back as its default.
    sent = {**orjson.loads(_TYPED_RAW), "data": {"n": 1}, "tenant": "acme", "Region": "us"}
    sent["x_unknown"] = 1
    raw = orjson.dumps(sent)
    envelope = _Tenanted.model_validate_json(raw)
    assert envelope.to_json() == raw
    assert envelope.retried().to_json() == raw.replace(b'"attempts":0', b'"attempts":1')
    assert orjson.loads(envelope.model_dump_json()) == sent
