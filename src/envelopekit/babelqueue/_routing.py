"""Routing by URN: a registry of handlers, the unknown-URN strategy, and explicit decisions.

Nothing here talks to a broker. :meth:`Router.route` turns one received message into a
:data:`Decision`; :meth:`Router.dispatch` also runs the handler and settles a failure into an
:data:`Outcome`. The worker acts on either with an exhaustive ``match``:

```python
from envelopekit.babelqueue import (
    BabelEnvelope, DeadLetterDecision, Delete, Done, Reject, Release, Retry, Router,
)

router = Router(unknown_urn="dead_letter")
router.on("urn:babel:orders:created")(lambda env: None)
sent = []
publish, ack, release = (lambda queue, body: sent.append(queue)), (lambda: None), (lambda: None)
for body in (BabelEnvelope.create("urn:babel:orders:created", {}).to_json(), b"{not json"):
    match router.dispatch(body, queue="orders"):
        case Done() | Delete():
            ack()
        case Release():
            release()                                  # back on the queue, unchanged
        case Retry(envelope=env):
            publish("orders", env.to_json()); ack()    # attempts + 1
        case DeadLetterDecision(envelope=env, queue=dlq):
            publish(dlq, env.to_json()); ack()
        case Reject(raw=raw):
            publish("orders.dlq", raw); ack()          # not a v1 envelope: quarantined as is
assert sent == ["orders.dlq"]
```
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, NamedTuple, cast, get_args, overload

from pydantic import ValidationError
from typing_extensions import TypeVar

from .. import rules
from .._arguments import implementing, optional_argument
from .._check import check
from .._errors import InvalidEnvelopeError, UnknownUrnError
from .._json import INT64_MAX
from .._settings import Settings, get_settings
from .._violations import Violation, printable, violation, violations
from ._data_model import require_object_data
from ._dead_letter import ERROR_TEXT_CHARS, DeadLetterReason, cut_text
from ._envelope import BabelEnvelope, error_text
from ._idempotency import SeenStoreUnavailable
from ._payload_schema import InvalidPayloadError, SchemaProvider, check_payload
from ._replay import replay_scope
from ._sensitive import Cipher, DecryptError, sensitive_paths, sensitive_schema, unprotect
from ._urn import is_blank, lint_urn, routed_urn

__all__ = [
    "UNKNOWN_URN_STRATEGIES",
    "DeadLetterDecision",
    "Decision",
    "Delete",
    "Done",
    "Fail",
    "Handle",
    "InvalidEnvelopeError",
    "Outcome",
    "Reconcile",
    "Reject",
    "Release",
    "Retry",
    "Route",
    "Router",
    "UnknownUrnError",
    "UnknownUrnStrategy",
]

M = TypeVar("M")
R = TypeVar("R")
# A route's own envelope class: `BabelEnvelope[Model]`, or a user's subclass of one.
E = TypeVar("E", bound="BabelEnvelope[Any]")
# The `data` type of a handled envelope: `Any` where the route is not known statically.
D = TypeVar("D", default=Any)
# The handled envelope's class: `BabelEnvelope[D]`, or the envelope class a route was given.
# Covariant, so that a route's outcomes are the router's `Decision` and `Outcome` too.
H = TypeVar("H", bound="BabelEnvelope[Any]", default="BabelEnvelope[D]", covariant=True)
# A route's envelope class: `BabelEnvelope[M]`, or the envelope class it was given.
RE = TypeVar("RE", bound="BabelEnvelope[Any]", default="BabelEnvelope[M]")

UnknownUrnStrategy = Literal["fail", "delete", "release", "dead_letter"]
"""What a consumer does with a URN no handler is mapped to (the same four in every SDK):

* ``fail``: treat it as a failed delivery: retried, then dead-lettered as ``unknown_urn``;
* ``delete``: ack and drop it;
* ``release``: put it back unchanged for another consumer (``attempts`` not incremented);
* ``dead_letter``: dead-letter it now with reason ``unknown_urn``.
"""

UNKNOWN_URN_STRATEGIES: Final[frozenset[str]] = frozenset(get_args(UnknownUrnStrategy))

Reconcile = Callable[[BabelEnvelope[Any]], BabelEnvelope[Any]]
"""A step between decoding and routing, such as ``lambda env: sqs.reconcile(env, count)``."""

DEFAULT_MAX_ATTEMPTS: Final = 3
DEFAULT_DLQ_SUFFIX: Final = ".dlq"
# Characters of room for the marker `cut_text` adds: "... [N more characters cut]", N of at
# most 20 digits.
_MARKER_ROOM: Final = 64


# --- decisions ---------------------------------------------------------------------------------


class _Settlement(NamedTuple):
    """Where a failure of this delivery goes: retried below ``max_attempts``, else the DLQ.

    A tuple: one is made for every message routed (a frozen dataclass of five fields costs
    twice as much to build).

    ``received`` is the message as received; ``settings`` the router's, whose
    ``max_message_bytes`` (:attr:`limit`) what is republished in its place keeps within, when
    ``received`` did.
    """

    max_attempts: int
    original_queue: str
    dead_letter_queue: str
    received: bytes
    settings: Settings | None

    @property
    def limit(self) -> int:
        """The size limit: read only when a failure is settled, not for every message."""
        return (self.settings or get_settings()).max_message_bytes

    def over(self, envelope: BabelEnvelope[Any]) -> int:
        """How many bytes ``envelope``, encoded, is over the limit; 0 when it is within.

        0 too for a message received over the limit already: nothing republished in its place
        can be within it, so it goes on as decided (a ``check`` behind would refuse the message
        as received all the same).
        """
        limit = self.limit
        if len(self.received) > limit:
            return 0
        return max(len(envelope.to_json()) - limit, 0)


@dataclass(frozen=True, slots=True)
class Retry:
    """Republish ``envelope`` (``attempts + 1``, same ``meta.id`` and ``trace_id``), then ack."""

    envelope: BabelEnvelope[Any]
    rule: str


@dataclass(frozen=True, slots=True)
class DeadLetterDecision:
    """Publish ``envelope`` (it carries its ``dead_letter`` block) to ``queue``, then ack.

    ``rule`` is the failure's (``handler.failed``, ``data.invalid``, ``urn.unknown``, ...), or
    ``envelope.refused`` for a message the envelope class registered for its URN refuses
    outside ``data``: dead-lettered at once with reason ``poison``, ``dead_letter.error`` the
    :class:`InvalidEnvelopeError` naming the class and each rule id and pointer it reported.
    """

    envelope: BabelEnvelope[Any]
    queue: str
    rule: str


@dataclass(frozen=True, slots=True)
class Fail:
    """The delivery failed: :meth:`settle` says whether to retry it or dead-letter it.

    Attributes:
        envelope: the message as received.
        error: why (an :class:`UnknownUrnError`, :class:`InvalidPayloadError`, or what the
            handler, or the code of its ``data`` model, raised other than a validation error,
            or what fetching or applying the payload schema raised).
        rule: ``urn.unknown``, ``data.invalid``, ``handler.failed`` or
            ``payload_schema.failed``.
        reason: the ``dead_letter.reason`` used when retries run out.
    """

    envelope: BabelEnvelope[Any]
    error: BaseException
    rule: str
    reason: DeadLetterReason
    settlement: _Settlement = field(repr=False)

    def settle(self) -> Retry | DeadLetterDecision | Reject:
        """``attempts + 1``; a :class:`Retry` below ``max_attempts``, else a dead-letter.

        A message whose ``attempts`` is already the signed 64-bit maximum cannot be counted
        once more: it is dead-lettered now, ``attempts`` as received (``attempts.at_maximum``).

        What is republished keeps within the size limit (``max_message_bytes``) when the
        message was received within it, so the next consumer's ``check`` accepts it: a dead
        letter's ``error`` text is cut shorter to fit; a retry or a dead letter that cannot fit
        even so (a message within a few hundred bytes of the limit, or one whose re-encoding
        grows, ``1E15`` written ``1000000000000000.0``) is a :class:`Reject` of the message as
        received, to quarantine unchanged, its violations ``message.too_large`` and the
        failure's own rule.
        """
        plan = self.settlement
        if self.envelope.attempts >= INT64_MAX:
            return _dead_letter(self, self.envelope, rules.ATTEMPTS_AT_MAXIMUM)
        # Kept within the plan's limit below, not the environment's.
        retried = self.envelope._retried()  # pyright: ignore[reportPrivateUsage]
        if retried.attempts < plan.max_attempts:
            over = plan.over(retried)
            if over:
                return _quarantine(self, "retry", over)
            return Retry(retried, self.rule)
        return _dead_letter(self, retried, self.rule)


def _dead_letter(
    fail: Fail, envelope: BabelEnvelope[Any], rule: str
) -> DeadLetterDecision | Reject:
    """``envelope`` dead-lettered for ``fail``, within the limit, else the message quarantined."""
    plan = fail.settlement
    # Fitted within the plan's limit below, not the environment's.
    dead = envelope._dead_lettered(  # pyright: ignore[reportPrivateUsage]
        fail.reason, error=fail.error, original_queue=plan.original_queue
    )
    over = plan.over(dead)
    if over:
        # The error text is what a dead letter can spare: each character cut is a byte at
        # least, so cutting as many as there are bytes over (and the marker's room) fits it.
        text = error_text(fail.error)
        keep = min(len(text), ERROR_TEXT_CHARS) - over - _MARKER_ROOM
        if keep <= 0:
            return _quarantine(fail, "dead letter", over)
        dead = envelope._dead_lettered(  # pyright: ignore[reportPrivateUsage]
            fail.reason,
            error=cut_text(text, keep),
            exception=type(fail.error).__name__,
            original_queue=plan.original_queue,
        )
        over = plan.over(dead)
        if over:  # the exception's type name is the rest of what grew: not worth cutting
            return _quarantine(fail, "dead letter", over)
    return DeadLetterDecision(dead, plan.dead_letter_queue, rule)


def _quarantine(fail: Fail, what: str, over: int) -> Reject:
    """The message as received, to quarantine: its ``what`` would be ``over`` bytes too large."""
    plan = fail.settlement
    said = printable(f"{type(fail.error).__name__}: {cut_text(error_text(fail.error), 200)}")
    return Reject(
        plan.received,
        [
            violation(
                rules.MESSAGE_TOO_LARGE,
                "",
                f"Its {what} would be {plan.limit + over} bytes, over {plan.limit}: "
                "quarantined as received.",
            ),
            violation(fail.rule, "", said),
        ],
    )


@dataclass(frozen=True, slots=True)
class Handle(Generic[D, H]):
    """Run the handler mapped to the URN: :meth:`run`, and on a raise :meth:`failed`.

    ``envelope`` is the message as the handler receives it: ``BabelEnvelope[Model]`` when the
    URN was registered with a model, an instance of the envelope class it was registered with
    (statically too, through a typed :class:`Route`: ``Handle[Model]``, or ``Handle[Any, Own]``
    for a class ``Own``).
    ``received`` is the message as received, which a retry or a dead-letter republishes: the
    model's reading of ``data`` (defaults added, unknown keys left out, numbers coerced) is
    never written back. ``replay`` is whether the delivery carried the ``bq-replay-bypass``
    header: the handler then runs with :func:`is_replay` true.
    """

    envelope: H
    handler: Callable[[H], object] = field(repr=False)
    settlement: _Settlement = field(repr=False)
    received: BabelEnvelope[Any] = field(repr=False)
    replay: bool = False

    def run(self) -> object:
        """Call the handler with the envelope (inside the replay scope); exceptions propagate."""
        with replay_scope(self.replay):
            return self.handler(self.envelope)

    def failed(self, error: BaseException) -> Fail:
        """The :class:`Fail` for a handler that raised ``error``."""
        return Fail(self.received, error, rules.HANDLER_FAILED, "failed", self.settlement)


@dataclass(frozen=True, slots=True)
class Delete:
    """Ack the message and drop it (strategy ``delete``)."""

    envelope: BabelEnvelope[Any]
    rule: str


@dataclass(frozen=True, slots=True)
class Release:
    """Put the message back on its queue unchanged (strategy ``release``), for another consumer.

    ``raw`` is the message as received, byte for byte: what to put back (re-encoding
    ``envelope`` would drop what a v1 consumer drops, forbidden keys for one). ``delay`` is how
    many seconds it stays out of sight first (the router's ``unknown_urn_release_delay``):
    where the broker cannot release in place, the worker holds the delivery that long before
    putting it back.
    """

    envelope: BabelEnvelope[Any]
    rule: str
    raw: bytes
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class Reject:
    """Not a BabelQueue v1 envelope this SDK accepts: quarantine ``raw`` as is (never retried).

    An unsupported ``schema_version`` lands here too: it is quarantined, not dropped. So does a
    failed message whose retry or dead letter would not keep within the size limit it was
    received within (:meth:`Fail.settle`): ``message.too_large`` first among ``violations``,
    then the failure's own rule and text.
    """

    raw: bytes
    violations: list[Violation]


@dataclass(frozen=True, slots=True)
class Done(Generic[D, H]):
    """The handler ran and returned: ack the message.

    ``envelope`` is the one the handler received (``BabelEnvelope[Model]`` for a typed route,
    ``Done[Any, Own]`` holding an ``Own`` for a route of an envelope class ``Own``).
    """

    envelope: H


Decision = Handle[Any] | Delete | Release | DeadLetterDecision | Fail | Reject
"""What :meth:`Router.route` decides for one message."""

Outcome = Done[Any] | Delete | Release | Retry | DeadLetterDecision | Reject
"""What :meth:`Router.dispatch` leaves the worker to do for one message."""


# --- the router --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Route(Generic[M, RE]):
    """One URN's registration, typed by its ``data`` model; :meth:`Router.register` returns it.

    For a worker whose queue carries this URN alone, :meth:`route` and :meth:`dispatch` are the
    router's, with the handled envelope typed (``Handle[Model]``, ``Done[Model]``, each holding
    a ``BabelEnvelope[Model]``). A route registered with an envelope class ``Own`` is a
    ``Route[Any, Own]``: its ``Handle`` and ``Done`` hold an ``Own``. A message of any other
    URN is not this route's, whatever the router maps it to: it gets the router's
    ``unknown_urn`` strategy.

    ```python
    from pydantic import BaseModel
    from envelopekit.babelqueue import BabelEnvelope, Done, Router

    class OrderCreated(BaseModel):
        order_id: int

    def charge(env: BabelEnvelope[OrderCreated]) -> None:
        assert env.data.order_id > 0

    router = Router()
    orders = router.register("urn:babel:orders:created", charge, OrderCreated)
    body = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 7}).to_json()
    outcome = orders.dispatch(body, queue="orders")
    assert isinstance(outcome, Done)
    assert outcome.envelope.data.order_id == 7  # envelope: BabelEnvelope[OrderCreated]
    ```
    """

    router: Router = field(repr=False)
    urn: str
    model: type[M] | None

    def route(
        self,
        message: bytes | str | BabelEnvelope[Any],
        *,
        queue: str | None = None,
        reconcile: Reconcile | None = None,
        replay: bool = False,
    ) -> Handle[M, RE] | Delete | Release | DeadLetterDecision | Fail | Reject:
        """:meth:`Router.route`, for a message of this route's URN."""
        # A route is part of its router: it reaches the router's own steps.
        decision = self.router._route(message, queue, reconcile, replay, self.urn)  # pyright: ignore[reportPrivateUsage]
        # Only this URN reaches a Handle, its envelope parsed by the route's envelope class.
        return cast(
            "Handle[M, RE] | Delete | Release | DeadLetterDecision | Fail | Reject", decision
        )

    def dispatch(
        self,
        message: bytes | str | BabelEnvelope[Any],
        *,
        queue: str | None = None,
        reconcile: Reconcile | None = None,
        replay: bool = False,
    ) -> Done[M, RE] | Delete | Release | Retry | DeadLetterDecision | Reject:
        """:meth:`Router.dispatch`, for a message of this route's URN.

        Raises:
            SeenStoreUnavailable: as :meth:`Router.dispatch`.
        """
        decision = self.router._route(message, queue, reconcile, replay, self.urn)  # pyright: ignore[reportPrivateUsage]
        outcome = self.router._settle(decision)  # pyright: ignore[reportPrivateUsage]
        return cast("Done[M, RE] | Delete | Release | Retry | DeadLetterDecision | Reject", outcome)


@dataclass(frozen=True, slots=True)
class _Route:
    handler: Callable[[Any], object]
    parse: type[BabelEnvelope[Any]] | None
    # The model's payload schema when it declares sensitive fields: decrypted before parsing.
    sensitive: Mapping[str, Any] | None = None
    # The `data` model `parse` reads, when it types `data`.
    data: type[Any] | None = None


class Router:
    """Maps URNs to handlers (and optionally ``data`` models) and decides each message's fate.

    ```python
    from pydantic import BaseModel
    from envelopekit.babelqueue import BabelEnvelope, Done, Router

    class OrderCreated(BaseModel):
        order_id: int

    router = Router(unknown_urn="dead_letter")

    @router.on("urn:babel:orders:created", OrderCreated)
    def order_created(env: BabelEnvelope[OrderCreated]) -> None:
        assert env.data.order_id == 1042

    body = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}).to_json()
    assert isinstance(router.dispatch(body, queue="orders"), Done)
    ```
    """

    def __init__(
        self,
        unknown_urn: UnknownUrnStrategy = "fail",
        *,
        schemas: SchemaProvider | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        dlq_suffix: str = DEFAULT_DLQ_SUFFIX,
        cipher: Cipher | None = None,
        settings: Settings | None = None,
        unknown_urn_release_delay: float = 0.0,
    ) -> None:
        """Configure the router.

        Args:
            unknown_urn: the strategy for a URN with no handler; ``fail`` as in every SDK.
            schemas: per-URN ``data`` schemas checked before the handler runs (opt-in). A
                provider that raises (a registry out of reach), or a schema the validator
                cannot apply, fails the delivery as ``payload_schema.failed``: retried, then
                dead-lettered, as a handler's failure is.
            max_attempts: deliveries before a failing message is dead-lettered.
            dlq_suffix: appended to the received queue to name its dead-letter queue.
            cipher: opens ``x-gdpr-sensitive`` fields (ADR-0030) before ``data`` is checked
                against its payload schema or model, so validation sees cleartext; a retry or
                dead-letter still republishes the ciphertext as received.
            settings: how a received message is read, as ``check`` reads it (a message over
                ``max_message_bytes`` or ``max_depth``, or refused for its duplicate keys, is a
                :class:`Reject`), and the size a retry or dead letter keeps within
                (:meth:`Fail.settle`); the environment's when not given.
            unknown_urn_release_delay: seconds a message released by the ``release`` strategy
                stays out of sight before it is delivered again (:attr:`Release.delay`); 0,
                as in every SDK: put back at once.

        Raises:
            ValueError: for an unknown strategy, ``max_attempts`` below 1, an empty
                ``dlq_suffix`` (a dead letter would go back onto the queue it failed on, to
                fail there again, forever), or a release delay that is negative or not finite.
            TypeError: for a ``max_attempts`` that is not an int (a float compared as a bound:
                NaN dead-lettered every failure, infinity retried it forever), a
                ``dlq_suffix`` that is not a string, a release delay that is not a number of
                seconds, or ``settings`` that are no :class:`~envelopekit.Settings`.
        """
        if not isinstance(unknown_urn, str) or unknown_urn not in UNKNOWN_URN_STRATEGIES:
            raise ValueError(
                f"unknown_urn must be one of {sorted(UNKNOWN_URN_STRATEGIES)}, not {unknown_urn!r}"
            )
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
            raise TypeError(f"max_attempts must be an int, not {max_attempts!r}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not isinstance(dlq_suffix, str):
            raise TypeError(f"dlq_suffix must be a str, not {dlq_suffix!r}")
        if not dlq_suffix:
            raise ValueError("dlq_suffix must not be empty: the dead-letter queue is the queue")
        delay: object = unknown_urn_release_delay
        if isinstance(delay, bool) or not isinstance(delay, (int, float)):
            raise TypeError(f"unknown_urn_release_delay must be seconds, not {delay!r}")
        if not 0 <= unknown_urn_release_delay < math.inf:  # NaN fails both comparisons
            raise ValueError(
                "unknown_urn_release_delay must be a finite number of seconds, at least 0, "
                f"not {unknown_urn_release_delay!r}"
            )
        self.unknown_urn: UnknownUrnStrategy = unknown_urn
        if schemas is not None:
            implementing(
                "schemas",
                schemas,
                ("schema_for",),
                "a SchemaProvider (schema_for(urn), such as PayloadSchemas.from_registry(path))",
            )
        if cipher is not None:
            implementing(
                "cipher",
                cipher,
                ("encrypt", "decrypt"),
                "a Cipher (encrypt(bytes) -> str and decrypt(str) -> bytes)",
            )
        self.schemas = schemas
        self.max_attempts = max_attempts
        self.dlq_suffix = dlq_suffix
        self.cipher = cipher
        self.settings = optional_argument("settings", settings, Settings)
        self.unknown_urn_release_delay = float(unknown_urn_release_delay)
        self._routes: dict[str, _Route] = {}

    # --- registration --------------------------------------------------------------------------

    @overload
    def register(
        self, urn: str, handler: Callable[[BabelEnvelope[dict[str, Any]]], object]
    ) -> Route[dict[str, Any]]: ...
    @overload
    def register(
        self, urn: str, handler: Callable[[BabelEnvelope[M]], object], model: type[M]
    ) -> Route[M]: ...
    @overload
    def register(
        self, urn: str, handler: Callable[[E], object], model: type[E]
    ) -> Route[Any, E]: ...
    def register(
        self,
        urn: str,
        handler: Callable[[Any], object],
        model: type[Any] | None = None,
    ) -> Route[Any, Any]:
        """Map ``urn`` to ``handler``; with ``model``, ``data`` is validated into that type.

        ``model`` may also be an envelope class, ``BabelEnvelope[Model]`` or a class of your own
        that extends one: each message of the URN is then validated by that class (its own
        fields and validators too) and the handler gets an instance of it, typed so (its
        :class:`Route` is a ``Route[Any, Own]``, whose outcomes hold an ``Own``). A ``data``
        the class's model refuses is ``data.invalid``, as for a ``data`` model; an envelope
        it refuses outside ``data`` is
        dead-lettered at once as ``envelope.refused``, reason ``poison``, with an
        :class:`InvalidEnvelopeError` naming the class and each rule id and pointer.

        Surrounding ASCII whitespace is stripped, as :meth:`BabelEnvelope.create` strips it
        from the URN it writes. The URN naming convention is not enforced here (see
        :meth:`lint`). Returns the :class:`Route`, typed by ``model``, for a worker whose queue
        carries this URN only.

        Raises:
            ValueError: when ``urn`` is blank or already registered; when ``model`` takes
                values that are not JSON objects (``list[int]``, ``Model | None``: every
                message's ``data`` is an object, so every one would fail); when it declares
                sensitive fields and the router has no ``cipher`` (their ciphertext would
                otherwise be validated as if it were the cleartext), or declares them in a
                recursive model (whose marks no payload schema can carry).
            TypeError: when ``urn`` is not a string or ``handler`` cannot be called (every
                message of the URN would fail, to be retried and dead-lettered).
        """
        if not isinstance(urn, str):
            raise TypeError(f"a URN is a str, not {type(urn).__name__}")
        if not callable(handler):
            raise TypeError(f"the handler for {urn!r} is not callable: {handler!r}")
        if is_blank(urn):
            raise ValueError("cannot route a blank URN")
        urn = routed_urn(urn)
        if urn in self._routes:
            raise ValueError(f"{urn!r} already has a handler")
        parse, data = _parsed_by(model)
        if data is not None:
            require_object_data(data, urn)
        self._routes[urn] = _Route(handler, parse, self._sensitive_schema(urn, data), data)
        return Route(self, urn, data)

    @overload
    def on(self, urn: str, model: type[E]) -> Callable[[Callable[[E], R]], Callable[[E], R]]: ...
    @overload
    def on(
        self, urn: str
    ) -> Callable[
        [Callable[[BabelEnvelope[dict[str, Any]]], R]],
        Callable[[BabelEnvelope[dict[str, Any]]], R],
    ]: ...
    @overload
    def on(
        self, urn: str, model: type[M]
    ) -> Callable[[Callable[[BabelEnvelope[M]], R]], Callable[[BabelEnvelope[M]], R]]: ...
    def on(
        self, urn: str, model: type[Any] | None = None
    ) -> Callable[[Callable[[Any], R]], Callable[[Any], R]]:
        """Decorator form of :meth:`register`; the handler is returned unchanged.

        The handler is checked as :meth:`register` checks it: with ``model``, it must take a
        ``BabelEnvelope[model]`` (a handler of another ``data`` type is a type error), or the
        envelope class ``model`` is; without, a ``BabelEnvelope`` of a JSON object.
        """

        def decorate(handler: Callable[[Any], R]) -> Callable[[Any], R]:
            self._routes_add(urn, handler, model)
            return handler

        return decorate

    def _routes_add(
        self, urn: str, handler: Callable[..., object], model: type[Any] | None
    ) -> None:
        if model is None:
            self.register(urn, handler)
        else:
            self.register(urn, handler, model)

    def urns(self) -> list[str]:
        """The registered URNs, in registration order."""
        return list(self._routes)

    def handles(self, urn: str) -> bool:
        """Whether a handler is mapped to ``urn`` (surrounding ASCII whitespace stripped)."""
        return routed_urn(urn) in self._routes

    def data_model(self, urn: str) -> type[Any] | None:
        """The ``data`` model ``urn`` was registered with; ``None`` when untyped or unknown."""
        route = self._routes.get(routed_urn(urn))
        return None if route is None else route.data

    def lint(self) -> list[Violation]:
        """``urn.convention`` warnings for registered URNs off ``urn:babel:<context>:<event>``."""
        return [found for urn in self._routes for found in lint_urn(urn)]

    # --- consuming -----------------------------------------------------------------------------

    def route(
        self,
        message: bytes | str | BabelEnvelope[Any],
        *,
        queue: str | None = None,
        reconcile: Reconcile | None = None,
        replay: bool = False,
    ) -> Decision:
        """Decide what to do with one received message, without running any handler.

        Its URN is looked up as :meth:`register` keeps it, without surrounding ASCII whitespace
        (the SDKs that trim ``job`` send it so), and its handler gets the message as received.

        Args:
            message: the body as received, or an envelope already decoded.
            queue: the queue it was consumed from; names the DLQ (``queue + dlq_suffix``) and
                ``dead_letter.original_queue``. ``meta.queue`` when not given.
            reconcile: applied to the decoded envelope before routing, typically a broker
                binding's attempts reconciliation:
                ``reconcile=lambda env: sqs.reconcile(env, receive_count)``.
            replay: the delivery carried the ``bq-replay-bypass`` header (a binding's
                ``is_replay(native)``): the handler runs with :func:`is_replay` true, so
                :func:`bypass_external_effects` skips what already happened once.
        """
        return self._route(message, queue, reconcile, replay, None)

    def _route(
        self,
        message: bytes | str | BabelEnvelope[Any],
        queue: str | None,
        reconcile: Reconcile | None,
        replay: bool,
        only: str | None,
    ) -> Decision:
        """:meth:`route`; with ``only``, a message of any other URN is an unknown one."""
        if isinstance(message, BabelEnvelope):
            envelope: BabelEnvelope[Any] = message
            raw = message.to_json()
        else:
            raw = received_bytes(message)
            # Read as `check` reads it, under the router's settings: the size and depth
            # limits, duplicate keys and the cap on findings are the next consumer's too.
            verdict = check(raw, "babelqueue", settings=self.settings)
            if verdict.envelope is None:
                return Reject(raw, verdict.violations)
            envelope = verdict.envelope
        if reconcile is not None:
            envelope = reconcile(envelope)
        settlement = self._settlement(envelope, queue, raw)
        # The URN as registered: a handler gets the message whose job names it, whatever
        # ASCII whitespace surrounds it (a producer that does not strip it).
        urn = routed_urn(envelope.job)
        found = self._routes.get(urn) if only is None or urn == only else None
        if found is None:
            return self._unknown(envelope, settlement, raw)
        try:
            schema = None if self.schemas is None else self.schemas.schema_for(urn)
        except Exception as exc:  # a registry out of reach: retried, as a handler failure is
            return Fail(envelope, exc, rules.PAYLOAD_SCHEMA_FAILED, "failed", settlement)
        opened = self._opened(envelope, found, schema)
        if isinstance(opened, list):
            return self._invalid(envelope, opened, settlement)
        # A typed route parses the cleartext; what is republished stays the bytes received.
        parsed_from = raw if opened is envelope else opened.to_json()
        if schema is not None:
            try:
                mismatches = check_payload(schema, opened.to_wire()["data"])
            except Exception as exc:  # a schema the validator cannot apply, or no jsonschema
                return Fail(envelope, exc, rules.PAYLOAD_SCHEMA_FAILED, "failed", settlement)
            if mismatches:
                return self._invalid(envelope, mismatches, settlement)
        typed = opened
        if found.parse is not None:
            try:
                typed = found.parse.model_validate_json(parsed_from)
            except ValidationError as exc:
                return self._refused(envelope, found.parse, exc, settlement)
            except Exception as exc:  # the model's own code raised (pydantic wraps ValueError only)
                return Fail(envelope, exc, rules.HANDLER_FAILED, "failed", settlement)
            if typed.attempts != envelope.attempts:  # keep what `reconcile` decided
                typed = typed.model_copy(update={"attempts": envelope.attempts})
        return Handle(typed, found.handler, settlement, envelope, replay)

    def dispatch(
        self,
        message: bytes | str | BabelEnvelope[Any],
        *,
        queue: str | None = None,
        reconcile: Reconcile | None = None,
        replay: bool = False,
    ) -> Outcome:
        """:meth:`route`, run the handler, and settle any failure into a retry or dead-letter.

        Raises:
            SeenStoreUnavailable: from an idempotency guard whose shared store is unreachable:
                nothing ran and nothing was settled, so the message must not be acknowledged.
        """
        return self._settle(self.route(message, queue=queue, reconcile=reconcile, replay=replay))

    def _settle(self, decision: Decision) -> Outcome:
        """Run a :class:`Handle` and settle a :class:`Fail`, as :meth:`dispatch` does."""
        if isinstance(decision, Handle):
            try:
                decision.run()
            except SeenStoreUnavailable:  # the store failed, not the message: leave it unacked
                raise
            except Exception as exc:  # any handler failure is retried, never lost
                return decision.failed(exc).settle()
            return Done(decision.envelope)
        if isinstance(decision, Fail):
            return decision.settle()
        return decision

    def _sensitive_schema(self, urn: str, model: type[Any] | None) -> Mapping[str, Any] | None:
        if model is None:
            return None
        name = getattr(model, "__name__", repr(model))
        try:
            schema = sensitive_schema(model)
        except TypeError as exc:
            # Its ciphertext would otherwise be validated (and handled) as the cleartext.
            raise ValueError(
                f"{name} (for {urn!r}) declares sensitive fields in a recursive model: no "
                "payload schema can carry their marks, so they cannot be decrypted"
            ) from exc
        if schema is None:
            return None
        if self.cipher is None:
            raise ValueError(
                f"{name} (for {urn!r}) declares sensitive fields: pass "
                "Router(cipher=...) so they are decrypted before the model validates them"
            )
        return schema

    def _opened(
        self, envelope: BabelEnvelope[Any], route: _Route, schema: Mapping[str, Any] | None
    ) -> BabelEnvelope[Any] | list[Violation]:
        """``envelope`` with its sensitive fields decrypted, when a cipher and marks apply."""
        marks = route.sensitive
        if marks is None and schema is not None and sensitive_paths(schema):
            marks = schema
        if self.cipher is None or marks is None:
            return envelope
        try:
            return unprotect(envelope, self.cipher, marks)
        except DecryptError as exc:
            return [exc.violation]

    def _settlement(
        self, envelope: BabelEnvelope[Any], queue: str | None, raw: bytes
    ) -> _Settlement:
        received = queue if queue else envelope.meta.queue
        return _Settlement(
            self.max_attempts, received, received + self.dlq_suffix, raw, self.settings
        )

    def _unknown(
        self, envelope: BabelEnvelope[Any], settlement: _Settlement, raw: bytes
    ) -> Decision:
        error = UnknownUrnError(envelope.job)
        strategy = self.unknown_urn
        if strategy == "delete":
            return Delete(envelope, rules.URN_UNKNOWN)
        if strategy == "release":
            return Release(envelope, rules.URN_UNKNOWN, raw, self.unknown_urn_release_delay)
        fail = Fail(envelope, error, rules.URN_UNKNOWN, "unknown_urn", settlement)
        if strategy == "dead_letter":
            # Immediately: no delivery failed, so `attempts` stays as received.
            return _dead_letter(fail, envelope, rules.URN_UNKNOWN)
        return fail

    def _invalid(
        self, envelope: BabelEnvelope[Any], found: list[Violation], settlement: _Settlement
    ) -> Fail:
        error = InvalidPayloadError(envelope.job, found)
        return Fail(envelope, error, rules.DATA_INVALID, "failed", settlement)

    def _refused(
        self,
        envelope: BabelEnvelope[Any],
        parse: type[BabelEnvelope[Any]],
        exc: ValidationError,
        settlement: _Settlement,
    ) -> Fail | DeadLetterDecision | Reject:
        """The route's class refused the message: its ``data``, or the envelope itself.

        A refusal within ``data`` is the spec's invalid data (babelqueue.md §10: retried, then
        dead-lettered as ``failed``). One outside it (a member or validator of the user's
        class) leaves no handler a message it can take: no delivery failed, and no retry can
        change the verdict, so it is dead-lettered now as ``poison`` (attempts as received).
        """
        found = violations(exc, model=parse)
        if all(v.pointer == "/data" or v.pointer.startswith("/data/") for v in found):
            return self._invalid(envelope, found, settlement)
        error = InvalidEnvelopeError(envelope.job, parse.__name__, found)
        fail = Fail(envelope, error, rules.ENVELOPE_REFUSED, "poison", settlement)
        return _dead_letter(fail, envelope, rules.ENVELOPE_REFUSED)


def _parsed_by(model: type[Any] | None) -> tuple[type[BabelEnvelope[Any]] | None, Any]:
    """The envelope class a route parses with, and the ``data`` model it types, of ``model``.

    ``model`` is a ``data`` model (``BabelEnvelope[model]`` parses), or an envelope class
    itself: ``BabelEnvelope[Model]`` or a user's subclass of one, which parses as it is, its
    own fields and validators applied (its ``data`` model is its ``data`` field's type, none
    when that is still a type variable).
    """
    if model is None:
        return None, None
    if isinstance(model, type) and issubclass(model, BabelEnvelope):
        data = model.__pydantic_fields__["data"].annotation
        return model, None if isinstance(data, typing.TypeVar) else data
    return BabelEnvelope[model], model  # type: ignore[valid-type]


def received_bytes(message: bytes | bytearray | memoryview | str) -> bytes:
    """A received body as bytes; a ``str`` goes back to the bytes it was decoded from.

    redis-py with ``decode_responses=True, encoding_errors="surrogateescape"`` (the reference's
    client settings) hands over invalid UTF-8 as lone surrogates: ``surrogateescape`` restores
    those bytes, so the message is refused (``json.invalid``) and quarantined as it was sent.

    Raises:
        TypeError: for anything else (``bytes()`` would read an int as a size to allocate, a
            list of ints as the bytes).
    """
    if type(message) is bytes:
        return message
    if isinstance(message, str):
        try:
            return message.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate no decoder produced: kept as its UTF-8 form
            return message.encode("utf-8", "surrogatepass")
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    raise TypeError(f"a received message is bytes or str, not {type(message).__name__}")
