"""Producing: create, reply and fail; trace continuation, Lamport clock, inbox, status codes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

import envelopekit as ek
from envelopekit import ProducerError, Settings
from envelopekit._compat import MISSING
from envelopekit.matrix import (
    LamportClock,
    MxErrorCode,
    MxErrorPayload,
    MxRequest,
    MxResponse,
    Page,
    SuccessPayload,
    is_span_id,
    is_trace_id,
)

SETTINGS = Settings(matrix_from="/apps/shell")


class ExpandDirArgs(BaseModel):
    path: str


class Entry(BaseModel):
    name: str


def test_create_expecting_a_reply() -> None:
    req = MxRequest.create(
        "ExpandDir", {"path": "/"}, iface="FsDaemon@1", expect_reply=True, settings=SETTINGS
    )
    assert isinstance(req.correlation_id, str) and len(req.correlation_id) == 36
    assert req.reply_to == f"$replies.{req.correlation_id}"
    assert req.expects_reply
    assert req.iface == "FsDaemon@1"
    assert req.from_ == "/apps/shell"
    assert isinstance(req.trace_id, str) and is_trace_id(req.trace_id)
    assert isinstance(req.span_id, str) and is_span_id(req.span_id)
    assert req.parent_span_id is MISSING
    assert req.lamport is MISSING
    assert ek.check(req.to_json(), spec="matrix").ok
    other = MxRequest.create("ExpandDir", {"path": "/"}, expect_reply=True)
    assert other.correlation_id != req.correlation_id
    assert other.trace_id != req.trace_id


def test_create_tell() -> None:
    tell = MxRequest.create("$join", {}, settings=Settings())
    assert tell.correlation_id is MISSING and tell.reply_to is MISSING
    assert tell.from_ is MISSING
    assert not tell.expects_reply
    assert b"correlationId" not in tell.to_json() and b"from" not in tell.to_json()
    with pytest.raises(ProducerError):
        tell.reply({"ok": True})
    with pytest.raises(ProducerError):
        tell.fail(MxErrorCode.INTERNAL, "x")


def test_create_with_given_ids() -> None:
    req = MxRequest.create(
        "fs.list",
        {},
        expect_reply=True,
        correlation_id="c-1",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        parent_span_id="00f067aa0ba902b7",
        lamport=7,
        from_="/x",
        settings=SETTINGS,
    )
    assert (req.correlation_id, req.reply_to) == ("c-1", "$replies.c-1")
    assert req.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert req.parent_span_id == "00f067aa0ba902b7"
    assert req.span_id != "00f067aa0ba902b7"
    assert (req.lamport, req.from_) == (7, "/x")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"op": "$reply"},
        {"op": ""},
        {"reply_to": "$replies.x"},
        {"clock": LamportClock(), "lamport": 1},
        {"trace_id": "4BF92F3577B34DA6A3CE929D0E0E4736"},
        {"trace_id": "0" * 32},
        {"parent_span_id": "0" * 16, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"},
        {"parent_span_id": "00f067aa0ba902b", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"},
        # A parent span in a trace the request does not name (create mints a fresh one).
        {"parent_span_id": "00f067aa0ba902b7"},
    ],
)
def test_create_refuses(kwargs: dict[str, object]) -> None:
    op = str(kwargs.pop("op", "fs.list"))
    with pytest.raises(ProducerError):
        MxRequest.create(op, {}, **kwargs)  # type: ignore[call-overload]


def test_create_refuses_bad_values_with_their_rules() -> None:
    with pytest.raises(ProducerError) as caught:
        MxRequest.create("fs.list", {}, lamport=-1)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("request.minimum", "/lamport")
    ]
    with pytest.raises(ProducerError) as caught:
        MxRequest.create("fs.list", {"when": object()})  # type: ignore[dict-item]
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("json.invalid", "/payload/when")
    ]
    with pytest.raises(ProducerError) as caught:
        MxRequest.create("fs.list", {}, correlation_id="", expect_reply=True)
    assert [v.pointer for v in caught.value.violations] == ["/correlationId"]


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"expect_reply": True},
        {"expect_reply": True, "correlation_id": "c-1"},
        {"expect_reply": True, "correlation_id": "c-1", "reply_to": "$replies.c-1"},
    ],
    ids=["tell", "ask", "ask-with-cid", "ask-with-both"],
)
def test_create_writes_no_reply_pair_its_own_lint_warns_of(given: dict[str, Any]) -> None:
    req = MxRequest.create("fs.log", {}, **given)
    assert req.envelope_warnings() == []
    assert ek.check(req.to_json(), spec="matrix").warnings == []


@pytest.mark.parametrize(
    ("given", "pointers"),
    [
        ({"correlation_id": "c-1"}, ["/correlationId"]),
        ({"reply_to": "$replies.c-1"}, ["/replyTo"]),
        ({"correlation_id": "c-1", "reply_to": "$replies.c-1"}, ["/correlationId", "/replyTo"]),
    ],
    ids=["cid", "reply-to", "both"],
)
def test_create_refuses_half_a_reply_pair_with_its_rule(
    given: dict[str, Any], pointers: list[str]
) -> None:
    """A tell given a correlation id was written, then warned of by its own ``reply.unpaired``
    (matrix.md §14.8: a lint reports ``correlationId`` without ``replyTo``)."""
    with pytest.raises(ProducerError) as caught:
        MxRequest.create("fs.log", {}, **given)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        (ek.rules.REPLY_UNPAIRED, at) for at in pointers
    ]


def test_typed_payload() -> None:
    req = MxRequest.create("ExpandDir", ExpandDirArgs(path="/home"), expect_reply=True)
    assert type(req) is MxRequest[ExpandDirArgs]
    assert req.to_json().startswith(b'{"op":"ExpandDir","payload":{"path":"/home"},')
    parsed = MxRequest[ExpandDirArgs].model_validate_json(req.to_json())
    assert parsed == req
    also = MxRequest[ExpandDirArgs].create("ExpandDir", ExpandDirArgs(path="/"))
    assert type(also) is MxRequest[ExpandDirArgs]


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(ExpandDirArgs(path="/"), id="own-model"),
        pytest.param(SuccessPayload(ok=True), id="success-payload"),
        pytest.param(Page[Entry].of([Entry(name="a")]), id="page"),
        pytest.param(MxErrorPayload.of(MxErrorCode.NOT_FOUND, "gone"), id="error-payload"),
    ],
)
def test_a_request_takes_any_model_payload(payload: BaseModel) -> None:
    # A request's payload is any JSON (matrix.md §14.2), a model instance written as its
    # own JSON; an error payload is one such model, only a response reads it as an error.
    req = MxRequest.create("fs.put", payload)
    typed: object = MxRequest[type(payload)]  # type: ignore[misc]
    assert type(req) is typed
    assert req.payload == payload
    assert req.to_json().startswith(
        b'{"op":"fs.put","payload":' + payload.model_dump_json(by_alias=True).encode()
    )
    assert ek.check(req.to_json(), spec="matrix").ok


def test_reply_echoes_and_continues_the_trace() -> None:
    req = MxRequest.create("fs.list", {"path": "/"}, iface="FsDaemon@1", expect_reply=True)
    page = Page[Entry].of([Entry(name="a"), Entry(name="b")], cursor="n2")
    rep = req.reply(page, settings=SETTINGS)
    assert type(rep) is MxResponse[Page[Entry]]
    assert rep.op == "$reply"
    assert rep.correlation_id == req.correlation_id
    assert rep.iface == "FsDaemon@1"
    assert rep.trace_id == req.trace_id
    assert isinstance(rep.span_id, str) and is_span_id(rep.span_id)
    assert rep.span_id != req.span_id
    assert rep.parent_span_id == req.span_id
    assert rep.from_ == "/apps/shell"
    assert rep.payload == page and not rep.is_error
    wire = rep.to_json()
    assert (
        b'"payload":{"ok":true,"count":2,"items":[{"name":"a"},{"name":"b"}],"cursor":"n2"}' in wire
    )
    assert MxResponse[Page[Entry]].model_validate_json(wire) == rep
    assert ek.check(wire, spec="matrix").ok


def test_reply_with_json_payload() -> None:
    req = MxRequest.create("fs.stat", {}, expect_reply=True)
    rep = req.reply({"ok": True, "size": 12})
    assert type(rep) is MxResponse
    assert rep.payload == {"ok": True, "size": 12}
    assert req.reply(SuccessPayload(ok=True)).to_json().count(b'"ok":true') == 1


def test_reply_to_a_non_w3c_trace_starts_a_fresh_one() -> None:
    req = MxRequest.model_validate_json(
        b'{"op":"fs.list","payload":{},"correlationId":"c","traceId":"abc","spanId":"xyz"}'
    )
    rep = req.reply({"ok": True})
    assert isinstance(rep.trace_id, str) and is_trace_id(rep.trace_id)
    assert rep.parent_span_id is MISSING


W3C_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
W3C_SPAN = "00f067aa0ba902b7"


@pytest.mark.parametrize(
    ("trace", "continued"),
    [
        pytest.param(None, False, id="no-trace-id"),
        pytest.param("abc", False, id="non-w3c-trace-id"),
        pytest.param("0" * 32, False, id="all-zero-trace-id"),
        pytest.param(W3C_TRACE.upper(), False, id="uppercase-trace-id"),
        pytest.param(W3C_TRACE, True, id="w3c-trace-id"),
    ],
)
@pytest.mark.parametrize("answer", ["reply", "fail"])
def test_a_parent_span_only_within_the_continued_trace(
    trace: str | None, continued: bool, answer: str
) -> None:
    # W3C Trace Context: a receiver ignores a trace context whose trace-id is invalid, its
    # parent-id with it. A reply that starts a fresh trace is that trace's root: the request's
    # span is no span of it, so it is no parent (matrix.md §8).
    fields = {"op": "fs.list", "payload": {}, "correlationId": "c", "spanId": W3C_SPAN}
    if trace is not None:
        fields["traceId"] = trace
    req = MxRequest.model_validate(fields)
    rep = req.reply({"ok": True}) if answer == "reply" else req.fail(MxErrorCode.INTERNAL, "x")
    assert isinstance(rep.trace_id, str) and is_trace_id(rep.trace_id)
    assert (rep.trace_id == trace) is continued
    assert rep.parent_span_id == (W3C_SPAN if continued else MISSING)


def test_lamport_without_a_clock() -> None:
    req = MxRequest.model_validate_json(
        b'{"op":"fs.list","payload":{},"correlationId":"c","lamport":41}'
    )
    assert req.reply({"ok": True}).lamport == 42
    assert req.fail(MxErrorCode.INTERNAL, "x").lamport == 42
    unstamped = MxRequest.create("fs.list", {}, expect_reply=True)
    assert unstamped.reply({}).lamport is MISSING


def test_lamport_with_clocks() -> None:
    caller, callee = LamportClock(), LamportClock(100)
    req = MxRequest.create("fs.list", {}, expect_reply=True, clock=caller)
    assert req.lamport == 1 == caller.value
    rep = req.reply({"ok": True}, clock=callee)
    # observe(1) -> max(100, 1) + 1 = 101, then tick for the send -> 102.
    assert rep.lamport == 102 == callee.value
    assert isinstance(rep.lamport, int)
    assert caller.observe(rep.lamport) == 103
    assert isinstance(req.lamport, int) and rep.lamport > req.lamport


def test_lamport_clock_rules() -> None:
    clock = LamportClock()
    assert clock.value == 0
    assert clock.tick() == 1
    assert clock.observe(41) == 42
    assert clock.observe(3) == 43
    assert clock.observe(None) == 44
    assert repr(clock) == "LamportClock(44)"
    for bad in (-1, 1.5, True):
        with pytest.raises(ProducerError):
            clock.observe(bad)  # type: ignore[arg-type]
        with pytest.raises(ProducerError):
            LamportClock(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [-(10**5000), 10**5000, 2**63, "7" * 1_000_000],
    ids=["negative-of-5001-digits", "of-5001-digits", "past-int64", "1-mb-string"],
)
def test_lamport_clock_refuses_what_no_stamp_is_quoted_short(bad: object) -> None:
    for call in (lambda: LamportClock(bad), lambda: LamportClock().observe(bad)):  # type: ignore[arg-type]
        with pytest.raises(ProducerError) as caught:
            call()
        assert len(str(caught.value)) < 200
    assert LamportClock().observe(2**63 - 2) == 2**63 - 1  # the last valid stamp


LAST_STAMP = 2**63 - 1


@pytest.mark.parametrize(
    ("start", "advance"),
    [
        (LAST_STAMP, LamportClock.tick),
        (LAST_STAMP, lambda clock: clock.observe(None)),
        (LAST_STAMP, lambda clock: clock.observe(0)),
        (0, lambda clock: clock.observe(LAST_STAMP)),
        (
            LAST_STAMP,
            lambda clock: MxRequest.create("fs.list", {}, expect_reply=True, clock=clock),
        ),
        (
            0,
            lambda clock: MxRequest.model_validate_json(
                b'{"op":"fs.list","payload":{},"correlationId":"c","lamport":%d}' % LAST_STAMP
            ).reply({"ok": True}, clock=clock),
        ),
    ],
    ids=["tick", "observe-none", "observe-older", "observe-the-last", "create", "reply"],
)
def test_lamport_clock_never_passes_the_last_stamp(
    start: int, advance: Callable[[LamportClock], object]
) -> None:
    """A clock at 2^63-1 refuses to advance, as no valid message carries 2^63, and stays valid."""
    clock = LamportClock(start)
    before = clock.value
    with pytest.raises(ProducerError) as caught:
        advance(clock)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("number.out_of_range", "/lamport")
    ]
    assert clock.value <= LAST_STAMP and clock.value >= before
    assert LamportClock(clock.value).value == clock.value  # a value the clock may start at


def test_lamport_clock_is_thread_safe() -> None:
    clock = LamportClock()

    def work() -> None:
        for _ in range(2000):
            clock.tick()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert clock.value == 16000


@pytest.mark.parametrize("code", [c for c in MxErrorCode if c is not MxErrorCode.OK])
def test_fail_fills_status_code(code: MxErrorCode) -> None:
    req = MxRequest.create("fs.list", {}, expect_reply=True)
    rep = req.fail(code, "went wrong")
    assert isinstance(rep.payload, MxErrorPayload)
    assert rep.payload.code is code
    assert rep.payload.status_code == code.http_status
    assert rep.payload.details is MISSING
    assert rep.is_error and rep.correlation_id == req.correlation_id
    assert rep.parent_span_id == req.span_id and rep.trace_id == req.trace_id
    verdict = ek.check(rep.to_json(), spec="matrix")
    assert verdict.ok and verdict.warnings == []


def test_http_statuses() -> None:
    expected = {
        "OK": 200,
        "NOT_FOUND": 404,
        "INVALID_ARGUMENT": 400,
        "UNAUTHENTICATED": 401,
        "PERMISSION_DENIED": 403,
        "UNAVAILABLE": 503,
        "INTERNAL": 500,
        "DEADLINE_EXCEEDED": 504,
        "ALREADY_EXISTS": 409,
        "RESOURCE_EXHAUSTED": 429,
        "FAILED_PRECONDITION": 400,
    }
    assert [c.value for c in MxErrorCode] == list(expected)
    assert {c.value: c.http_status for c in MxErrorCode} == expected
    assert MxErrorCode.FAILED_PRECONDITION.http_statuses == {400, 412}
    assert MxErrorCode.UNAVAILABLE.retryable and not MxErrorCode.NOT_FOUND.retryable


# matrix.md section 6, its "Retry?" column: a retry is advised ("yes", "with backoff", "yes, with
# idempotency") or it is not ("no", "no (re-auth)", "n/a", and INTERNAL's "maybe").
RETRY_ADVICE = {
    "OK": "n/a",
    "INVALID_ARGUMENT": "no",
    "FAILED_PRECONDITION": "no",
    "UNAUTHENTICATED": "no (re-auth)",
    "PERMISSION_DENIED": "no",
    "NOT_FOUND": "no",
    "ALREADY_EXISTS": "no",
    "RESOURCE_EXHAUSTED": "with backoff",
    "INTERNAL": "maybe",
    "UNAVAILABLE": "yes",
    "DEADLINE_EXCEEDED": "yes, with idempotency",
}


@pytest.mark.parametrize(("code", "advice"), RETRY_ADVICE.items())
def test_retryable_is_the_spec_s_retry_advice(code: str, advice: str) -> None:
    # A server-side bug ("maybe") is not retried as a transient failure is: a client that
    # retried every INTERNAL would repeat a deterministic failure max-attempts times.
    assert set(RETRY_ADVICE) == {c.value for c in MxErrorCode}
    advised = advice in ("yes", "with backoff", "yes, with idempotency")
    assert MxErrorCode(code).retryable is advised


def test_fail_with_status_and_details() -> None:
    req = MxRequest.create("fs.rm", {}, expect_reply=True)
    rep = req.fail(MxErrorCode.FAILED_PRECONDITION, "not empty", status_code=412, details={"n": 3})
    assert (
        rep.to_json()
        .split(b'"payload":')[1]
        .startswith(
            b'{"ok":false,"error":"not empty","code":"FAILED_PRECONDITION","statusCode":412,'
            b'"details":{"n":3}}'
        )
    )
    assert ek.check(rep.to_json(), spec="matrix").warnings == []
    odd = req.fail(MxErrorCode.NOT_FOUND, "gone", status_code=410)
    assert [w.rule for w in ek.check(odd.to_json(), spec="matrix").warnings] == [
        ek.rules.ERROR_CODE_INCONSISTENT
    ]


@pytest.mark.parametrize("status", [99, 600, True])
def test_fail_refuses(status: int) -> None:
    req = MxRequest.create("fs.rm", {}, expect_reply=True)
    with pytest.raises(ProducerError):
        req.fail(MxErrorCode.INTERNAL, "x", status_code=status)
    with pytest.raises(ProducerError):
        req.fail(MxErrorCode.OK, "not an error")


@pytest.mark.parametrize(
    ("status", "rule"),
    [
        (10**5000, "error-payload.maximum"),
        (-(10**5000), "error-payload.minimum"),
        ("5" * 1_000_000, "error-payload.type"),
        ([500] * 100_000, "error-payload.type"),
    ],
    ids=["int-of-5001-digits", "negative-of-5001-digits", "1-mb-string", "long-list"],
)
def test_a_refused_status_is_quoted_short(status: object, rule: str) -> None:
    with pytest.raises(ProducerError) as caught:
        MxErrorPayload.of(MxErrorCode.INTERNAL, "x", status_code=status)  # type: ignore[arg-type]
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [(rule, "/statusCode")]
    assert len(str(caught.value)) < 200
    with pytest.raises(ProducerError) as failed:
        MxRequest.create("fs.rm", {}, expect_reply=True).fail(
            MxErrorCode.INTERNAL,
            "x",
            status_code=status,  # type: ignore[arg-type]
        )
    assert [(v.rule, v.pointer) for v in failed.value.violations] == [(rule, "/payload/statusCode")]


def _replied() -> MxResponse:
    return MxRequest.create("fs.list", {}, expect_reply=True).reply({"ok": True})


@pytest.mark.parametrize(
    "answer",
    [
        lambda req, clock: req.reply({"ok": True}, clock=clock),
        lambda req, clock: req.fail(MxErrorCode.INTERNAL, "x", clock=clock),
    ],
    ids=["reply", "fail"],
)
def test_a_reply_read_as_a_request_is_never_answered(answer: Any) -> None:
    # Every member of a reply is a request's too: the request model reads one.
    read = MxRequest.model_validate_json(_replied().to_json())
    assert read.op == "$reply"
    clock = LamportClock()
    with pytest.raises(ProducerError, match=r"'\$reply' is a reply"):
        answer(read, clock)
    assert clock.value == 0  # refused before the clock observes the reply


def test_fail_typed_as_any_response() -> None:
    req = MxRequest.create("fs.list", {}, expect_reply=True)
    answers: list[MxResponse[Page[Entry]]] = [
        req.reply(Page[Entry].of([])),
        req.fail(MxErrorCode.UNAVAILABLE, "later"),
    ]
    assert [a.is_error for a in answers] == [False, True]
