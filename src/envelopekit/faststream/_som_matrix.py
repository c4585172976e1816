"""SOM and Matrix consumers on a FastStream broker: checked, typed, refusals quarantined.

A message :func:`envelopekit.check` refuses, or a valid one this subscriber does not take,
goes as received to the quarantine destination with its rule ids in
:data:`~envelopekit.faststream.RULES_HEADER`; it never raises into the broker loop.

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
from typing import Any, TypeVar, get_args, overload

from faststream import Context, Response, StreamMessage
from pydantic import ValidationError

from .. import rules
from .._check import check
from .._violations import Violation, violation, violations
from ..matrix import MxErrorCode, MxRequest, MxResponse
from ..som import FamilyPayload, SomEnvelope, UnvalidatedPayload
from ._endpoint import RULES_HEADER, Endpoint, run_handler

__all__ = ["MatrixConsumer", "MatrixHandler", "SomConsumer", "matrix_subscriber", "som_subscriber"]

P = TypeVar("P", bound="FamilyPayload | UnvalidatedPayload")
Q = TypeVar("Q", bound="FamilyPayload | UnvalidatedPayload")
R = TypeVar("R", bound="FamilyPayload | UnvalidatedPayload")

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
    """Consumes SOM messages, optionally of some families; built by :func:`som_subscriber`."""

    def __init__(
        self,
        broker: Any,
        source: str,
        handler: Callable[[SomEnvelope, Any], object],
        *,
        family: Any = None,
        quarantine: str | None = None,
        worker_id: str | None = None,
        **subscriber_options: Any,
    ) -> None:
        # Here, not by quarantining every message as `subscriber.unexpected`.
        self._takes = None if family is None else _families(family)
        self.handler = handler
        self.family = family
        super().__init__(broker, source, quarantine, worker_id, subscriber_options)

    async def handle(self, message: StreamMessage[Any]) -> None:
        """Check one SOM message; run the handler with it and its typed payload, or quarantine."""
        body = bytes(message.body)
        verdict = check(body, spec="som")
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


MatrixHandler = Callable[[Any], "MxResponse[Any] | Awaitable[MxResponse[Any] | None] | None"]
"""A Matrix request handler: the reply (``req.reply(...)``, ``req.fail(...)``), or ``None``."""


class MatrixConsumer(_Checked):
    """Answers Matrix requests; built by :func:`matrix_subscriber`."""

    def __init__(
        self,
        broker: Any,
        source: str,
        handler: MatrixHandler,
        *,
        request_model: type[MxRequest[Any]] = MxRequest,
        quarantine: str | None = None,
        reply_to_field: bool = False,
        worker_id: str | None = None,
        **subscriber_options: Any,
    ) -> None:
        self.handler = handler
        self.request_model = request_model
        self.reply_to_field = reply_to_field
        super().__init__(broker, source, quarantine, worker_id, subscriber_options)

    async def handle(self, message: StreamMessage[Any]) -> Response | None:
        """Check one request, run the handler, and return its reply for FastStream to send."""
        body = bytes(message.body)
        verdict = check(body, spec="matrix")
        if verdict.envelope is None:
            await self._quarantine(message, body, verdict.violations)
            return None
        if not isinstance(verdict.envelope, MxRequest):
            found = violation(
                rules.SUBSCRIBER_UNEXPECTED,
                "",
                "a Matrix reply or error payload where requests are consumed",
            )
            await self._quarantine(message, body, [found])
            return None
        request: MxRequest[Any] = verdict.envelope
        if self.request_model is not MxRequest:
            try:
                request = self.request_model.model_validate_json(body)
            except ValidationError as exc:
                await self._quarantine(message, body, violations(exc, model=self.request_model))
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


@overload
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, P], object],
    *,
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
    family: UnionType,
    quarantine: str | None = None,
    worker_id: str | None = None,
    **subscriber_options: Any,
) -> SomConsumer: ...
def som_subscriber(
    broker: Any,
    source: str,
    handler: Callable[[SomEnvelope, Any], object],
    *,
    family: Any = None,
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
        quarantine: where refused messages go; ``<source>.quarantine`` by default.
        worker_id: Redis only: names this worker's processing list, which no other running
            worker may share; ``None``: an id unique to this worker (as
            :func:`~envelopekit.faststream.babelqueue_subscriber`).
        subscriber_options: passed to ``broker.subscriber``.

    Raises:
        TypeError: for a ``family`` that names anything but SOM's payload models (named).
    """
    return SomConsumer(
        broker,
        source,
        handler,
        family=family,
        quarantine=quarantine,
        worker_id=worker_id,
        **subscriber_options,
    )


def matrix_subscriber(
    broker: Any,
    source: str,
    handler: MatrixHandler,
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
            the request (typed by ``request_model``).
        request_model: e.g. ``MxRequest[ExpandDirArgs]``; a payload that does not fit is
            quarantined with the model's rule ids.
        quarantine: where refused messages go; ``<source>.quarantine`` by default.
        reply_to_field: also answer a message that carries no FastStream reply address at
            the request's own ``replyTo`` (the Matrix convention ``$replies.<id>``).
        worker_id: Redis only: names this worker's processing list, which no other running
            worker may share; ``None``: an id unique to this worker (as
            :func:`~envelopekit.faststream.babelqueue_subscriber`).
        subscriber_options: passed to ``broker.subscriber``.
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
