"""Round trip: parse, re-encode, parse gives an equal model, and the bytes keep wire names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from envelopekit.matrix import (
    MxErrorPayload,
    MxRequest,
    MxResponse,
    Page,
    WriteArgs,
    classify,
)
from tests.matrix.test_differential import FIELDS

DATA = Path(__file__).resolve().parent.parent / "data" / "matrix"
CASES = [c for c in json.loads((DATA / "cases.json").read_text("utf-8"))["cases"] if c["valid"]]
MODELS: dict[str, type[MxRequest | MxResponse | MxErrorPayload]] = {
    "request": MxRequest,
    "response": MxResponse,
    "error-payload": MxErrorPayload,
}
# The schemas' key order, as the differential test lists the fields.
ORDER = FIELDS


def text_of(case: dict[str, Any]) -> bytes:
    if "raw" in case:
        return str(case["raw"]).encode()
    return json.dumps(case["doc"], ensure_ascii=False).encode()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_parse_encode_parse(case: dict[str, Any]) -> None:
    model = MODELS[case["kind"]]
    first = model.model_validate_json(text_of(case))
    wire = first.to_json()
    again = model.model_validate_json(wire)
    assert again == first
    assert again.to_json() == wire
    # Same JSON value as received, known keys in the schema's order, extras after them.
    received = json.loads(text_of(case))
    emitted = json.loads(wire)
    assert emitted == received
    keys = list(emitted)
    known = [k for k in keys if k in ORDER[case["kind"]]]
    assert known == [k for k in ORDER[case["kind"]] if k in emitted]
    extras = [k for k in keys if k not in ORDER[case["kind"]]]
    assert keys == known + extras
    assert extras == [k for k in received if k not in ORDER[case["kind"]]]


def test_wire_names_in_both_directions() -> None:
    req = MxRequest(
        op="fs.list",
        payload={"path": "/"},
        correlation_id="c",
        reply_to="$replies.c",
        from_="/a",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
        parent_span_id="b7ad6b7169203331",
    )
    wire = req.to_json()
    for name in (b'"correlationId"', b'"replyTo"', b'"from"', b'"traceId"', b'"spanId"'):
        assert name in wire
    assert b'"parentSpanId"' in wire
    for python_name in (b"correlation_id", b"reply_to", b"from_", b"trace_id", b"span_id"):
        assert python_name not in wire
    assert MxRequest.model_validate_json(wire) == req
    err = MxErrorPayload(ok=False, error="x", status_code=404)
    assert err.to_json() == b'{"ok":false,"error":"x","statusCode":404}'
    assert MxErrorPayload.model_validate_json(err.to_json()) == err


def test_absent_and_null_stay_different() -> None:
    absent = MxErrorPayload.model_validate_json(b'{"ok":false,"error":"x"}')
    null = MxErrorPayload.model_validate_json(b'{"ok":false,"error":"x","details":null}')
    assert absent != null
    assert absent.to_json() == b'{"ok":false,"error":"x"}'
    assert null.to_json() == b'{"ok":false,"error":"x","details":null}'


def test_unicode_and_slashes_unescaped() -> None:
    raw = '{"op":"fs.write","payload":{"name":"Grüße/𝄞"},"from":"/apps/élan"}'.encode()
    assert MxRequest.model_validate_json(raw).to_json() == raw


class Entry(BaseModel):
    name: str


class WriteFileArgs(WriteArgs):
    path: str


def test_typed_generics_round_trip() -> None:
    raw = (
        b'{"op":"$reply","correlationId":"c","payload":{"ok":true,"count":1,'
        b'"items":[{"name":"a"}],"cursor":"n2"}}'
    )
    rep = MxResponse[Page[Entry]].model_validate_json(raw)
    assert isinstance(rep.payload, Page)
    assert rep.payload.items == [Entry(name="a")]
    assert rep.to_json() == raw
    assert MxResponse[Page[Entry]].model_validate_json(rep.to_json()) == rep
    write = MxRequest[WriteFileArgs].model_validate_json(
        b'{"op":"fs.write","payload":{"idempotencyKey":"k1","path":"/a"}}'
    )
    assert write.payload.idempotency_key == "k1"
    assert write.to_json() == b'{"op":"fs.write","payload":{"idempotencyKey":"k1","path":"/a"}}'


def test_classified_round_trip() -> None:
    for raw in (
        b'{"op":"$join","payload":{}}',
        b'{"op":"$reply","correlationId":"c","payload":{"ok":false,"error":"e"}}',
        b'{"ok":false,"error":"e","code":"INTERNAL"}',
    ):
        message = classify(raw)
        assert message.to_json() == raw
        assert classify(message.to_json()) == message
