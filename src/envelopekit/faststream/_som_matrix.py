"""SOM and Matrix consumers on a FastStream broker: checked, typed, refusals quarantined.

A message is read as :func:`envelopekit.check` reads it, by the subscriber's envelope class
(the spec's, or a user's subclass of it: ``_check.check_as``). One it refuses, or a valid one
this subscriber does not take, goes as received to the quarantine destination with its rule
ids in :data:`~envelopekit.faststream.RULES_HEADER`; it never raises into the broker loop.

Matrix requests are answered through FastStream's reply mechanism: what the handler returns
(``req.reply(...)`` or ``req.fail(...)``) is FastStream's reply (``broker.request`` gets it);
with ``reply_to_field=True`` a message without a FastStream reply address is answered at the
request's own ``replyTo``. A handler that raises is answered with
``req.fail(INTERNAL, ...)`` when the request can be answered.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from types import UnionType
from typing import Any, get_args, overload

from faststream import Context, Response, StreamMessage
from typing_extensions import TypeVar

from .. import rules
from .._check import check, check_as
from .._violations import Verdict, Violation, violation
from ..matrix import MxErrorCode, MxErrorPayload, MxRequest, MxResponse
from ..matrix._ops import REPLY_OP
from ..som import FamilyPayload, SomEnvelope, UnvalidatedPayload
from ..som._typed import payload_choices
from ._endpoint import RULES_HEADER, Endpoint, run_handler

__all__ = ["MatrixConsumer", "MatrixHandler", "SomConsumer", "matrix_subscriber", "som_subscriber"]

P = TypeVar("P", bound="FamilyPayload | UnvalidatedPayload")
Q = TypeVar("Q", bound="FamilyPayload | UnvalidatedPayload")
R = TypeVar("R", bound="FamilyPayload | UnvalidatedPayload")
E = TypeVar("E", bound="SomEnvelope[Any]")
Req = TypeVar("Req", bound="MxRequest[Any]")

# What a SOM payload is read into: a subscriber's `family` is one of them, or nothing matches.
_FAMILIES: tuple[type[Any], ...] = (*get_args(FamilyPayload), UnvalidatedPayload)

DEFAULT_QUARANTINE_SUFFIX = ".quarantine"


class _Checked:
    """What the SOM and Matrix consumers share: the endpoint and the quarantine."""

    def __init__(
        self,
        broker: Any,
        source: str,
        quarantine: str | None,
        worker_id: str | None,
        subscriber_options: Mapping[str, Any],
    ) -> None:
        self.source = source
        self.quarantine = quarantine or source + DEFAULT_QUARANTINE_SUFFIX
        self.endpoint = Endpoint(broker, source, worker_id, subscriber_options)
        self.subscriber = self.endpoint.subscriber

        async def consume(message: StreamMessage[Any] = Context("message")) -> Any:  # noqa: B008
            return await self.handle(message)

        consume.__name__ = f"{type(self).__name__.lower()}_{source}"
        self.subscriber(consume)

    @property
    def processing(self) -> str | None:
        """On Redis, the key of this worker's reservation list; ``None`` on other brokers."""
        return self.endpoint.processing

    async def handle(self, message: StreamMessage[Any]) -> Any:
        """Check, run and settle one message."""
        raise NotImplementedError

    async def _quarantine(
        self, message: StreamMessage[Any], body: bytes, found: list[Violation]
    ) -> None:
        rule_ids = ",".join(dict.fromkeys(v.rule for v in found))
        await self.endpoint.settle(message, self.quarantine, body, {RULES_HEADER: rule_ids})


class SomConsumer(_Checked):
    """Consumes SOM messages, optionally of some families; built by :func:`som_subscriber`.

    Each is read by :attr:`envelope_model` (``SomEnvelope``, or a user's envelope class).
    """

    def __init__(
        self,
        broker: Any,
        source: str,
        handler: Callable[[Any, Any], object],
        *,
        family: Any = None,
        envelope_model: type[SomEnvelope[Any]] = SomEnvelope,
        quarantine: str | None = None,
        worker_id: str | None = None,
        **subscriber_options: Any,
    ) -> None:
        # Here, not by quarantining every message as `subscriber.unexpected`.
        self._takes = None if family is None else _families(family)
        self.envelope_model = _envelope_class(envelope_model, SomEnvelope, "envelope_model")
        if self._takes is not None:
            _taken_by(self.envelope_model, self._takes)
        self.handler = handler
        self.family = family
        super().__init__(broker, source, quarantine, worker_id, subscriber_options)

    async def handle(self, message: StreamMessage[Any]) -> None:
        """Check one SOM message; run the handler with it and its typed payload, or quarantine."""
        body = bytes(message.body)
        if self.envelope_model is SomEnvelope:
            verdict = check(body, spec="som")
        else:
            verdict = check_as(body, "som", self.envelope_model)
        envelope = verdict.envelope
        if envelope is None:
            await self._quarantine(message, body, verdict.violations)
            return
        payload = envelope.payload
        if self._takes is not None and not isinstance(payload, self._takes):
            takes = " or ".join(one.__name__ for one in self._takes)
            found = violation(
                rules.SUBSCRIBER_UNEXPECTED,
                "/message_type",
                f"{envelope.message_type!r} is not a family this subscriber takes ({takes}).",
            )
            await self._quarantine(message, body, [found])
            return
        await run_handler(self.handler, functools.partial(self.handler, envelope, payload))
        await self.endpoint.settle(message, None, b"", {})


def _families(family: Any) -> tuple[type[Any], ...]:
    """The payload models ``family`` names: one, or a union (``A | B``) or tuple of them.

    Raises:
        TypeError: for a member that is no SOM payload model (named), or for none at all.
    """
    # A tuple is its members (none, refused below); a union its arguments; a class itself.
    members: tuple[Any, ...] = (
        family if isinstance(family, tuple) else get_args(family) or (family,)
    )
    found: list[type[Any]] = []
    for member in members:
        if isinstance(member, tuple) or get_args(member):
            found += _families(member)  # nested, as isinstance reads it
        elif member in _FAMILIES:
            found.append(member)
        else:
            within = "" if member is family else f" (in {family!r})"
            raise TypeError(
                "family must be one of SOM's payload models "
                f"({', '.join(one.__name__ for one in _FAMILIES)}), or a union or tuple of "
                f"them, not {getattr(member, '__name__', repr(member))}{within}"
            )
    if not found:
        raise TypeError(f"family must name at least one of SOM's payload models, not {family!r}")
    return tuple(dict.fromkeys(found))


def _envelope_class(given: object, base: type[Any], keyword: str) -> Any:
    """``given`` when it is ``base`` or a subclass of it (parametrised or a user's own).

    Raises:
        TypeError: for anything else, which could validate no message as ``base`` does.
    """
    if isinstance(given, type) and issubclass(given, base):
        return given
    raise TypeError(
        f"{keyword} must be {base.__name__} or a subclass of it (parametrised, or a class of "
        f"your own that extends it), not {getattr(given, '__name__', repr(given))}: the "
        f"message is validated by that class"
    )


def _taken_by(model: type[SomEnvelope[Any]], takes: tuple[type[Any], ...]) -> None:
    """Refuse a family ``model`` never takes: each of its messages would be refused.

    Raises:
        TypeError: naming the families and those the envelope class takes.
    """
    choices = payload_choices(model)
    if choices is None:  # a payload type that is no family's: its own validation decides
        return
    taken = {kind for kinds in choices.values() for kind in kinds}
    missed = [one.__name__ for one in takes if one not in taken]
    if missed:
        raise TypeError(
            f"family names {', '.join(missed)}, which envelope_model {model.__name__} never "
            f"takes (it takes {', '.join(sorted(kind.__name__ for kind in taken))})"
        )


# The request a handler takes: the plain request unless a `request_model` says otherwise.
Taken = TypeVar("Taken", bound="MxRequest[Any]", default="MxRequest[Any]")

MatrixHandler = Callable[[Taken], "MxResponse[Any] | Awaitable[MxResponse[Any] | None] | None"]
"""A Matrix request handler: the reply (``req.reply(...)``, ``req.fail(...)``), or ``None``.

``MatrixHandler`` takes the plain request (``MxRequest[Any]``), as a subscriber without a
``request_model`` hands it over; ``MatrixHandler[Own]`` takes a request class of your own.
"""


class MatrixConsumer(_Checked):
    """Answers Matrix requests; built by :func:`matrix_subscriber`.

    Each is read by :attr:`request_model` (``MxRequest``, or a user's request class).
    """

    def __init__(
        self,
        broker: Any,
        source: str,
        handler: MatrixHandler[Any],
        *,
        request_model: type[MxRequest[Any]] = MxRequest,
        quarantine: str | None = None,
        reply_to_field: bool = False,
        worker_id: str | None = None,
        **subscriber_options: Any,
    ) -> None:
        self.handler = handler
        self.request_model: type[MxRequest[Any]] = _envelope_class(
            request_model, MxRequest, "request_model"
        )
        self.reply_to_field = reply_to_field
        super().__init__(broker, source, quarantine, worker_id, subscriber_options)

    async def handle(self, message: StreamMessage[Any]) -> Response | None:
        """Check one request, run the handler, and return its reply for FastStream to send."""
        body = bytes(message.body)
        request = await self._request(message, body)
        if request is None:
            return None
        try:
            answer = await run_handler(self.handler, functools.partial(self.handler, request))
        except Exception as exc:  # the caller gets an error reply, not a timeout
            if not isinstance(request.correlation_id, str):
                raise
            answer = request.fail(MxErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")
        if not (answer is None or isinstance(answer, MxResponse)) and isinstance(
            request.correlation_id, str
        ):
            # Not sent as a reply (FastStream would send an empty body): the caller is told why.
            answer = request.fail(
                MxErrorCode.INTERNAL,
                f"the handler returned {type(answer).__name__}, not an MxResponse: "
                "return req.reply(...) or req.fail(...)",
            )
        if (
            self.reply_to_field
            and isinstance(answer, MxResponse)
            and not message.reply_to
            and isinstance(request.reply_to, str)
        ):
            # No FastStream reply address: the request's own replyTo, published with the ack.
            await self.endpoint.settle(message, request.reply_to, answer.to_json(), {})
            return None
        await self.endpoint.settle(message, None, b"", {})
        if isinstance(answer, MxResponse):
            return Response(answer.to_json(), correlation_id=message.correlation_id)
        return None

    async def _request(self, message: StreamMessage[Any], body: bytes) -> MxRequest[Any] | None:
        """The request ``body`` is, read by :attr:`request_model`; else quarantined, ``None``."""
        verdict: Verdict[Any]
        if self.request_model is MxRequest:
            verdict = check(body, spec="matrix")
        else:
            # Read by the user's class, whose own fields the closed request schema would
            # refuse as unknown keys.
            verdict = check_as(body, "matrix", self.request_model)
        envelope = verdict.envelope
        if isinstance(envelope, MxRequest) and envelope.op != REPLY_OP:
            return envelope
        if envelope is None and (
            self.request_model is MxRequest
            # What check reads as a reply is still no request: refused for that.
            or not isinstance(check(body, spec="matrix").envelope, (MxResponse, MxErrorPayload))
        ):
            await self._quarantine(message, body, verdict.violations)
            return None
        found = violation(
            rules.SUBSCRIBER_UNEXPECTED,
            "",
            "a Matrix reply or error payload where requests are consumed",
        )
        await self._quarantine(message, body, [found])
        return None


@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[E, P], object],
    *,
    envelope_model: type[E],
    family: type[P],
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[E, Any], object],
    *,
    envelope_model: type[E],
    family: tuple[type[FamilyPayload | UnvalidatedPayload], ...] | UnionType | None = None,
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, P], object],
    *,
    envelope_model: type[SomEnvelope] = ...,
    family: type[P] | None = None,
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, P | Q], object],
    *,
    envelope_model: type[SomEnvelope] = ...,
    family: tuple[type[P], type[Q]],
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, P | Q | R], object],
    *,
    envelope_model: type[SomEnvelope] = ...,
    family: tuple[type[P], type[Q], type[R]],
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, P], object],
    *,
    envelope_model: type[SomEnvelope] = ...,
    # After the two above, which mypy solves (it joins the members of this one), pyright this.
    family: tuple[type[P], ...],
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, Any], object],
    *,
    envelope_model: type[SomEnvelope] = ...,
    family: UnionType,
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[Any, Any], object],
    *,
    family: Any = None,
    envelope_model: type[SomEnvelope[Any]] = SomEnvelope,
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer:
    """Declare a SOM subscriber: ``handler(envelope, payload)`` with the payload's family model.

    ```python
    from faststream.redis import RedisBroker
    from envelopekit.faststream import SomConsumer, som_subscriber
    from envelopekit.som import SomEnvelope, StoryContext

    def on_story(envelope: SomEnvelope, story: StoryContext) -> None: ...

    broker = RedisBroker("redis://127.0.0.1:6379")
    consumer = som_subscriber(broker, "som.story.context", on_story, family=StoryContext)
    assert isinstance(consumer, SomConsumer)
    ```

    Args:
        broker: a FastStream ``RedisBroker``, ``RabbitBroker`` or ``KafkaBroker``.
        source: the list, queue or topic to consume.
        handler: sync (run in a worker thread, as FastStream runs its own) or async; its
            exceptions follow the broker's own policy.
        family: the payload model this subscriber takes (``StoryContext`` ...), or several:
            a tuple (``(TellingEvent, LinkEvent)``), for which the type checkers type the
            handler's payload as either (mypy: of two or three), or a union (``TellingEvent |
            LinkEvent``), for which they type it ``Any`` (a union is no class to them). Any
            other family is quarantined as ``subscriber.unexpected``. ``None``: every family.
        envelope_model: the class each message is validated by and the handler gets: a
            parametrised envelope (``SomEnvelope[StoryContext]``) or a class of your own that
            extends one, its fields and validators applied with the spec's rules (a message it
            refuses is quarantined with the rule ids it reports, a family a typed one does not
            take as ``payload.family_unexpected``).
        quarantine: where refused messages go; ``<source>.quarantine`` by default.
        worker_id: Redis only: names this worker's processing list, which no other running
            worker may share; ``None``: an id unique to this worker (as
            :func:`~envelopekit.faststream.babelqueue_subscriber`).
        subscriber_options: passed to ``broker.subscriber``.

    Raises:
        TypeError: for a ``family`` that names anything but SOM's payload models (named), an
            ``envelope_model`` that is no ``SomEnvelope`` class, or a family it never takes.
    """
    return SomConsumer(
        broker,
        source,
        handler,
        family=family,
        envelope_model=envelope_model,
        quarantine=quarantine,
        worker_id=worker_id,
        **subscriber_options,
    )


@overload
def matrix_subscriber(
    broker: Any,
    source: str,
    handler: MatrixHandler,
    *,
    request_model: type[MxRequest] = ...,
    quarantine: str | None = None,
    reply_to_field: bool = False,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> MatrixConsumer: ...
@overload
def matrix_subscriber(
    broker: Any,
    source: str,
    handler: MatrixHandler[Req],
    *,
    request_model: type[Req],
    quarantine: str | None = None,
    reply_to_field: bool = False,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> MatrixConsumer: ...
def matrix_subscriber(
    broker: Any,
    source: str,
    handler: MatrixHandler[Any],
    *,
    request_model: type[MxRequest[Any]] = MxRequest,
    quarantine: str | None = None,
    reply_to_field: bool = False,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> MatrixConsumer:
    """Declare a Matrix request handler: it returns ``req.reply(...)`` or ``req.fail(...)``.

    ```python
    from faststream.redis import RedisBroker
    from envelopekit.faststream import MatrixConsumer, matrix_subscriber
    from envelopekit.matrix import MxRequest

    broker = RedisBroker("redis://127.0.0.1:6379")
    consumer = matrix_subscriber(
        broker, "fs", lambda req: req.reply({"ok": True}), request_model=MxRequest
    )
    assert isinstance(consumer, MatrixConsumer)
    ```

    Args:
        broker: a FastStream ``RedisBroker``, ``RabbitBroker`` or ``KafkaBroker``.
        source: the list, queue or topic to consume.
        handler: sync (run in a worker thread, as FastStream runs its own) or async, given
            the request, typed by ``request_model`` (without one, the plain
            ``MxRequest[Any]``: a :data:`MatrixHandler`).
        request_model: the class each request is validated by and the handler gets (typed
            so): ``MxRequest[ExpandDirArgs]``, or a class of your own that extends one, its
            fields and validators applied with the spec's rules (a field it adds is no unknown
            key to it); a request it refuses is quarantined with the rule ids it reports.
        quarantine: where refused messages go; ``<source>.quarantine`` by default.
        reply_to_field: also answer a message that carries no FastStream reply address at
            the request's own ``replyTo`` (the Matrix convention ``$replies.<id>``).
        worker_id: Redis only: names this worker's processing list, which no other running
            worker may share; ``None``: an id unique to this worker (as
            :func:`~envelopekit.faststream.babelqueue_subscriber`).
        subscriber_options: passed to ``broker.subscriber``.

    Raises:
        TypeError: for a ``request_model`` that is no ``MxRequest`` class.
    """
    return MatrixConsumer(
        broker,
        source,
        handler,
        request_model=request_model,
        quarantine=quarantine,
        reply_to_field=reply_to_field,
        worker_id=worker_id,
        **subscriber_options,
    )
