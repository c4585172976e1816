"""Checked by mypy --strict (it is on mypy's path): typed construction catches wrong fields.

Each `# type: ignore[code]` marks a line that must be a type error; mypy's warn_unused_ignores
fails the type check if one of them stops being an error. pytest also runs the file, so every
statement here is real code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import pytest
from pydantic import BaseModel, ValidationError
from typing_extensions import assert_type

import envelopekit as ek
from envelopekit._compat import MISSING
from envelopekit.babelqueue import BabelEnvelope, BabelMeta, DeadLetter


class OrderCreated(BaseModel):
    order_id: int


def test_create_and_field_access_are_typed() -> None:
    # The payload type is the parameter's (unparametrised, the default's: see below).
    env = BabelEnvelope[dict[str, int]].create("urn:babel:orders:created", {"order_id": 1})
    assert_type(env, BabelEnvelope[dict[str, int]])
    assert_type(env.job, str)
    assert_type(env.trace_id, str)
    assert_type(env.attempts, int)
    assert_type(env.meta, BabelMeta)
    assert_type(env.meta.created_at, int)
    assert_type(env.data, dict[str, int])
    assert_type(env.to_json(), bytes)
    assert_type(env.retried(), BabelEnvelope[dict[str, int]])
    parsed = BabelEnvelope.model_validate_json(env.to_json())
    assert_type(parsed, BabelEnvelope[dict[str, Any]])
    assert_type(parsed.data, dict[str, Any])
    dlq = env.dead_lettered("failed")
    if dlq.dead_letter is not MISSING:
        assert_type(dlq.dead_letter, DeadLetter)
        assert_type(dlq.dead_letter.reason, str)


def test_typed_payload() -> None:
    env = BabelEnvelope[OrderCreated].create("urn:babel:orders:created", OrderCreated(order_id=1))
    assert_type(env, BabelEnvelope[OrderCreated])
    assert_type(env.data.order_id, int)
    parsed = BabelEnvelope[OrderCreated].model_validate_json(env.to_json())
    assert_type(parsed.data, OrderCreated)


def test_check_is_typed_per_spec() -> None:
    verdict = ek.check(b"{}", spec="babelqueue")
    assert_type(verdict, ek.Verdict[BabelEnvelope])
    assert_type(verdict.violations, list[ek.Violation])


def test_wrong_fields_are_type_errors() -> None:
    with pytest.raises(ValidationError):
        BabelMeta(
            id="f1e2d3c4-b5a6-4789-90ab-cdef01234567",
            queue="q",
            lang="python",
            schema_version="1",  # type: ignore[arg-type]
            created_at=0,
        )
    # Unknown meta keys are tolerated on the wire, but not in typed construction.
    meta = BabelMeta(
        id="f1e2d3c4-b5a6-4789-90ab-cdef01234567",
        queue="q",
        lang="python",
        schema_version=1,
        created_at=0,
        colour="red",  # type: ignore[call-arg]
    )
    assert meta.model_extra == {"colour": "red"}
    with pytest.raises(ValidationError):
        OrderCreated(order_id="one")  # type: ignore[arg-type]
    # Neither a mapping nor the model: what the typed envelope's `data` cannot be.
    with pytest.raises(ek.ProducerError):
        BabelEnvelope[OrderCreated].create("urn:babel:a:b", [1])  # type: ignore[call-overload]
    with pytest.raises(ek.ProducerError):
        BabelEnvelope[dict[str, int]].create("urn:babel:a:b", 42)  # type: ignore[call-overload]
    with pytest.raises(ek.ProducerError):
        BabelEnvelope.create("urn:babel:a:b", {}, queue=3)  # type: ignore[call-overload]
    plain = BabelEnvelope.create("urn:babel:a:b", {"n": 1})
    with pytest.raises(ek.ProducerError):
        plain.dead_lettered("later")  # type: ignore[arg-type]


class Orders(BabelEnvelope):
    """A service's own envelope class: `create` returns it."""


@pytest.mark.parametrize("data", [{}, {"order_id": 1, "note": "gift"}], ids=["empty", "mixed"])
def test_create_unparametrised_is_typed_by_the_default(data: dict[str, Any]) -> None:
    # No annotation in either checker: mypy once solved `DataT` from `data` (`{}` needed an
    # annotation, `{"order_id": 1}` was a `BabelEnvelope[dict[str, int]]`).
    empty = BabelEnvelope.create("urn:babel:orders:created", {})
    assert_type(empty, BabelEnvelope[dict[str, Any]])
    mixed = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1, "note": "gift"})
    assert_type(mixed, BabelEnvelope[dict[str, Any]])
    assert_type(mixed.data["order_id"], Any)
    given = BabelEnvelope.create("urn:babel:orders:created", data)
    assert_type(given, BabelEnvelope[dict[str, Any]])
    assert given.data == data
    assert_type(given.retried(), BabelEnvelope[dict[str, Any]])
    assert_type(given.redriven(), BabelEnvelope[dict[str, Any]])
    assert_type(given.dead_lettered("failed"), BabelEnvelope[dict[str, Any]])
    assert_type(given.child("urn:babel:orders:shipped", data), BabelEnvelope[dict[str, Any]])
    assert_type(Orders.create("urn:babel:orders:created", data), Orders)


_Data = TypeVar("_Data")


class Jobs(BabelEnvelope[_Data], Generic[_Data]):
    """A service's own envelope class, still generic in a data type of its own."""


def test_a_generic_subclass_is_typed_by_its_parameter() -> None:
    typed = Jobs[OrderCreated].create("urn:babel:orders:created", {"order_id": 1})
    assert_type(typed, Jobs[OrderCreated])
    assert_type(typed.data, OrderCreated)
    read = Jobs[OrderCreated].model_validate_json(typed.to_json())
    assert_type(read, Jobs[OrderCreated])
    assert read.data == OrderCreated(order_id=1)
    members: dict[str, Any] = json.loads(typed.to_json())
    built = Jobs[dict[str, int]](**members)
    assert_type(built, Jobs[dict[str, int]])
    assert built.data == {"order_id": 1}
    with pytest.raises(ek.ProducerError):
        Jobs[OrderCreated].create("urn:babel:a:b", [1])  # type: ignore[call-overload]


def test_create_takes_any_mapping() -> None:
    # A mapping is copied, or validated into a parametrised envelope's type, as at run time
    # (pyright took only a dict, and neither checker a mapping for a model).
    frozen = BabelEnvelope.create("urn:babel:orders:created", MappingProxyType({"order_id": 1}))
    assert_type(frozen, BabelEnvelope[dict[str, Any]])
    assert frozen.data == {"order_id": 1}
    typed = BabelEnvelope[OrderCreated].create("urn:babel:orders:created", {"order_id": 1})
    assert_type(typed, BabelEnvelope[OrderCreated])
    assert typed.data == OrderCreated(order_id=1)


class Paid(BabelEnvelope[OrderCreated]):
    """A service's own envelope class typed by a model: `create` returns it."""


def test_create_given_a_model_is_typed_by_it() -> None:
    # The plain class given a model raised ProducerError at run time, though mypy typed it
    # `BabelEnvelope[OrderCreated]`; pyright reported the call.
    urn, order = "urn:babel:orders:created", OrderCreated(order_id=1)
    plain = BabelEnvelope.create(urn, order)
    assert_type(plain, BabelEnvelope[OrderCreated])
    assert type(plain) is BabelEnvelope[OrderCreated]
    assert_type(plain.data.order_id, int)
    assert_type(BabelEnvelope[OrderCreated].create(urn, order), BabelEnvelope[OrderCreated])
    own = Paid.create(urn, order)
    assert_type(own, Paid)
    assert type(own) is Paid
    generic = Jobs[OrderCreated].create(urn, order)
    assert_type(generic, Jobs[OrderCreated])
    assert type(generic) is Jobs[OrderCreated]
    # An unparametrised subclass makes itself typed by the model, which the checkers read as
    # the plain class's (they see no type parameter on it).
    mine = Orders.create(urn, order)
    assert_type(mine, BabelEnvelope[OrderCreated])
    assert Orders in type(mine).__mro__ and mine.data == order
    # A model of another class than the class's own is refused, as at run time; a mapping
    # still makes the class called.
    other = Refund(refund_id="r-1")
    with pytest.raises(ek.ProducerError):
        BabelEnvelope[OrderCreated].create(urn, other)  # type: ignore[call-overload]
    with pytest.raises(ek.ProducerError):
        Paid.create(urn, other)  # type: ignore[call-overload]
    with pytest.raises(ek.ProducerError):
        Jobs[OrderCreated].create(urn, other)  # type: ignore[call-overload]
    assert_type(Paid.create(urn, {"order_id": 2}), Paid)
    assert_type(BabelEnvelope.create(urn, {"order_id": 2}), BabelEnvelope[dict[str, Any]])


class _Cipher:
    def encrypt(self, plaintext: bytes) -> str:
        return plaintext.decode()[::-1]

    def decrypt(self, ciphertext: str) -> bytes:
        return ciphertext[::-1].encode()


def test_protect_leaves_the_model_and_unprotect_returns_to_it() -> None:
    from typing import Annotated

    from envelopekit.babelqueue import Redriven, Sensitive, protect, redrive, unprotect

    class Contact(BaseModel):
        email: Annotated[str, Sensitive("email")]

    env = BabelEnvelope[Contact].create("urn:babel:crm:contact", Contact(email="a@b.c"))
    sealed = protect(env, _Cipher())
    # Ciphertext is not a Contact: the protected envelope is typed as a plain dict.
    assert_type(sealed, BabelEnvelope[dict[str, Any]])
    with pytest.raises(AttributeError):
        sealed.data.email  # type: ignore[attr-defined]  # noqa: B018
    opened = unprotect(sealed, _Cipher(), model=Contact)
    assert_type(opened, BabelEnvelope[Contact])
    assert_type(opened.data.email, str)
    assert opened.data == env.data
    assert_type(env.redriven(), BabelEnvelope[Contact])
    done = redrive(env.dead_lettered("failed"))
    assert isinstance(done, Redriven)
    assert_type(done.body(), bytes)


class Refund(BaseModel):
    refund_id: str


def test_router_on_checks_the_handler_against_the_model() -> None:
    from envelopekit.babelqueue import Router

    router = Router()

    @router.on("urn:babel:orders:created", OrderCreated)
    def order_created(env: BabelEnvelope[OrderCreated]) -> int:
        return env.data.order_id

    assert_type(order_created, Callable[[BabelEnvelope[OrderCreated]], int])

    @router.on("urn:babel:orders:any")
    def anything(env: BabelEnvelope) -> None:
        assert_type(env.data, dict[str, Any])

    def refunded(env: BabelEnvelope[Refund]) -> None: ...

    # The wrong `data` type for the model is a type error, as with `register`.
    router.on("urn:babel:orders:refunded", OrderCreated)(refunded)  # type: ignore[arg-type]
    router.register("urn:babel:orders:refunded.v2", refunded, OrderCreated)  # type: ignore[arg-type]
    router.on("urn:babel:orders:refunded.v3")(refunded)  # type: ignore[arg-type]
    assert router.urns()[-3:] == [
        "urn:babel:orders:refunded",
        "urn:babel:orders:refunded.v2",
        "urn:babel:orders:refunded.v3",
    ]


def test_a_typed_route_types_its_outcomes() -> None:
    from envelopekit.babelqueue import Done, Handle, Route, Router

    router = Router()
    orders = router.register("urn:babel:orders:created", _charge, OrderCreated)
    assert_type(orders, Route[OrderCreated])
    body = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 7}).to_json()
    decision = orders.route(body)
    if isinstance(decision, Handle):
        assert_type(decision.envelope, BabelEnvelope[OrderCreated])
        assert_type(decision.envelope.data.order_id, int)
    outcome = orders.dispatch(body)
    assert isinstance(outcome, Done)
    assert_type(outcome.envelope, BabelEnvelope[OrderCreated])
    assert outcome.envelope.data.order_id == 7
    # The router's own outcomes cannot know the URN statically.
    anything = router.dispatch(body)
    assert isinstance(anything, Done)
    assert_type(anything.envelope, BabelEnvelope[Any])
    plain = router.register("urn:babel:orders:noted", _note)
    assert_type(plain, Route[dict[str, Any]])


def _charge(env: BabelEnvelope[OrderCreated]) -> None:
    assert env.data.order_id > 0


def _note(env: BabelEnvelope) -> None:
    assert env.data


def test_the_subscriber_s_seen_store_is_typed() -> None:
    import redis.asyncio
    from faststream.redis import RedisBroker

    from envelopekit.babelqueue import AsyncRedisSeenStore, InMemorySeenStore, Router
    from envelopekit.faststream import babelqueue_subscriber

    client = redis.asyncio.Redis()
    broker, router = RedisBroker(), Router()
    babelqueue_subscriber(broker, "a", router, seen=InMemorySeenStore())
    babelqueue_subscriber(broker, "b", router, seen=AsyncRedisSeenStore(client, lease=30))
    with pytest.raises(TypeError):
        babelqueue_subscriber(broker, "c", router, seen=client)  # type: ignore[arg-type]


class _TenantOrders(BabelEnvelope[OrderCreated]):
    tenant: str

    def label(self) -> str:
        return f"{self.tenant}/{self.data.order_id}"


def test_a_route_s_handler_gets_the_user_s_envelope_class() -> None:
    from envelopekit.babelqueue import Router

    def charge(env: _TenantOrders) -> None:
        assert env.tenant

    router = Router()
    router.register("urn:babel:orders:created", charge, _TenantOrders)
    router.register("urn:babel:orders:created.v2", _charge, BabelEnvelope[OrderCreated])

    @router.on("urn:babel:orders:created.v3", _TenantOrders)
    def charged(env: _TenantOrders) -> None:
        assert_type(env.tenant, str)

    assert_type(charged, Callable[[_TenantOrders], None])
    router.on("urn:babel:orders:created.v4", _TenantOrders)(_charge)
    router.register("urn:babel:orders:created.v5", charge, OrderCreated)  # type: ignore[arg-type]
    router.on("urn:babel:orders:created.v6", OrderCreated)(charge)  # type: ignore[arg-type]
    router.on("urn:babel:orders:created.v7")(charge)  # type: ignore[arg-type]


def test_a_route_of_an_envelope_class_types_its_outcomes_by_the_class() -> None:
    from envelopekit.babelqueue import (
        DeadLetterDecision,
        Decision,
        Delete,
        Done,
        Handle,
        Outcome,
        Reject,
        Release,
        Retry,
        Route,
        Router,
    )

    def charge(env: _TenantOrders) -> None:
        assert env.tenant == "acme"

    router = Router()
    # It was a `Route[Any]`: its Handle and Done held a `BabelEnvelope[Any]`.
    orders = router.register("urn:babel:orders:created", charge, _TenantOrders)
    assert_type(orders, Route[Any, _TenantOrders])
    sent = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 7}).to_json()
    body = json.dumps({**json.loads(sent), "tenant": "acme"})
    decision = orders.route(body)
    assert isinstance(decision, Handle)
    assert_type(decision.envelope, _TenantOrders)
    assert_type(decision.handler, Callable[[_TenantOrders], object])
    outcome = orders.dispatch(body)
    assert isinstance(outcome, Done)
    assert_type(outcome.envelope, _TenantOrders)
    assert_type(outcome.envelope.tenant, str)
    assert_type(outcome.envelope.data, OrderCreated)
    assert outcome.envelope.label() == "acme/7"
    with pytest.raises(AttributeError):
        _ = outcome.envelope.colour  # type: ignore[attr-defined]
    # A route's outcomes are still the router's.
    decided: Decision = orders.route(body)
    settled: Outcome = orders.dispatch(body)
    assert isinstance(decided, Handle) and isinstance(settled, Done)
    parametrised = router.register(
        "urn:babel:orders:created.v2", _charge, BabelEnvelope[OrderCreated]
    )
    assert_type(parametrised, Route[Any, BabelEnvelope[OrderCreated]])
    assert_type(
        parametrised.dispatch(sent),
        Done[Any, BabelEnvelope[OrderCreated]]
        | Delete
        | Release
        | Retry
        | DeadLetterDecision
        | Reject,
    )
    # A route of a `data` model keeps its one-parameter spelling.
    by_model = router.register("urn:babel:orders:created.v3", _charge, OrderCreated)
    assert_type(by_model, Route[OrderCreated])
    assert_type(by_model, Route[OrderCreated, BabelEnvelope[OrderCreated]])
    done: Done[OrderCreated] = Done(
        BabelEnvelope[OrderCreated].create("urn:babel:x:y", OrderCreated(order_id=1))
    )
    assert_type(done.envelope, BabelEnvelope[OrderCreated])
