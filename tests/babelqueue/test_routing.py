"""Routing by URN: registry, typed models, the four unknown-URN strategies, settlement."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator
from typing_extensions import TypedDict

from envelopekit import MISSING, rules
from envelopekit._check import check_as
from envelopekit.babelqueue import (
    BabelEnvelope,
    DeadLetterDecision,
    Delete,
    Done,
    Fail,
    Handle,
    InvalidEnvelopeError,
    InvalidPayloadError,
    PayloadSchemas,
    Reject,
    Release,
    Retry,
    Router,
    SchemaRegistryError,
    UnknownUrnError,
)
from tests.conftest import DATA

FIXTURES = DATA / "babelqueue" / "fixtures"
ORDER = (FIXTURES / "order-created.json").read_bytes()
URN = "urn:babel:orders:created"


class OrderCreated(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: int


def unknown(**overrides: Any) -> BabelEnvelope:
    env = BabelEnvelope.create("urn:babel:nobody:listens", {"k": 1}, queue="orders")
    return env.model_copy(update=overrides) if overrides else env


def test_typed_model_routing() -> None:
    router = Router()
    seen: list[int] = []

    @router.on(URN, OrderCreated)
    def order_created(env: BabelEnvelope[OrderCreated]) -> None:
        seen.append(env.data.order_id)

    decision = router.route(ORDER)
    assert isinstance(decision, Handle)
    assert isinstance(decision.envelope.data, OrderCreated)
    assert decision.envelope.trace_id == "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b"
    decision.run()
    assert seen == [1042]


def test_data_model_is_the_registered_model() -> None:
    router = Router()
    router.register(URN, lambda env: None, OrderCreated)
    router.register("urn:babel:audit:ping", lambda env: None)
    router.register("urn:babel:audit:counts", lambda env: None, dict[str, int])
    assert router.data_model(URN) is OrderCreated
    assert router.data_model("urn:babel:audit:ping") is None
    assert router.data_model("urn:babel:audit:counts") == dict[str, int]
    assert router.data_model("urn:babel:nobody:listens") is None


def test_untyped_routing_gets_the_plain_object() -> None:
    router = Router()
    seen: list[dict[str, Any]] = []
    router.register(URN, lambda env: seen.append(env.data))
    assert isinstance(router.dispatch(ORDER), Done)
    assert seen == [{"order_id": 1042}]


def test_routing_accepts_the_urn_alias() -> None:
    router = Router()
    router.register("urn:babel:orders:created", lambda env: None)
    raw = (FIXTURES / "urn-alias.json").read_bytes()
    decision = router.route(raw)
    assert isinstance(decision, Handle)


def test_data_that_does_not_fit_the_model_fails_with_violations() -> None:
    router = Router()
    router.register(URN, lambda env: None, OrderCreated)
    bad = BabelEnvelope.create(URN, {"order_id": "x"}, queue="orders")
    decision = router.route(bad)
    assert isinstance(decision, Fail)
    assert decision.rule == rules.DATA_INVALID
    assert decision.reason == "failed"
    assert isinstance(decision.error, InvalidPayloadError)
    assert [v.pointer for v in decision.error.violations] == ["/data/order_id"]


class TenantOrders(BabelEnvelope[OrderCreated]):
    """A user's envelope class: a member of its own and a validator of it."""

    tenant: str

    @field_validator("tenant")
    @classmethod
    def _known(cls, tenant: str) -> str:
        if tenant == "nobody":
            raise ValueError("unknown tenant")
        return tenant


def _of_tenant(data: dict[str, Any], **members: Any) -> bytes:
    sent = orjson.loads(BabelEnvelope.create(URN, data, queue="orders").to_json())
    return orjson.dumps({**sent, **members})


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        (
            _of_tenant({"order_id": 7}),
            [("message-envelope.required", "/tenant", "Field required")],
        ),
        (
            _of_tenant({"order_id": 7}, tenant="nobody"),
            [("message-envelope.invalid", "/tenant", "Value error, unknown tenant")],
        ),
        (
            _of_tenant({"order_id": "x"}),
            [
                (
                    "message-envelope.type",
                    "/data/order_id",
                    "Input should be a valid integer, unable to parse string as an integer",
                ),
                ("message-envelope.required", "/tenant", "Field required"),
            ],
        ),
    ],
    ids=["member-missing", "validator", "data-and-member"],
)
def test_an_envelope_its_route_class_refuses_is_dead_lettered_as_poison_naming_the_class(
    body: bytes, refused: list[tuple[str, str, str]]
) -> None:
    # It was a `data.invalid` failure, retried, then dead-lettered as `failed` saying "data for
    # ... does not match its URN schema: /tenant: ...", though `/tenant` is no member of `data`.
    router = Router(max_attempts=3)
    ran: list[object] = []
    router.register(URN, ran.append, TenantOrders)
    decision = router.route(body, queue="orders")
    assert isinstance(decision, DeadLetterDecision)  # at once: no retry can change the verdict
    assert (decision.rule, decision.queue) == (rules.ENVELOPE_REFUSED, "orders.dlq")
    letter = decision.envelope.dead_letter
    assert letter is not MISSING
    assert (letter.reason, letter.exception, letter.attempts) == (
        "poison",
        "InvalidEnvelopeError",
        0,
    )
    listed = "; ".join(f"{rule} at {at}: {said}" for rule, at, said in refused)
    assert letter.error == f"the envelope for {URN!r} is refused by TenantOrders: {listed}"
    # The message as received, its own members included, with its dead_letter block.
    written = orjson.loads(decision.envelope.to_json())
    assert {k: v for k, v in written.items() if k != "dead_letter"} == orjson.loads(body)
    outcome = router.dispatch(body, queue="orders")
    assert isinstance(outcome, DeadLetterDecision) and outcome.rule == rules.ENVELOPE_REFUSED
    assert not ran
    # The same findings `check_as` reports for the class, which SOM and Matrix quarantine with.
    verdict = check_as(body, "babelqueue", TenantOrders)
    assert [(v.rule, v.pointer, v.message) for v in verdict.violations] == refused


def test_data_its_route_class_refuses_is_invalid_data_retried_then_failed() -> None:
    # The class's own members are fine, its `data` model refuses `data`: the spec's invalid
    # data (babelqueue.md section 10), retried and then dead-lettered as `failed`.
    router = Router(max_attempts=2)
    router.register(URN, lambda env: None, TenantOrders)
    decision = router.route(_of_tenant({"order_id": "x"}, tenant="acme"), queue="orders")
    assert isinstance(decision, Fail)
    assert (decision.rule, decision.reason) == (rules.DATA_INVALID, "failed")
    assert isinstance(decision.error, InvalidPayloadError)
    assert [(v.rule, v.pointer) for v in decision.error.violations] == [
        ("message-envelope.type", "/data/order_id")
    ]
    retry = decision.settle()
    assert isinstance(retry, Retry)
    dead = router.route(retry.envelope.to_json(), queue="orders")
    assert isinstance(dead, Fail)
    settled = dead.settle()
    assert isinstance(settled, DeadLetterDecision) and settled.rule == rules.DATA_INVALID
    assert settled.envelope.dead_letter is not MISSING
    assert settled.envelope.dead_letter.reason == "failed"


def test_the_envelope_refusal_is_an_error_of_its_own() -> None:
    found = check_as(_of_tenant({"order_id": 7}), "babelqueue", TenantOrders).violations
    error = InvalidEnvelopeError(URN, "TenantOrders", found)
    assert isinstance(error, ValueError) and not isinstance(error, InvalidPayloadError)
    assert (error.urn, error.model, error.violations) == (URN, "TenantOrders", found)


def test_payload_schemas_are_checked_before_the_handler() -> None:
    schemas = PayloadSchemas.from_registry(DATA / "babelqueue/registry/examples/registry.json")
    router = Router(schemas=schemas)
    ran: list[object] = []
    router.register(URN, ran.append)
    # The registry schema requires `amount`, which the fixture does not carry.
    decision = router.route(ORDER)
    assert isinstance(decision, Fail)
    assert isinstance(decision.error, InvalidPayloadError)
    assert [(v.rule, v.pointer) for v in decision.error.violations] == [
        ("payload-schema.required", "/data/amount")
    ]
    ok = BabelEnvelope.create(URN, {"order_id": 7, "amount": 9.5}, queue="orders")
    assert isinstance(router.dispatch(ok), Done)
    assert len(ran) == 1


class _UnreachableRegistry:
    def schema_for(self, urn: str) -> Any:
        raise ConnectionError("schema registry unreachable")


class _ShapelessRegistry:
    def schema_for(self, urn: str) -> Any:
        return ["not", "a", "schema"]  # check_payload refuses it


@pytest.mark.parametrize(
    ("registry", "error"),
    [(_UnreachableRegistry(), ConnectionError), (_ShapelessRegistry(), SchemaRegistryError)],
    ids=["provider-raises", "schema-unusable"],
)
def test_a_payload_schema_that_raises_is_retried_then_dead_lettered(
    registry: Any, error: type[Exception]
) -> None:
    router = Router(schemas=registry, max_attempts=2)
    ran: list[object] = []
    router.register(URN, ran.append)
    decision = router.route(ORDER, queue="orders")
    assert isinstance(decision, Fail) and isinstance(decision.error, error)
    assert decision.rule == rules.PAYLOAD_SCHEMA_FAILED and decision.reason == "failed"
    retry = router.dispatch(ORDER, queue="orders")
    assert isinstance(retry, Retry) and retry.rule == rules.PAYLOAD_SCHEMA_FAILED
    assert retry.envelope.attempts == 1
    dead = router.dispatch(retry.envelope, queue="orders")
    assert isinstance(dead, DeadLetterDecision) and dead.rule == rules.PAYLOAD_SCHEMA_FAILED
    letter = dead.envelope.to_wire()["dead_letter"]
    assert letter["reason"] == "failed" and letter["exception"] == error.__name__
    assert ran == []


def test_strategy_fail_retries_then_dead_letters_as_unknown_urn() -> None:
    router = Router("fail", max_attempts=3)
    env = unknown()
    decision = router.route(env, queue="orders-q")
    assert isinstance(decision, Fail)
    assert isinstance(decision.error, UnknownUrnError)
    assert decision.rule == rules.URN_UNKNOWN
    steps: list[Retry | DeadLetterDecision] = []
    current = env
    while True:
        step = router.dispatch(current, queue="orders-q")
        assert isinstance(step, (Retry, DeadLetterDecision))
        steps.append(step)
        if isinstance(step, DeadLetterDecision):
            break
        current = step.envelope
    assert [s.envelope.attempts for s in steps] == [1, 2, 3]
    final = steps[-1]
    assert isinstance(final, DeadLetterDecision)
    assert final.queue == "orders-q.dlq"
    block = final.envelope.to_wire()["dead_letter"]
    assert block["reason"] == "unknown_urn"
    assert block["attempts"] == 3
    assert block["original_queue"] == "orders-q"
    assert block["exception"] == "UnknownUrnError"


def test_strategy_delete() -> None:
    decision = Router("delete").route(unknown())
    assert isinstance(decision, Delete)
    assert decision.rule == rules.URN_UNKNOWN


def test_strategy_release_keeps_the_message_unchanged() -> None:
    env = unknown(attempts=2)
    decision = Router("release").route(env)
    assert isinstance(decision, Release)
    assert decision.envelope.to_json() == env.to_json()  # attempts not incremented


@pytest.mark.parametrize(("delay", "expected"), [(None, 0.0), (0, 0.0), (2, 2.0), (0.5, 0.5)])
def test_strategy_release_carries_the_release_delay(delay: float | None, expected: float) -> None:
    router = (
        Router("release") if delay is None else Router("release", unknown_urn_release_delay=delay)
    )
    decision = router.route(unknown())
    assert isinstance(decision, Release) and decision.delay == expected


@pytest.mark.parametrize(
    ("delay", "error"),
    [
        (-1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        ("1", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
    ids=["negative", "nan", "infinite", "text", "bool", "none"],
)
def test_a_release_delay_that_is_not_seconds_is_refused(delay: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="unknown_urn_release_delay"):
        Router("release", unknown_urn_release_delay=delay)


def test_strategy_dead_letter_builds_the_dlq_envelope() -> None:
    env = unknown(attempts=1)
    decision = Router("dead_letter").route(env.to_json(), queue="orders")
    assert isinstance(decision, DeadLetterDecision)
    assert decision.queue == "orders.dlq"
    dlq = decision.envelope
    wire = dlq.to_wire()
    assert wire["dead_letter"]["reason"] == "unknown_urn"
    assert wire["dead_letter"]["original_queue"] == "orders"
    assert wire["dead_letter"]["attempts"] == 1
    assert "No handler is mapped" in wire["dead_letter"]["error"]
    # Identity preserved: job, trace_id, data, meta untouched.
    assert {k: wire[k] for k in ("job", "trace_id", "data", "meta", "attempts")} == {
        k: env.to_wire()[k] for k in ("job", "trace_id", "data", "meta", "attempts")
    }
    again = BabelEnvelope.model_validate_json(dlq.to_json())
    assert again.to_json() == dlq.to_json()


def test_dead_letter_queue_defaults_to_meta_queue() -> None:
    decision = Router("dead_letter", dlq_suffix="-dead").route(unknown())
    assert isinstance(decision, DeadLetterDecision)
    assert decision.queue == "orders-dead"


def test_handler_failure_is_retried_then_dead_lettered_as_failed() -> None:
    router = Router(max_attempts=2)

    def explode(env: BabelEnvelope) -> None:
        raise RuntimeError("gateway timeout")

    router.register(URN, explode)
    first = router.dispatch(ORDER, queue="orders")
    assert isinstance(first, Retry)
    assert first.rule == rules.HANDLER_FAILED
    assert first.envelope.attempts == 1
    assert first.envelope.meta.id == "f1e2d3c4-b5a6-4789-90ab-cdef01234567"
    second = router.dispatch(first.envelope.to_json(), queue="orders")
    assert isinstance(second, DeadLetterDecision)
    block = second.envelope.to_wire()["dead_letter"]
    assert block["reason"] == "failed"
    assert block["error"] == "gateway timeout"
    assert block["exception"] == "RuntimeError"
    assert block["attempts"] == 2


def test_an_invalid_envelope_is_rejected_with_its_violations() -> None:
    raw = (FIXTURES / "invalid-unknown-schema-version.json").read_bytes()
    decision = Router().route(raw)
    assert isinstance(decision, Reject)
    assert decision.raw == raw
    assert [v.rule for v in decision.violations] == [rules.SCHEMA_VERSION_UNSUPPORTED]
    missing = Router().route((FIXTURES / "invalid-missing-urn.json").read_bytes())
    assert isinstance(missing, Reject)
    assert [v.rule for v in missing.violations] == [rules.URN_MISSING]


def test_decisions_match_exhaustively() -> None:
    router = Router("release")
    router.register(URN, lambda env: None)
    names = []
    for message in (ORDER, unknown().to_json(), b"[]"):
        decision = router.route(message)
        match decision:
            case Handle():
                names.append("handle")
            case Delete() | Release():
                names.append("leave")
            case DeadLetterDecision() | Fail():
                names.append("fail")
            case Reject():
                names.append("reject")
    assert names == ["handle", "leave", "reject"]


def test_the_urn_lint_never_blocks_routing() -> None:
    router = Router()
    router.register("Orders.Created", lambda env: None)
    assert [v.rule for v in router.lint()] == [rules.URN_CONVENTION]
    env: BabelEnvelope = BabelEnvelope.create("Orders.Created", {})
    assert isinstance(router.dispatch(env), Done)


def test_registration_errors() -> None:
    router = Router()
    router.register(URN, lambda env: None)
    with pytest.raises(ValueError, match="already"):
        router.register(URN, lambda env: None)
    with pytest.raises(ValueError, match="blank"):
        router.register("  ", lambda env: None)
    with pytest.raises(ValueError, match="unknown_urn"):
        Router("ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts"):
        Router(max_attempts=0)
    assert router.urns() == [URN] and router.handles(URN)


class _Tree(BaseModel):
    children: list[_Tree] = []


class _Opaque:
    """A type pydantic takes as it is, and can write no JSON Schema of."""


class _Holding(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    order_id: int
    handle: _Opaque | None = None


@dataclasses.dataclass
class _Point:
    x: int


class _Line(TypedDict):
    start: int


class _Created(BaseModel):
    kind: Literal["created"]


class _Cancelled(BaseModel):
    kind: Literal["cancelled"]


# Every message's `data` is an object: a model of other values fails every one of them.
NOT_OBJECT_MODELS: list[tuple[str, Any, str]] = [
    ("integer", int, "type 'integer'"),
    ("string", str, "type 'string'"),
    ("array", list[int], "type 'array'"),
    ("array-root-model", RootModel[list[int]], "type 'array'"),
    ("model-or-null", OrderCreated | None, "anyOf: type 'null'"),
    ("any", Any, "any"),
]


@pytest.mark.parametrize(
    ("model", "said"),
    [case[1:] for case in NOT_OBJECT_MODELS],
    ids=[case[0] for case in NOT_OBJECT_MODELS],
)
@pytest.mark.parametrize("how", ["register", "on"])
def test_a_model_of_no_json_object_is_refused_when_registered(
    model: Any, said: str, how: str
) -> None:
    router = Router()
    with pytest.raises(ValueError, match="takes values that are not JSON objects") as raised:
        if how == "register":
            router.register(URN, lambda env: None, model)
        else:
            router.on(URN, model)(lambda env: None)
    assert f"(for {URN!r})" in str(raised.value) and f"({said})" in str(raised.value)
    assert not router.handles(URN)


OBJECT_MODELS: list[tuple[str, Any]] = [
    ("model", OrderCreated),
    ("recursive-model", _Tree),
    ("model-holding-an-arbitrary-type", _Holding),
    ("dataclass", _Point),
    ("typed-dict", _Line),
    ("dict", dict[str, int]),
    ("object-root-model", RootModel[dict[str, int]]),
    # A union whose every branch takes objects alone, told apart by a tag or not.
    ("models", OrderCreated | _Tree),
    ("tagged-models", Annotated[_Created | _Cancelled, Field(discriminator="kind")]),
]


@pytest.mark.parametrize(
    "model", [case[1] for case in OBJECT_MODELS], ids=[case[0] for case in OBJECT_MODELS]
)
def test_a_model_of_json_objects_is_registered(model: Any) -> None:
    router = Router()
    router.register(URN, lambda env: None, model)
    assert router.data_model(URN) == model


def test_a_registered_urn_is_stripped_as_create_strips_it() -> None:
    router = Router()
    seen: list[str] = []
    router.register(f" \t{URN}\n", lambda env: seen.append(env.job))
    assert router.urns() == [URN] and router.handles(f" {URN} ")
    env: BabelEnvelope = BabelEnvelope.create(f"  {URN}  ", {})
    assert isinstance(router.dispatch(env), Done) and seen == [URN]
    with pytest.raises(ValueError, match="already"):
        router.register(f"{URN} ", lambda env: None)
    # Only ASCII whitespace is blank: U+3000 is a character of the URN, as in the spec.
    router.register("\u3000", lambda env: None)
    assert router.handles("\u3000") and not router.handles("")


def _received_as(job: str) -> bytes:
    """The example order with ``job`` as received (a producer that does not strip it)."""
    return orjson.dumps({**orjson.loads(ORDER), "job": job})


_SPACED = [" ", "\t", "\n ", "\r\x0b\x0c"]


@pytest.mark.parametrize(
    ("registered", "received"),
    [
        *[(URN, f"{space}{URN}{space}") for space in _SPACED],
        *[(f"{space}{URN}", URN) for space in _SPACED],
        *[(f"{URN}{space}", f"{space}{URN}") for space in _SPACED],
    ],
    ids=lambda urn: repr(urn),
)
def test_a_received_urn_is_routed_as_a_registered_one_is_stripped(
    registered: str, received: str
) -> None:
    # register strips the URN; routing compares the received one stripped as well, as the
    # SDKs that trim it resolve it (babelqueue.md 1.1): else a handler registered with the
    # URN a message carries did not get it.
    router = Router(schemas=PayloadSchemas({URN: {"type": "object", "required": ["order_id"]}}))
    seen: list[str] = []
    route = router.register(registered, lambda env: seen.append(env.job), OrderCreated)
    body = _received_as(received)
    assert router.handles(received)
    for decision in (router.route(body), route.route(body)):
        assert isinstance(decision, Handle), decision
        decision.run()
    assert isinstance(router.dispatch(BabelEnvelope.model_validate_json(body)), Done)
    assert seen == [received] * 3  # the message as received: its job untouched
    # The URN's payload schema applies to it as well.
    refused = router.route(_received_as(received).replace(b'"order_id"', b'"other_id"'))
    assert isinstance(refused, Fail | DeadLetterDecision)


@pytest.mark.parametrize(
    "received",
    [f"\u3000{URN}", f"{URN}\u00a0", f"{URN}x", f" \u3000{URN}", f"{URN}\x1c\t", f"\x85 {URN}"],
)
def test_only_ascii_whitespace_is_stripped_from_a_received_urn(received: str) -> None:
    router = Router()
    router.register(URN, lambda env: None)
    assert not router.handles(received)
    assert isinstance(router.route(_received_as(received)), Fail)


def test_reconcile_runs_before_routing_and_reaches_typed_handlers() -> None:
    from envelopekit.babelqueue import sqs

    router = Router(max_attempts=5)
    seen: list[int] = []

    def order_created(env: BabelEnvelope[OrderCreated]) -> None:
        seen.append(env.attempts)
        raise RuntimeError("down")

    router.register(URN, order_created, OrderCreated)
    outcome = router.dispatch(ORDER, reconcile=lambda env: sqs.reconcile(env, "4"))
    assert seen == [3]
    assert isinstance(outcome, Retry) and outcome.envelope.attempts == 4


class Priced(BaseModel):
    order_id: int
    amount: float = 0.0


def test_a_typed_route_retries_and_dead_letters_the_message_as_received() -> None:
    """The model's reading of `data` (float `amount`, dropped `note`) is never republished."""

    def explode(env: BabelEnvelope[Priced]) -> None:
        assert env.data == Priced(order_id=7, amount=5.0)
        raise RuntimeError("downstream is down")

    router = Router(max_attempts=2)
    router.register(URN, explode, Priced)
    sent = BabelEnvelope.create(URN, {"order_id": 7, "amount": 5, "note": "keep"}, queue="orders")
    retry = router.dispatch(sent.to_json(), queue="orders")
    assert isinstance(retry, Retry)
    assert retry.envelope.to_json() == sent.retried().to_json()
    dead = router.dispatch(retry.envelope.to_json(), queue="orders")
    assert isinstance(dead, DeadLetterDecision)
    wire = dead.envelope.to_wire()
    assert wire["data"] == {"order_id": 7, "amount": 5, "note": "keep"}
    assert type(wire["data"]["amount"]) is int
    assert dead.envelope.to_json().startswith(sent.retried().retried().to_json()[:-1])


# A Node hop's message (babelqueue.md Decisions §6): int64 max rounded up, 1e20 as an integer.
NODE_HOP = (
    orjson.dumps(orjson.loads(ORDER))
    .replace(b'"order_id":1042', b'"order_id":1042,"id":9223372036854776000,"total":1e20')
    .replace(b"1e20", b"100000000000000000000")
    .replace(b'"attempts":0', b'"attempts":1')
)


class WideOrder(BaseModel):
    order_id: int
    id: int
    total: int


@pytest.mark.parametrize("model", [None, WideOrder], ids=["untyped", "typed"])
def test_retry_and_dead_letter_reemit_integers_beyond_int64_exactly(
    model: type[BaseModel] | None,
) -> None:
    seen: list[BabelEnvelope[Any]] = []

    def explode(env: BabelEnvelope[Any]) -> None:
        seen.append(env)
        raise RuntimeError("downstream is down")

    router = Router(max_attempts=3)
    if model is None:
        router.register(URN, explode)
    else:
        router.register(URN, explode, model)
    assert b'"attempts":1' in NODE_HOP
    retry = router.dispatch(NODE_HOP, queue="orders")
    assert isinstance(retry, Retry)
    assert [w.rule for w in seen[0].envelope_warnings()] == [rules.NUMBER_BEYOND_INT64] * 2
    assert retry.envelope.to_json() == NODE_HOP.replace(b'"attempts":1', b'"attempts":2')
    dead = router.dispatch(retry.envelope.to_json(), queue="orders")
    assert isinstance(dead, DeadLetterDecision)
    dlq = dead.envelope.to_json()
    assert dlq.startswith(NODE_HOP.replace(b'"attempts":1}', b'"attempts":3,'))
    assert b'"id":9223372036854776000,"total":100000000000000000000}' in dlq
    assert BabelEnvelope.model_validate_json(dlq).to_json() == dlq


def test_a_typed_route_dispatches_its_urn_with_the_typed_envelope() -> None:
    router = Router(unknown_urn="delete")
    seen: list[int] = []
    other: list[object] = []
    orders = router.register(URN, lambda env: seen.append(env.data.order_id), OrderCreated)
    router.register("urn:babel:nobody:listens", other.append)
    assert (orders.urn, orders.model) == (URN, OrderCreated)
    outcome = orders.dispatch(ORDER)
    assert isinstance(outcome, Done)
    assert type(outcome.envelope) is BabelEnvelope[OrderCreated]
    assert outcome.envelope.data == OrderCreated(order_id=1042)
    assert seen == [1042]
    decision = orders.route(ORDER)
    assert isinstance(decision, Handle)
    assert decision.envelope == outcome.envelope
    # Another URN is not this route's: the router's unknown-URN strategy, its handler not run.
    assert isinstance(router.dispatch(unknown()), Done)
    assert len(other) == 1
    refused = orders.dispatch(unknown())
    assert isinstance(refused, Delete)
    assert refused.rule == rules.URN_UNKNOWN
    assert len(other) == 1
    # Failures settle as the router settles them.
    failing = Router().register(URN, _raise, OrderCreated)
    retried = failing.dispatch(ORDER)
    assert isinstance(retried, Retry)
    assert retried.envelope.attempts == 1
    assert orders.dispatch(b"{}") == router.dispatch(b"{}")


def _raise(env: BabelEnvelope[OrderCreated]) -> None:
    raise RuntimeError(f"order {env.data.order_id}")


def test_the_decorator_returns_the_handler_itself() -> None:
    router = Router()

    def order_created(env: BabelEnvelope[OrderCreated]) -> int:
        return env.data.order_id

    assert router.on(URN, OrderCreated)(order_created) is order_created
    decision = router.route(ORDER)
    assert isinstance(decision, Handle)
    assert decision.run() == 1042


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        (
            {"schemas": "registry.json"},
            r"^schemas must be a SchemaProvider .*, not 'registry\.json'$",
        ),
        ({"schemas": PayloadSchemas}, r"^schemas must be a SchemaProvider .*, not <class "),
        ({"cipher": "a-key"}, r"^cipher must be a Cipher .*, not 'a-key'$"),
    ],
    ids=["schemas-a-path", "schemas-the-class", "cipher-a-key"],
)
def test_a_router_refuses_what_is_no_schema_provider_or_cipher_when_built(
    keywords: dict[str, Any], message: str
) -> None:
    # Not at each message, which would be retried, then dead-lettered (payload_schema.failed).
    with pytest.raises(TypeError, match=message):
        Router(**keywords)
