"""The request envelope (``request.json``) and the request/reply helpers."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Annotated, Any, ClassVar, Generic, Protocol, TypedDict, cast, overload

from orjson import Fragment
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import Never, TypeVar, Unpack

from .. import rules
from .._arguments import optional_argument
from .._bounds import refuse_unbounded
from .._compat import MISSING
from .._errors import ProducerError
from .._ids import uuid7
from .._json import plain_json, refuse_unwritable
from .._model import ModelT, typed_by_model
from .._settings import Settings, given_settings
from .._text import WRITTEN, InstancesRead
from .._violations import Violation, shown, violation, violations
from ._base import (
    JsonData,
    LamportValue,
    MxModel,
    number_warnings,
    payload_data,
    unsafe_integer,
)
from ._error_payload import MxErrorCode, MxErrorPayload
from ._lamport import LamportClock
from ._ops import REPLY_OP, iface_warnings, op_problem, reply_inbox
from ._response import MxResponse
from ._trace import (
    is_span_id,
    is_trace_id,
    new_span_id,
    new_trace_id,
    require_span_id,
    require_trace_id,
    trace_warnings,
)

__all__ = ["MxRequest", "ProducingKeywords"]

ArgsT = TypeVar("ArgsT", default=JsonData)
# Model payloads keep their class in the type (`ModelT`); JSON data is typed as the runtime
# holds it, `JsonData` (an unparametrised envelope), so `create("$join", {})` needs no annotation.
# JSON data given to a parametrised class is validated into its type: the class is the result.
_Request = TypeVar("_Request", bound="MxRequest[Any]")

_Made = TypeVar("_Made", covariant=True)
_Taken = TypeVar("_Taken", contravariant=True)
_Any = TypeVar("_Any")


class _Makes(Protocol[_Made, _Taken]):
    """A request class as its constructor types it: what it makes of which payload."""

    def __call__(self, *, op: str, payload: _Taken) -> _Made: ...


class _MakesAny(Protocol):
    """A request class whose constructor takes any payload: one not parametrised (mypy's)."""

    def __call__(self, *, op: str, payload: _Any) -> MxRequest[_Any]: ...


NonEmptyStr = Annotated[str, Field(min_length=1)]


class ProducingKeywords(TypedDict, total=False):
    """The keywords :meth:`MxRequest.create` takes after ``op`` and ``payload``.

    What the type checkers read them as (a misspelt keyword is a type error); the method itself
    declares each one, with the meanings it documents. :meth:`MxRequest.reply` and
    :meth:`MxRequest.fail` take their own (``clock``, ``from_``, ``settings``).
    """

    iface: str | None
    expect_reply: bool
    correlation_id: str | None
    reply_to: str | None
    clock: LamportClock | None
    lamport: int | None
    from_: str | None
    trace_id: str | None
    parent_span_id: str | None
    settings: Settings | None


def _refused(exc: ValidationError, model: type[BaseModel], payload: object) -> ProducerError:
    """The producer's error for a request or response that failed its validation."""
    # A value no JSON text holds (an object, a set) is a union mismatch to pydantic, mapped
    # against JSON's own members; the producers' JSON check names it at its member instead.
    if not isinstance(payload, BaseModel):
        try:
            plain_json(payload, "/payload")
        except ProducerError as not_json:
            return not_json
    # The producers fill fields by their Python names, which pydantic's error locations keep:
    # a pointer names the member as it is on the wire (`/correlationId`, not `/correlation_id`).
    wire = _wire_names(model)
    found = violations(exc, model=model)
    for i, one in enumerate(found):
        head, slash, rest = one.pointer[1:].partition("/")
        if head in wire:
            found[i] = replace(one, pointer=f"/{wire[head]}{slash}{rest}")
    return ProducerError.of(found)


@cache
def _wire_names(model: type[BaseModel]) -> dict[str, str]:
    """Each field's wire name, by its Python name (the name the producers fill it by)."""
    fields: dict[str, Any] = model.model_fields
    return {name: info.serialization_alias or name for name, info in fields.items()}


def _produced(
    model: type[BaseModel], fields: dict[str, Any], payload: object, settings: Settings | None
) -> Any:
    """The envelope ``model`` validates of ``fields``, refused as ``check`` would refuse it.

    Its wire text is written first (a model payload's as its own writing wrote it), and refused
    past the bounds ``check`` reads (``envelopekit._bounds``). Where orjson wrote it of the
    very data validated (a JSON payload), validation is told so (:data:`WRITTEN`), and does not
    write that data again to probe it (``_text.refuse_unreadable``).
    """
    names = _wire_names(model)
    wire = {names[name]: value for name, value in fields.items()}
    if isinstance(payload, BaseModel):
        wire["payload"] = Fragment(refuse_unwritable(payload, "/payload"))
    text = refuse_unbounded(wire, settings)
    # A model payload's text is its serializer's, not a probe of its members: not told.
    context = None if text is None or isinstance(payload, BaseModel) else {WRITTEN: text}
    try:
        # `model(**fields)`, with the context: by the Python names, as `WireNames` reads them.
        return model.model_validate(fields, context=context, by_alias=True, by_name=True)
    except ValidationError as exc:
        raise _refused(exc, model, payload) from exc


def _unpaired(correlation_id: object, reply_to: object) -> ProducerError:
    """The refusal of half a reply pair on a request that expects no reply.

    A tell carrying ``correlationId`` (or ``replyTo``) alone is what the request/reply lint
    reports (matrix.md §14.8 settles §9 S-3's open question so): the SDK does not write what it
    warns of.
    """
    given = (
        ("correlation_id", "/correlationId", correlation_id),
        ("reply_to", "/replyTo", reply_to),
    )
    found = [
        violation(
            rules.REPLY_UNPAIRED, at, f"{name} given but expect_reply is False: no reply is asked"
        )
        for name, at, value in given
        if value is not None
    ]
    return ProducerError("; ".join(one.message for one in found), found)


def _for_payload(generic: type[Any], payload: object) -> type[Any]:
    # A model's numbers are read by the typed envelope as a received one's are (`MxModel`). A
    # response's error payload is its own branch; to a request it is a model like any other.
    if not isinstance(payload, BaseModel) or (
        isinstance(payload, MxErrorPayload) and issubclass(generic, MxResponse)
    ):
        return generic
    return typed_by_model(generic, payload)


class MxRequest(MxModel, Generic[ArgsT]):
    """A request: ``{op, payload, iface?, correlationId?, replyTo?, lamport?, from?, ...}``.

    Closed, as ``request.json`` is written: an unknown top-level key is a violation
    (``request.additionalProperties``). ``payload`` is any JSON value by default; parametrise
    the class to type it, e.g. ``MxRequest[ExpandDirArgs]`` (its numbers, as the type writes
    them, are held to the JSON payload's rules).

    Validation context (``model_validate_json(raw, context={...})``): ``"max_violations"``,
    the most number warnings :meth:`envelope_warnings` builds for each part (past it they are
    counted in one ``violations.truncated``); defaults to ``Settings.max_violations``.
    ``ek.check`` passes its settings' value.

    Example:
        >>> req = MxRequest.create("fs.list", {"path": "/"}, expect_reply=True)
        >>> req.reply_to == "$replies." + req.correlation_id
        True
    """

    __schema_name__: ClassVar[str] = "request"
    model_config = ConfigDict(extra="forbid")

    op: str
    """The operation: ``<area>.<verb>``, ``$<verb>``, or an interface method (``ExpandDir``)."""
    payload: Annotated[ArgsT, InstancesRead()]
    """The op's input."""
    iface: str | MISSING = MISSING
    """The contracted interface, e.g. ``"FsDaemon@1"``."""
    correlation_id: NonEmptyStr | MISSING = Field(
        default=MISSING, validation_alias="correlationId", serialization_alias="correlationId"
    )
    """Unique per request; the reply echoes it."""
    reply_to: NonEmptyStr | MISSING = Field(
        default=MISSING, validation_alias="replyTo", serialization_alias="replyTo"
    )
    """Where the reply goes, by convention ``$replies.<correlationId>``."""
    lamport: LamportValue | MISSING = MISSING
    """The sender's Lamport timestamp."""
    from_: str | MISSING = Field(
        default=MISSING, validation_alias="from", serialization_alias="from"
    )
    """The sender's mount path (informational; never trust it for authorization)."""
    trace_id: str | MISSING = Field(
        default=MISSING, validation_alias="traceId", serialization_alias="traceId"
    )
    """The trace id (W3C Trace Context)."""
    span_id: str | MISSING = Field(
        default=MISSING, validation_alias="spanId", serialization_alias="spanId"
    )
    """This request's span id."""
    parent_span_id: str | MISSING = Field(
        default=MISSING, validation_alias="parentSpanId", serialization_alias="parentSpanId"
    )
    """The span this request was sent from, if any."""

    @property
    def expects_reply(self) -> bool:
        """Whether the request carries a reply address (``replyTo``)."""
        return self.reply_to is not MISSING

    # For the type checkers; what runs is the implementation below. JSON data is validated into
    # the class's type: the class is the result. A model given to a class whose payload type is
    # a model (`Own(MxRequest[Model])`, `MxRequest[Model]`) makes that class, as the class's
    # constructor types it, and one of another class is refused, as at run time. Given to a
    # class whose payload is JSON data, it makes the class parametrised by the model's: pyright
    # reads the unparametrised `MxRequest` as `MxRequest[JsonData]`, mypy as still generic (only
    # a generic constructor matches it: the last variant is mypy's). The protocols read `cls`
    # by its constructor, which pyright's `classmethod`, typed for a `type[...]`, reports.
    @overload
    @classmethod
    def create(
        cls: type[_Request], op: str, payload: JsonData, **keywords: Unpack[ProducingKeywords]
    ) -> _Request: ...
    @overload
    @classmethod
    def create(
        cls: type[MxRequest[JsonData]],
        op: str,
        payload: ModelT,
        **keywords: Unpack[ProducingKeywords],
    ) -> MxRequest[ModelT]: ...
    @overload
    @classmethod  # pyright: ignore[reportArgumentType]
    def create(
        cls: _Makes[_Request, ModelT],
        op: str,
        payload: ModelT,
        **keywords: Unpack[ProducingKeywords],
    ) -> _Request: ...
    @overload
    @classmethod  # pyright: ignore[reportArgumentType]
    def create(  # pyright: ignore[reportOverlappingOverload]  # (mypy's)
        cls: _MakesAny,
        op: str,
        payload: ModelT,
        **keywords: Unpack[ProducingKeywords],
    ) -> MxRequest[ModelT]: ...
    @classmethod
    def create(
        cls,
        op: str,
        payload: Any,
        *,
        iface: str | None = None,
        expect_reply: bool = False,
        correlation_id: str | None = None,
        reply_to: str | None = None,
        clock: LamportClock | None = None,
        lamport: int | None = None,
        from_: str | None = None,
        trace_id: str | None = None,
        parent_span_id: str | None = None,
        settings: Settings | None = None,
    ) -> MxRequest[Any]:
        """Build a request, minting what is not given.

        A fresh W3C ``spanId`` is always minted, and a ``traceId`` unless one is given to
        continue. With ``expect_reply`` the request gets a ``correlationId`` (a UUIDv7 unless
        given) and the reply inbox ``$replies.<correlationId>`` (unless ``reply_to`` is given).

        The request is of the class called: a user's ``class Own(MxRequest[Model])`` makes an
        ``Own``, and is typed so; given a model of another class it is a type error, as it is
        refused at run time. Limits of the type checkers: a model given to an unparametrised
        subclass (``class Mine(MxRequest)``) makes a ``Mine[Model]``, typed
        ``MxRequest[Model]`` (the checkers read ``Mine`` as not generic); mypy reads
        ``MxRequest[Model].create`` as the unparametrised class's, so only pyright refuses it a
        model of another class.

        Args:
            op: the operation name (any string but ``"$reply"``, the response op).
            payload: the op's input: JSON data or a model instance.
            iface: the contracted interface, e.g. ``"FsDaemon@1"``; one off ``Name@N`` is sent
                as given and noted by :meth:`envelope_warnings` (``iface.convention``), as an
                op off convention is.
            expect_reply: mint ``correlationId`` and ``replyTo`` for a request/reply call.
            correlation_id: the correlation id to use instead of a fresh one (with
                ``expect_reply`` only).
            reply_to: the reply address to use instead of ``$replies.<cid>`` (with
                ``expect_reply`` only).
            clock: a Lamport clock to tick for the ``lamport`` stamp.
            lamport: an explicit stamp instead of ``clock``.
            from_: the sender's mount path; ``settings.matrix_from`` when not given.
            trace_id: the trace to continue (a W3C trace-id).
            parent_span_id: the span this request is sent from (a W3C span id).
            settings: the settings to read defaults from; the environment's when not given.

        Raises:
            ProducerError: for the op ``"$reply"`` or ``""``, both ``clock`` and ``lamport``,
                ``parent_span_id`` without ``trace_id``; and, with ``violations``
                naming each rule and pointer, for ``correlation_id`` or ``reply_to`` without
                ``expect_reply`` (``reply.unpaired``, which the lint reports of such a request),
                for a non-W3C trace id
                (``trace_context.format``), a payload that is not JSON data (NaN, Infinity,
                an integer beyond signed 64-bit, a non-JSON value) or an invalid field; a message
                larger or nesting deeper than ``check`` with ``settings`` reads
                (``message.too_large``, ``message.too_deep``), as :meth:`reply` and :meth:`fail`
                refuse theirs.
            TypeError: for a ``clock`` that is no :class:`LamportClock`, or ``settings`` no
                :class:`~envelopekit.Settings` (nor ``None``).
        """
        if op == REPLY_OP:
            raise ProducerError("'$reply' is the response op; answer with req.reply()/req.fail()")
        if op == "":  # (an op that is no string is refused with its rule, as the schema's)
            raise ProducerError("op must not be empty")
        if not expect_reply and (correlation_id is not None or reply_to is not None):
            raise _unpaired(correlation_id, reply_to)
        clock = optional_argument("clock", clock, LamportClock)
        if clock is not None and lamport is not None:
            raise ProducerError("give either clock or lamport, not both")
        settings = given_settings(settings)
        fields: dict[str, Any] = {"op": op, "payload": payload}
        if iface is not None:
            fields["iface"] = iface
        if expect_reply:
            correlation_id = correlation_id if correlation_id is not None else uuid7()
            if reply_to is not None:
                fields["reply_to"] = reply_to
            elif isinstance(correlation_id, str):  # (one that is no string is refused below)
                fields["reply_to"] = reply_inbox(correlation_id)
        if correlation_id is not None:
            fields["correlation_id"] = correlation_id
        if clock is not None:
            fields["lamport"] = clock.tick()
        elif lamport is not None:
            fields["lamport"] = lamport
        sender = from_ if from_ is not None else settings.matrix_from
        if sender is not None:
            fields["from_"] = sender
        fields["trace_id"] = require_trace_id(trace_id) if trace_id is not None else new_trace_id()
        fields["span_id"] = new_span_id()
        if parent_span_id is not None:
            if trace_id is None:
                # A span id names a span within its trace (W3C): with a fresh trace the parent
                # would be a span of no trace this request names (as reply() declines to write).
                raise ProducerError("parent_span_id without trace_id: give the trace it is in")
            fields["parent_span_id"] = require_span_id(parent_span_id, "parent_span_id")
        created: MxRequest[Any] = _produced(_for_payload(cls, payload), fields, payload, settings)
        return created

    @overload
    def reply(
        self,
        payload: ModelT,
        *,
        clock: LamportClock | None = None,
        from_: str | None = None,
        settings: Settings | None = None,
    ) -> MxResponse[ModelT]: ...
    @overload
    def reply(
        self,
        payload: JsonData,
        *,
        clock: LamportClock | None = None,
        from_: str | None = None,
        settings: Settings | None = None,
    ) -> MxResponse[JsonData]: ...
    def reply(
        self,
        payload: Any,
        *,
        clock: LamportClock | None = None,
        from_: str | None = None,
        settings: Settings | None = None,
    ) -> MxResponse[Any]:
        """Answer this request with a result payload.

        The response echoes ``correlationId`` and ``iface`` (as received: one off ``Name@N`` is
        noted by its warnings too), continues the trace (same ``traceId``, a new ``spanId``,
        ``parentSpanId`` = this request's ``spanId``) and ticks the Lamport clock: ``clock``
        observes this request's stamp and ticks for the send; without a clock the stamp is this
        request's plus one. The SDK emits only W3C ids: a request whose ``traceId`` is not one (or
        that has none) gets a fresh trace, without a ``parentSpanId``; one whose ``spanId`` is not
        one, no ``parentSpanId`` (its W3C ``traceId`` is still continued).

        Args:
            payload: the result, e.g. ``{"ok": True, ...}`` or a ``Page``; a payload with
                ``ok: false`` is read as an error payload (prefer :meth:`fail`).
            clock: the replier's Lamport clock.
            from_: the replier's mount path; ``settings.matrix_from`` when not given.
            settings: the settings to read defaults from.

        Raises:
            ProducerError: when this request has no ``correlationId`` (nothing to echo) or
                its ``op`` is ``"$reply"`` (a reply read as a request); with ``violations``
                naming each rule and pointer, when the payload is not JSON data or a model
                (NaN, Infinity, an integer beyond signed 64-bit, a non-JSON value).
            TypeError: for a ``clock`` that is no :class:`LamportClock`, or ``settings`` no
                :class:`~envelopekit.Settings` (nor ``None``).
        """
        fields = self._reply_fields(clock, from_, settings)
        fields["payload"] = payload
        model = _for_payload(MxResponse, payload)
        answer: MxResponse[Any] = _produced(model, fields, payload, settings)
        return answer

    def fail(
        self,
        code: MxErrorCode,
        error: str,
        *,
        status_code: int | None = None,
        details: JsonData | None = None,
        clock: LamportClock | None = None,
        from_: str | None = None,
        settings: Settings | None = None,
    ) -> MxResponse[Never]:
        """Answer this request with an error payload.

        Everything :meth:`reply` does, with the payload
        ``{ok: false, error, code, statusCode, details?}``; ``statusCode`` is the code's HTTP
        status (:attr:`MxErrorCode.http_status`) unless given. The result type is
        ``MxResponse[Never]``: its payload can only be an error, and it is accepted wherever a
        typed response (``MxResponse[Page[Entry]]``) is expected.

        Args:
            code: the error code (``OK`` is refused: it is not an error).
            error: the human-readable message.
            status_code: the HTTP status to write instead of the code's.
            details: structured detail (any JSON); ``None`` leaves it out.
            clock: the replier's Lamport clock.
            from_: the replier's mount path; ``settings.matrix_from`` when not given.
            settings: the settings to read defaults from.

        Raises:
            ProducerError: when this request has no ``correlationId`` or its ``op`` is
                ``"$reply"``; with ``violations`` naming each rule and pointer
                (``/payload/...``), for a code that is none of the eleven, ``OK``, a status
                that is no integer or outside 100-599, ``details`` or ``error`` that are not
                JSON.
            TypeError: for a ``clock`` that is no :class:`LamportClock`, or ``settings`` no
                :class:`~envelopekit.Settings` (nor ``None``).
        """
        try:
            error_payload = MxErrorPayload.of(code, error, status_code=status_code, details=details)
        except ProducerError as exc:
            if not exc.violations:
                raise
            # Validated on its own, the payload's pointers are relative to it.
            found = [replace(v, pointer="/payload" + v.pointer) for v in exc.violations]
            raise ProducerError.of(found) from exc
        fields = self._reply_fields(clock, from_, settings)
        fields["payload"] = error_payload
        return cast("MxResponse[Never]", _produced(MxResponse, fields, error_payload, settings))

    def _reply_fields(
        self, clock: LamportClock | None, from_: str | None, settings: Settings | None
    ) -> dict[str, Any]:
        if self.correlation_id is MISSING:
            raise ProducerError("this request has no correlationId: it cannot be answered")
        if self.op == REPLY_OP:
            # A reply read as a request (its fields are all a request's; matrix.md R-3):
            # answering it would start replies answering replies.
            raise ProducerError("'$reply' is a reply, never answered (classify() reads it)")
        clock = optional_argument("clock", clock, LamportClock)
        settings = given_settings(settings)
        fields: dict[str, Any] = {"op": REPLY_OP, "correlation_id": self.correlation_id}
        if self.iface is not MISSING:
            fields["iface"] = self.iface
        received = None if self.lamport is MISSING else self.lamport
        if clock is not None:
            clock.observe(received)
            fields["lamport"] = clock.tick()
        elif received is not None:
            fields["lamport"] = received + 1
        sender = from_ if from_ is not None else settings.matrix_from
        if sender is not None:
            fields["from_"] = sender
        # Continue the caller's trace when it is a W3C one; otherwise start a fresh trace
        # rather than propagate an id the SDK would never emit itself. A fresh trace's first
        # span has no parent: the caller's span is in no trace the reply names (W3C ignores a
        # parent-id whose trace-id is invalid).
        trace = self.trace_id
        fields["span_id"] = new_span_id()
        if isinstance(trace, str) and is_trace_id(trace):
            fields["trace_id"] = trace
            parent = self.span_id
            if isinstance(parent, str) and is_span_id(parent):
                fields["parent_span_id"] = parent
        else:
            fields["trace_id"] = new_trace_id()
        return fields

    def _notes(self) -> list[Violation]:
        """Lints for ``envelope_warnings``: op and iface names, reply pair, trace ids, integers."""
        found: list[Violation] = []
        problem = op_problem(self.op)
        if problem is not None:
            found.append(violation(rules.OP_CONVENTION, "/op", problem))
        if self.iface is not MISSING:
            found += iface_warnings(self.iface)
        has_cid = self.correlation_id is not MISSING
        has_reply_to = self.reply_to is not MISSING
        if has_reply_to and not has_cid:
            found.append(
                violation(rules.REPLY_UNPAIRED, "/replyTo", "replyTo without correlationId")
            )
        elif has_cid and not has_reply_to:
            found.append(
                violation(
                    rules.REPLY_UNPAIRED,
                    "/correlationId",
                    "correlationId without replyTo: no reply can be delivered",
                )
            )
        elif has_cid and has_reply_to and self.reply_to != reply_inbox(str(self.correlation_id)):
            found.append(
                violation(
                    rules.REPLY_TO_CONVENTION,
                    "/replyTo",
                    f"replyTo {shown(self.reply_to)} is not $replies.<correlationId>",
                )
            )
        found += trace_warnings(self.trace_id, self.span_id, self.parent_span_id)
        if self.lamport is not MISSING:
            found += unsafe_integer(self.lamport, "/lamport")
        found += number_warnings(self, payload_data(self), "/payload")
        return found
