"""Static typing of the Matrix API, checked by `mypy --strict` (and run by pytest).

`assert_type` pins what mypy infers; each `# type: ignore[<code>]` line is an error mypy must
report (strict mode's `warn_unused_ignores` fails the check if one stops being an error). Those
lines sit under `TYPE_CHECKING`, so pytest never executes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic

import pytest
from pydantic import BaseModel
from typing_extensions import Never, TypeVar, Unpack, assert_type

import envelopekit as ek
from envelopekit._compat import MISSING
from envelopekit.matrix import (
    JsonData,
    LamportClock,
    MxErrorCode,
    MxErrorPayload,
    MxRequest,
    MxResponse,
    Page,
    ProducingKeywords,
    SuccessPayload,
    WriteArgs,
    classify,
)

ArgsT = TypeVar("ArgsT")


class ExpandDirArgs(BaseModel):
    path: str


class Entry(BaseModel):
    name: str


class WriteFileArgs(WriteArgs):
    path: str
    data: str


def only_errors(rep: MxResponse[Never]) -> MxErrorPayload:
    # The payload of a response that can only fail is an error payload, without narrowing.
    return rep.payload


def test_construction_by_python_name() -> None:
    req = MxRequest(
        op="fs.list",
        payload={"path": "/"},
        correlation_id="c-1",
        reply_to="$replies.c-1",
        lamport=3,
        from_="/apps/shell",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
    )
    assert_type(req.op, str)
    assert_type(req.lamport, int | MISSING)
    assert req.correlation_id == "c-1"
    rep = MxResponse(op="$reply", correlation_id="c-1", payload={"ok": True})
    assert_type(rep.correlation_id, str)
    err = MxErrorPayload(ok=False, error="gone", code=MxErrorCode.NOT_FOUND, status_code=404)
    assert_type(err.code, MxErrorCode | MISSING)
    assert_type(err.status_code, int | MISSING)
    if TYPE_CHECKING:
        # Wire (camelCase) names are not constructor keywords.
        MxRequest(op="x", payload=1, correlationId="c")  # type: ignore[call-arg]
        # `lamport` is an integer; `op` of a response is the literal "$reply".
        MxRequest(op="x", payload=1, lamport="3")  # type: ignore[arg-type]
        MxResponse(op="reply", correlation_id="c", payload=1)  # type: ignore[arg-type]
        MxErrorPayload(ok=True, error="x")  # type: ignore[arg-type]
        MxErrorPayload(ok=False, error="x", code="NOT_FOUND")  # type: ignore[arg-type]


def test_generics() -> None:
    req = MxRequest[ExpandDirArgs].model_validate_json(b'{"op":"ExpandDir","payload":{"path":"/"}}')
    assert_type(req, MxRequest[ExpandDirArgs])
    assert_type(req.payload, ExpandDirArgs)
    assert req.payload.path == "/"
    raw = (
        b'{"op":"$reply","correlationId":"c",'
        b'"payload":{"ok":true,"count":1,"items":[{"name":"a"}]}}'
    )
    rep = MxResponse[Page[Entry]].model_validate_json(raw)
    assert_type(rep.payload, MxErrorPayload | Page[Entry])
    assert isinstance(rep.payload, Page)
    assert_type(rep.payload, Page[Entry])
    assert_type(rep.payload.items, list[Entry])
    assert rep.payload.items[0].name == "a"
    write = MxRequest.create("fs.write", WriteFileArgs(path="/a", data="hi", idempotency_key="k"))
    assert_type(write, MxRequest[WriteFileArgs])
    assert_type(write.payload.idempotency_key, str | MISSING)
    if TYPE_CHECKING:
        assert_type(req.payload, Entry)  # type: ignore[assert-type]
        Page[Entry](ok=True, count=1, items=[ExpandDirArgs(path="/")])  # type: ignore[list-item]


def test_reply_helpers() -> None:
    clock = LamportClock()
    req = MxRequest.create("fs.list", {"path": "/"}, expect_reply=True, clock=clock)
    assert_type(req, MxRequest[JsonData])
    empty = MxRequest.create("$join", {})
    assert_type(empty, MxRequest[JsonData])
    page = Page[Entry].of([Entry(name="a")])
    ok = req.reply(page, clock=clock)
    assert_type(ok, MxResponse[Page[Entry]])
    failed = req.fail(MxErrorCode.NOT_FOUND, "no such directory")
    assert_type(failed, "MxResponse[Never]")
    assert_type(failed.payload, MxErrorPayload)
    assert only_errors(failed).code is MxErrorCode.NOT_FOUND
    assert_type(req.reply({}), MxResponse[JsonData])
    # A failed reply is an answer wherever a typed one is expected (MxResponse is covariant).
    answers: list[MxResponse[Page[Entry]]] = [ok, failed]
    assert answers[1].is_error
    plain = req.reply(SuccessPayload(ok=True))
    assert_type(plain, MxResponse[SuccessPayload])
    assert_type(clock.tick(), int)
    assert_type(clock.observe(5), int)
    if TYPE_CHECKING:
        req.fail("NOT_FOUND", "x")  # type: ignore[arg-type]
        req.fail(MxErrorCode.INTERNAL, "x", status_code="500")  # type: ignore[arg-type]
        wrong: list[MxResponse[Entry]] = [ok]  # type: ignore[list-item]
        assert wrong


def test_create_keywords() -> None:
    req = MxRequest.create(
        "ExpandDir", ExpandDirArgs(path="/"), iface="FsDaemon@1", expect_reply=True, lamport=1
    )
    assert_type(req, MxRequest[ExpandDirArgs])
    assert req.iface == "FsDaemon@1"
    if TYPE_CHECKING:
        # A misspelt keyword, a keyword of the wrong type, a keyword given by position.
        MxRequest.create("fs.list", {}, ifcae="FsDaemon@1")  # type: ignore[call-overload]
        MxRequest.create("fs.list", {}, iface=1)  # type: ignore[call-overload]
        MxRequest.create("fs.list", ExpandDirArgs(path="/"), expect_reply="yes")  # type: ignore[call-overload]
        MxRequest.create("fs.list", {}, clock=3)  # type: ignore[call-overload]
        MxRequest.create("fs.list", {}, settings={})  # type: ignore[call-overload]
        MxRequest.create("fs.list", {}, "FsDaemon@1")  # type: ignore[call-overload]
        MxRequest.create("fs.list", object())  # type: ignore[call-overload]


class ListRequest(MxRequest[ExpandDirArgs]):
    """A service's own request class: `create` returns it."""


@pytest.mark.parametrize(
    "payload", [{"path": "/"}, ExpandDirArgs(path="/")], ids=["json-data", "model"]
)
def test_create_on_a_parametrised_class_is_typed_by_it(
    payload: dict[str, Any] | ExpandDirArgs,
) -> None:
    # JSON data given to `MxRequest[Model]` is validated into the model, as the result's type
    # says (it was `MxRequest[JsonData]` for both checkers).
    typed = MxRequest[ExpandDirArgs].create("ExpandDir", {"path": "/"})
    assert_type(typed, MxRequest[ExpandDirArgs])
    assert_type(typed.payload.path, str)
    assert typed.payload == ExpandDirArgs(path="/")
    counts = MxRequest[dict[str, int]].create("fs.count", {"files": 1})
    assert_type(counts, MxRequest[dict[str, int]])
    assert counts.payload == {"files": 1}
    own = ListRequest.create("ExpandDir", {"path": "/"})
    assert_type(own, ListRequest)
    assert type(own) is ListRequest
    either = MxRequest[ExpandDirArgs].create("ExpandDir", payload)
    assert_type(either, MxRequest[ExpandDirArgs])
    assert either.payload == ExpandDirArgs(path="/")
    if TYPE_CHECKING:
        MxRequest[ExpandDirArgs].create("ExpandDir", object())  # type: ignore[call-overload]


class Listing(MxRequest[ArgsT], Generic[ArgsT]):
    """A service's own request class, generic in its own payload type."""


def test_create_on_a_subclass_is_typed_by_it() -> None:
    # A model of the subclass's own type made the subclass at run time, typed
    # `MxRequest[ExpandDirArgs]` by both checkers; a model of another type, refused at run time
    # (`ProducerError`), passed them.
    own = ListRequest.create("ExpandDir", ExpandDirArgs(path="/"), expect_reply=True)
    assert_type(own, ListRequest)
    assert type(own) is ListRequest
    assert_type(own.payload, ExpandDirArgs)
    listing = Listing[ExpandDirArgs].create("ExpandDir", ExpandDirArgs(path="/"))
    assert_type(listing, Listing[ExpandDirArgs])
    assert type(listing) is Listing[ExpandDirArgs]
    # The plain class given a model is still typed (and made) by the model's class.
    plain = MxRequest.create("ExpandDir", ExpandDirArgs(path="/"))
    assert_type(plain, MxRequest[ExpandDirArgs])
    assert type(plain) is MxRequest[ExpandDirArgs]
    with pytest.raises(ek.ProducerError):
        ListRequest.create("ExpandDir", Entry(name="a"))  # type: ignore[call-overload]


def _ask(**options: Unpack[ProducingKeywords]) -> MxRequest[JsonData]:
    return MxRequest.create("fs.list", {"path": "/"}, **options)


def test_create_keywords_can_be_forwarded_typed() -> None:
    req = _ask(iface="FsDaemon@1", expect_reply=True)
    assert_type(req, MxRequest[JsonData])
    assert req.iface == "FsDaemon@1" and req.expects_reply
    with pytest.raises(TypeError):
        _ask(ifcae="FsDaemon@1")  # type: ignore[call-arg]
    if TYPE_CHECKING:
        _ask(lamport="3")  # type: ignore[arg-type]


def test_classify() -> None:
    message = classify(b'{"op":"$join","payload":{}}')
    assert_type(message, MxRequest | MxResponse | MxErrorPayload)
    assert isinstance(message, MxRequest)
    assert_type(message.to_json(), bytes)


def test_a_matrix_subscriber_s_handler_returns_the_reply() -> None:
    from faststream.redis import RedisBroker

    from envelopekit.faststream import matrix_subscriber

    async def answer(req: MxRequest[Any]) -> MxResponse[Any]:
        return req.reply({"ok": True})

    broker = RedisBroker()
    matrix_subscriber(broker, "a", answer)
    matrix_subscriber(broker, "b", lambda req: req.reply({"ok": True}))
    matrix_subscriber(broker, "c", lambda req: None)
    matrix_subscriber(broker, "d", lambda req: {"ok": True})  # type: ignore[arg-type,return-value]


def test_a_matrix_subscriber_without_request_model_types_the_plain_request() -> None:
    from faststream.redis import RedisBroker

    from envelopekit.faststream import MatrixHandler, matrix_subscriber

    # The handler's request was `Any`: a misspelt member, or a handler of replies, passed.
    def on_any(req: MxRequest[Any]) -> None: ...

    def on_plain(req: MxRequest) -> MxResponse[Any]:
        return req.reply({"op": req.op})

    def on_reply(res: MxResponse[Any]) -> None: ...

    broker = RedisBroker()
    matrix_subscriber(broker, "a", on_any)
    matrix_subscriber(broker, "b", on_plain)
    # A lambda's request is the plain one too (mypy's `assert_type` inside a lambda given to an
    # overloaded function sees its first, context-free pass: the misspelling shows it instead).
    matrix_subscriber(broker, "c", lambda req: req.reply({"op": req.op}))
    matrix_subscriber(broker, "d", lambda req: req.repyl({}))  # type: ignore[attr-defined]
    matrix_subscriber(broker, "e", on_reply)  # type: ignore[arg-type]
    plain: MatrixHandler = on_plain
    own: MatrixHandler[_Tenanted] = _on_tenanted
    wrong: MatrixHandler = on_reply  # type: ignore[assignment]
    assert all(callable(handler) for handler in (plain, own, wrong))


class _Tenanted(MxRequest[WriteArgs]):
    tenant: str


def _on_tenanted(req: _Tenanted) -> None:
    assert req.tenant


def test_a_matrix_subscriber_s_handler_gets_the_user_s_request_class() -> None:
    from faststream.redis import RedisBroker

    from envelopekit.faststream import matrix_subscriber

    async def answer(req: _Tenanted) -> MxResponse[Any]:
        return req.reply({"tenant": req.tenant})

    def other(req: MxRequest[Page]) -> None: ...

    broker = RedisBroker()
    matrix_subscriber(broker, "a", answer, request_model=_Tenanted)
    matrix_subscriber(
        broker, "b", lambda req: req.reply({"tenant": req.tenant}), request_model=_Tenanted
    )
    matrix_subscriber(broker, "d", other, request_model=_Tenanted)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        matrix_subscriber(broker, "f", lambda req: None, request_model=MxResponse)  # type: ignore[arg-type]
