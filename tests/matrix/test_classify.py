"""Classification of incoming bytes: request, response or error payload, by `op` and `ok`."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

import envelopekit as ek
from envelopekit.matrix import (
    MxErrorPayload,
    MxMessage,
    MxRequest,
    MxResponse,
    Page,
    classify,
    message_kind,
)


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b'{"op":"fs.list","payload":{}}', MxRequest),
        (b'{"op":"$join","payload":null}', MxRequest),
        (b'{"op":"$reply","correlationId":"c","payload":{"ok":true}}', MxResponse),
        (b'{"payload":{"ok":true},"correlationId":"c","op":"$reply"}', MxResponse),
        (b'{"ok":false,"error":"boom"}', MxErrorPayload),
    ],
)
def test_classify_by_op(raw: bytes, kind: type) -> None:
    assert type(classify(raw)) is kind
    verdict = ek.check(raw, spec="matrix")
    assert verdict.ok
    assert type(verdict.envelope) is kind
    assert type(ek.check(raw, spec="auto").envelope) is kind


def test_error_reply_payload_is_an_error_payload() -> None:
    rep = classify(b'{"op":"$reply","correlationId":"c","payload":{"ok":false,"error":"x"}}')
    assert isinstance(rep, MxResponse)
    assert isinstance(rep.payload, MxErrorPayload)
    assert rep.is_error
    ok = classify(b'{"op":"$reply","correlationId":"c","payload":{"ok":true,"n":1}}')
    assert isinstance(ok, MxResponse)
    assert ok.payload == {"ok": True, "n": 1}
    assert not ok.is_error


class Entry(BaseModel):
    name: str


def test_typed_response_still_classifies_errors() -> None:
    raw = (
        b'{"op":"$reply","correlationId":"c",'
        b'"payload":{"ok":false,"error":"gone","code":"NOT_FOUND"}}'
    )
    rep = MxResponse[Page[Entry]].model_validate_json(raw)
    assert isinstance(rep.payload, MxErrorPayload)
    with pytest.raises(ValidationError) as caught:
        MxResponse[Page[Entry]].model_validate_json(
            b'{"op":"$reply","correlationId":"c","payload":{"ok":true,"count":-1,"items":[{"name":2}]}}'
        )
    found = {(v.rule, v.pointer) for v in ek.violations(caught.value)}
    assert found == {
        ("response.minimum", "/payload/count"),
        ("response.type", "/payload/items/0/name"),
    }
    with pytest.raises(ValidationError) as caught:
        MxResponse[Page[Entry]].model_validate_json(
            b'{"op":"$reply","correlationId":"c","payload":{"ok":false,"error":"x","code":"NOPE"}}'
        )
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value)] == [
        ("error-payload.enum", "/payload/code")
    ]


def test_success_payload_ok_is_exactly_true() -> None:
    with pytest.raises(ValidationError) as caught:
        MxResponse[Page[Entry]].model_validate_json(
            b'{"op":"$reply","correlationId":"c","payload":{"ok":1,"count":0,"items":[]}}'
        )
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value)] == [
        ("response.const", "/payload/ok")
    ]


def test_message_kind_on_models_and_values() -> None:
    req = MxRequest.create("fs.list", {}, expect_reply=True)
    assert message_kind(req) == "request"
    assert message_kind(req.reply({"ok": True})) == "response"
    assert message_kind(MxErrorPayload(ok=False, error="x")) == "error-payload"
    assert message_kind({"op": 1}) == "request"
    assert message_kind({"ok": True}) == "error-payload"
    assert message_kind([]) == "request"


def test_classification_violations_name_the_chosen_schema() -> None:
    with pytest.raises(ValidationError) as caught:
        classify(b'{"op":"$reply","correlationId":"c","payload":{"ok":false}}')
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value, model=MxMessage)] == [
        ("error-payload.required", "/payload/error")
    ]


def test_wire_names_only() -> None:
    with pytest.raises(ValidationError):
        classify(b'{"op":"x.y","payload":{},"reply_to":"$replies.c"}')
    rep = classify(b'{"op":"$reply","correlationId":"c","payload":{},"parent_span_id":"x"}')
    assert isinstance(rep, MxResponse)
    assert rep.parent_span_id is not None and rep.model_extra == {"parent_span_id": "x"}


def test_looks_like() -> None:
    assert ek.detect({"op": "fs.list", "payload": {}}) == "matrix"
    assert ek.detect({"ok": False, "error": "x"}) == "matrix"
    assert ek.detect({"ok": True}) is None


@pytest.mark.parametrize(
    ("raw", "found"),
    [
        (b"nope", [("json.invalid", "")]),
        (b'{"op":"fs.list"}', [("request.required", "/payload")]),
        (b'{"op":"$reply","payload":1}', [("response.required", "/correlationId")]),
        (b'{"ok":false}', [("error-payload.required", "/error")]),
    ],
    ids=["not-json", "request", "response", "error-payload"],
)
def test_a_refused_document_s_error_is_titled_and_mapped_without_naming_the_model(
    raw: bytes, found: list[tuple[str, str]]
) -> None:
    # The title is what `str(exc)` starts with; it was pydantic's dump of the core schema,
    # naming private validators, and `violations(exc)` could not tell which model it was.
    with pytest.raises(ValidationError) as refused:
        classify(raw)
    assert refused.value.title == "MxMessage"
    assert str(refused.value).startswith(("1 validation error for MxMessage\n", "2 validation"))
    assert [(v.rule, v.pointer) for v in ek.violations(refused.value)] == found
