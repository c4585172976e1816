"""The canonical envelope ``{job, trace_id, data, meta, attempts}`` (schema_version 1)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from functools import cache, partial
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Generic, cast, get_args, overload

from orjson import Fragment
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
)
from pydantic import model_validator as _model_validator
from pydantic.config import ExtraValues
from pydantic_core import CoreSchema, SchemaValidator, core_schema
from typing_extensions import Self, TypeVar

from .. import rules
from .._bounds import bounded, refuse_unbounded
from .._compat import MISSING
from .._doors import validate_large_json
from .._errors import ProducerError
from .._failfast import (
    FULL_REPORT_BYTES,
    TOO_LARGE,
    JsonParse,
    TooLarge,
    first_parse,
    large_validator,
    own_config,
    schemas_in,
)
from .._formats import UuidStr
from .._ids import now_ms, uuid4
from .._json import (
    INT64_MAX,
    PARSER_MAX_DEPTH,
    PLAIN_NUMBERS,
    dumps,
    needs_scan,
    plain_json,
    plain_json_nesting,
    plain_text,
    proven_context,
    refuse_non_finite,
    refuse_non_json,
    refuse_unwritable,
    scan_numbers,
    written_field,
    written_fields,
)
from .._model import (
    ModelT,
    WireModel,
    any_is_unparametrised,
    attach_warnings,
    attached_warnings,
    free_type_variable,
    own_fields,
    own_members,
    typed_by_model,
)
from .._settings import Settings, get_settings, given_settings
from .._text import (
    WRITTEN,
    InstancesRead,
    call_kind,
    instance_data,
    probed,
    text_checked_schema,
)
from .._violations import (
    ReadAs,
    Violation,
    as_pydantic_error,
    context_cap,
    printable,
    rule_error,
    violation,
    violations,
)
from ._dead_letter import DeadLetter, DeadLetterReason, cut_text
from ._fast import SECONDS_THRESHOLD, FastPath
from ._forbidden import (
    FORBIDDEN_META_KEYS,
    FORBIDDEN_TOP_LEVEL_KEYS,
    forbidden_keys_read,
    opened_by_the_call,
)
from ._meta import SCHEMA_VERSION, BabelMeta
from ._urn import ASCII_WHITESPACE, NOT_BLANK_PATTERN, is_blank

__all__ = ["BabelEnvelope", "DataT"]

logger = logging.getLogger("envelopekit.babelqueue")

DataT = TypeVar("DataT", default=dict[str, Any])
"""The type of ``data``: a JSON object by default, or the user's own model."""
_Created = TypeVar("_Created", bound="BabelEnvelope[Any]")

_REASONS = frozenset(get_args(DeadLetterReason))
# `data` types whose values are JSON itself (what `create` copies, what JSON parses to).
_JSON_DATA_TYPES: Final[frozenset[object]] = frozenset((DataT, dict[str, Any], Any))


def _object_unless_typed(annotation: Any) -> Any:
    """``data``'s type as read: a JSON object where a type variable leaves it free.

    A user's subclass still generic in its own (``class Mine(BabelEnvelope[X], Generic[X])``)
    reads ``data`` as ``DataT``'s default, not as pydantic's ``Any``; ``Mine[Item]`` as ``Item``.
    """
    return dict[str, Any] if free_type_variable(annotation) else annotation


_READ_AS_OBJECT: Final = ReadAs(_object_unless_typed)


@cache
def _typed_data(cls: type[BabelEnvelope[Any]]) -> bool:
    """Whether ``cls`` types ``data`` as anything but a JSON object of JSON values."""
    annotation = cls.model_fields["data"].annotation
    return annotation not in _JSON_DATA_TYPES and not free_type_variable(annotation)


def _model_data(cls: type[BabelEnvelope[Any]]) -> bool:
    """Whether ``cls`` types ``data`` as a pydantic model."""
    annotation = cls.model_fields["data"].annotation
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


_CLOSED: Final = frozenset({"forbid", "ignore"})
"""The ``extra`` values of a user's subclass that would keep the forbidden keys from K-15."""


@cache
def _ignores_unknown_keys(cls: type[BabelEnvelope[Any]]) -> bool:
    """Whether a user's subclass sets ``extra="ignore"`` (read open, see `forbidden_keys_read`)."""
    return cls.model_config.get("extra") == "ignore"


# Keys an unknown-key extra may never be emitted as: the canonical ones, the alias, the forbidden.
_NOT_EXTRA = frozenset(
    {"job", "trace_id", "data", "meta", "attempts", "dead_letter", "urn"}
    | FORBIDDEN_TOP_LEVEL_KEYS.keys()
)


class BabelEnvelope(WireModel, Generic[DataT]):
    """A BabelQueue v1 message: ``job, trace_id, data, meta, attempts[, dead_letter]``.

    Consuming: ``BabelEnvelope.model_validate_json(raw)`` accepts ``urn`` as an inbound alias of
    ``job``, keeps unknown top-level and ``meta`` keys (re-emitted unchanged by :meth:`to_json`),
    and drops the forbidden legacy keys with a warning (:meth:`envelope_warnings`, where its
    validators also note integers beyond 2^53-1, ``data`` integers beyond int64 and a
    ``created_at`` in seconds). Parametrise it, ``BabelEnvelope[OrderCreated]``, to validate
    ``data`` into your own model.

    Validation context (``model_validate_json(raw, context={...})``): ``"max_violations"``,
    the most warnings built (past it they are counted in one ``violations.truncated``);
    defaults to ``Settings.max_violations``. ``ek.check`` passes its settings' value.

    Producing: :meth:`create`, :meth:`child`, :meth:`retried`, :meth:`dead_lettered`. The model
    is frozen: ``meta`` and ``data`` are read-only by contract; only ``attempts`` changes, through
    :meth:`retried`.
    """

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        strict=True,
        json_schema_extra={
            # The identity rule: a non-blank `job`, or failing that a non-blank `urn`.
            "anyOf": [
                {"required": ["job"], "properties": {"job": {"pattern": NOT_BLANK_PATTERN}}},
                {"required": ["urn"], "properties": {"urn": {"pattern": NOT_BLANK_PATTERN}}},
            ]
        },
    )
    __schema_name__: ClassVar[str] = "message-envelope"

    if not TYPE_CHECKING:

        def __class_getitem__(cls, item: Any) -> Any:
            # As a data type `Any` took any JSON value (`[1]`): `create` wrote messages `check`
            # and the other SDKs refuse. A user's subclass generic in its own type variable
            # types `data` with that one.
            if any_is_unparametrised(cls, item, cls.__pydantic_fields__["data"].annotation):
                return cls
            return super().__class_getitem__(item)

    job: StrictStr = ""
    """The message URN, its language-agnostic identity (from ``urn`` when ``job`` is absent)."""
    trace_id: UuidStr
    """Cross-service correlation id, forwarded unchanged across every hop."""
    data: Annotated[DataT, _READ_AS_OBJECT, InstancesRead()]
    """The business payload: a JSON object."""
    meta: BabelMeta
    """Producer-set, immutable metadata."""
    attempts: Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]
    """Transport-level delivery counter, starting at 0."""
    dead_letter: DeadLetter | MISSING = MISSING
    """Why the message was dead-lettered; present only on a dead-letter queue."""
    urn: StrictStr | MISSING = Field(default=MISSING, exclude=True, repr=False)
    """The inbound alias of ``job``, as received; never emitted."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The model's schema, refusing in Python mode what JSON text cannot carry.

        Strings that are not Unicode, and nesting deeper than the JSON parser reads. With a
        parametrised ``data`` that is no model, Python data that is JSON data (``json.loads``
        output: FastAPI's, FastStream's) is read as its text is: the envelope is strict, and
        pydantic's strict Python mode takes a dataclass only as an instance, a date-time only
        as a ``datetime``.
        """
        # Held in another schema (a FastAPI body, FastStream's arguments), the common message
        # of Python data takes the fast path as `model_validate` does; the class is not yet
        # bound while its own schema is built, which is no held use.
        held = _held_door if cls is globals().get("BabelEnvelope") else None
        schema = text_checked_schema(cls, source, handler, held)
        if cls.model_config.get("extra") in _CLOSED:
            schema = forbidden_keys_read(schema, cls, FORBIDDEN_TOP_LEVEL_KEYS, dropped=True)
        if not _typed_data(cls) or _model_data(cls):
            return schema  # a model's own config decides how it reads Python data
        # The probe shows an `__init__` (whose instance the text's own would leave empty) and
        # run-time options; what it read goes on past the model, or in an `__init__` to the
        # model, which reads its fields from their text.
        return core_schema.json_or_python_schema(
            json_schema=schema,
            python_schema=core_schema.chain_schema(
                [
                    probed(partial(_read_as_text, cls)),
                    core_schema.no_info_wrap_validator_function(
                        _take_read, _reading_fields(schema, cls)
                    ),
                ]
            ),
        )

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Validate a message given as Python data (see the class docstring for ``context``).

        A dict of plain JSON data is first tried by the fast path (:mod:`._fast`); whatever it
        does not accept is validated, and reported, by the model's own validator, exactly as
        without it. A dict of plain JSON data over 16 KiB (its JSON, as orjson writes it) is
        validated as :meth:`model_validate_json` validates such a message: one error per array
        at most, the same verdict.
        """
        __tracebackhide__ = True
        if (
            cls is BabelEnvelope
            and type(obj) is dict
            and strict is None
            and extra is None
            and not from_attributes
            and by_alias is None
            and by_name is None
        ):
            found: Self | TooLarge | None = _fast_python(cast("dict[str, Any]", obj), context)
            if found is TOO_LARGE:
                # Bounded as model_validate_json bounds the same message: one error per array.
                large: Self = large_validator(cls).validate_python(obj, context=context)
                return large
            if isinstance(found, BabelEnvelope):
                return found
        return super().model_validate(
            obj,
            strict=strict,
            extra=extra,
            from_attributes=from_attributes,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Validate a message given as JSON (see the class docstring for ``context``).

        The common message is validated with no Python call (:mod:`._fast`); whatever that
        validator does not accept is validated, and reported, by the model's own validator,
        exactly as without it. A message over 16 KiB (``len(json_data)`` over
        ``FULL_REPORT_BYTES``) is validated as ``ek.check`` reads it: the model's schema with
        every array stopping at its first failing item, so a refusal reports at most one
        error per array and its cost stays bounded; the verdict is the same. The errors for
        members it lacks are pydantic's ``missing``, each holding the object it is missing
        from, built once for all of them.
        """
        if (
            strict is None
            and extra is None
            and by_alias is None
            and by_name is None
            and cls is BabelEnvelope
            and len(json_data) <= FULL_REPORT_BYTES
        ):
            # The common call, first and inline: a Python frame costs what a few rules do in
            # Rust, so it does no more than the size test and the fast validator's own call.
            found: Self | None
            try:
                found = _parse(json_data)
            except ValidationError:  # not JSON: the model's validator reports it
                found = None
            if found is not None:
                return found
            __tracebackhide__ = True
            return super().model_validate_json(json_data, context=context)
        __tracebackhide__ = True
        if len(json_data) > FULL_REPORT_BYTES:
            # Bounded as `check` reads it: one error per array (the same validator), numbers
            # proven plain by C passes not walked for.
            proven = proven_context(json_data, context)
            large: Self = validate_large_json(
                cls, json_data, strict, extra, proven, by_alias, by_name
            )
            return large
        return super().model_validate_json(
            json_data,
            strict=strict,
            extra=extra,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )

    @_model_validator(mode="after")
    def _consume(self, info: ValidationInfo) -> Self:
        # Runs on every message the fast path (._fast) does not take: the rare cases.
        fields = self.__dict__
        if is_blank(fields["job"]):
            alias = fields["urn"]
            if alias is MISSING or is_blank(alias):
                raise rule_error(
                    rules.URN_MISSING,
                    "The message has no identity: neither 'job' nor 'urn' is a non-blank string",
                    pointer="/job",
                )
            # The frozen model is still under construction here (pyright reads an instance's
            # `__dict__` as the class's mapping proxy).
            fields["job"] = alias  # pyright: ignore[reportIndexIssue]
        meta = fields["meta"]
        extra = self.__pydantic_extra__
        meta_extra = meta.__pydantic_extra__
        dead_letter = fields["dead_letter"]
        # Unknown keys of the dead_letter block (only on a dead-letter queue) follow the rules too.
        dead_extra = None if dead_letter is MISSING else dead_letter.__pydantic_extra__
        if (
            extra is None
            or meta_extra is None
            or (dead_letter is not MISSING and dead_extra is None)
        ):
            _keep_extras(self, meta, dead_letter)
        data = fields["data"]
        # `check` and the JSON door prove a large message's numbers plain by C passes, or not:
        # plain data, and its extras, have no number to walk for; data whose proof failed is
        # scanned without a walk first (the walk would only say where to look, at its cost).
        proof = info.context.get(PLAIN_NUMBERS) if type(info.context) is dict else None
        typed = False
        own: dict[str, Any] | None = None
        if type(self) is not BabelEnvelope:
            typed, own = self._subclass_read(extra, proof)
        if info.mode == "python":
            # Python data (the fast path, which probed it, took none of this): what no JSON
            # text holds is refused where it is, free-form `data` and unknown keys alike.
            _refuse_non_json(None if typed else data, extra, meta_extra, dead_extra)
        plain = type(data) is dict and proof is True
        if (typed and not plain) or isinstance(data, BaseModel):
            # Its numbers are read under their wire names, as `to_wire` writes them: the
            # pointers point into the JSON.
            data = written_field(self, "data")
        # One pointer-free pass over each part; pointers are built only for what it flags.
        unproven = proof is False
        scan = not plain and (unproven or needs_scan(data))
        if (
            scan
            or extra
            or meta_extra
            or dead_extra
            or meta.__dict__["created_at"] < SECONDS_THRESHOLD
            or (own and (unproven or needs_scan(own)))
        ):
            self._noted(
                data, own, extra, meta_extra, dead_extra, info.context, plain, scan, unproven
            )
        return self

    def _subclass_read(
        self, extra: dict[str, Any] | None, proof: object
    ) -> tuple[bool, dict[str, Any] | None]:
        """What `_consume` reads of a user's subclass beyond the envelope's.

        Whether it types ``data`` (a parametrised type that is no model validated it: a
        ``dict[str, Item]`` holds models, a dataclass is one; its numbers are read as its own
        serializer gives them, under their wire names), and its own fields as written
        (:func:`written_fields`), ``None`` where it has none or the text's numbers are proven
        plain: top-level members on the wire, whose numbers follow an unknown key's rules.
        Under its own ``extra="ignore"`` (read open, see ``forbidden_keys_read``), its unknown
        keys but the forbidden ones are dropped here, unsaid, before any rule reads them, unless
        the call gives ``extra="allow"``.
        """
        cls = type(self)
        if extra and _ignores_unknown_keys(cls) and not opened_by_the_call():
            for key in [key for key in extra if key not in FORBIDDEN_TOP_LEVEL_KEYS]:
                del extra[key]
        declared = own_fields(cls, BabelEnvelope)
        own = written_fields(self, declared) if declared and proof is not True else None
        return _typed_data(cls), own

    def _noted(
        self,
        data: Any,
        own: dict[str, Any] | None,
        extra: dict[str, Any] | None,
        meta_extra: dict[str, Any] | None,
        dead_extra: dict[str, Any] | None,
        context: object,
        plain: bool,
        scan: bool,
        unproven: bool = False,
    ) -> None:
        """The rarer half of `_consume`: unknown or forbidden keys, numbers to report.

        ``plain``: the numbers of the text are proven plain, so none is walked for. ``scan``:
        ``data`` is to be scanned (`_consume` walked it, or its proof failed). ``unproven``:
        the proof failed, so every part is scanned without a walk first (the walk would only
        say where to look, at the cost of a scan). ``own``: a user's subclass's own fields as
        written (:func:`written_fields`), scanned as the unknown keys are.
        """
        noted: list[Violation] = []
        if extra:
            _drop_forbidden(extra, FORBIDDEN_TOP_LEVEL_KEYS, "", noted)
        if meta_extra:
            _drop_forbidden(meta_extra, FORBIDDEN_META_KEYS, "/meta", noted)
        errors: list[Violation] = []
        parts = (
            (data, "/data"),
            (own, ""),
            (extra, ""),
            (meta_extra, "/meta"),
            (dead_extra, "/dead_letter"),
        )
        room = _warning_cap(context)
        for value, base in () if plain else parts:
            if value and (scan if base == "/data" else unproven or needs_scan(value)):
                # Decisions §6: a Go or Node hop writes doubles such as 1e20 as integer
                # literals, so inside `data` (only) one beyond int64 is read, with a warning.
                more_errors, unsafe = scan_numbers(
                    value,
                    base,
                    wide_integers=base == "/data",
                    first_refusal=True,
                    max_warnings=room,
                )
                errors += more_errors
                noted += unsafe
                if errors:
                    break
        if errors:
            raise as_pydantic_error(errors[0])
        created_at = self.meta.created_at
        if created_at < SECONDS_THRESHOLD:
            noted.append(
                violation(
                    rules.CREATED_AT_SECONDS,
                    "/meta/created_at",
                    f"{created_at} looks like Unix seconds; created_at is milliseconds.",
                )
            )
        if noted:
            attach_warnings(self, noted)

    # --- consuming ---------------------------------------------------------------------------

    def to_wire(self) -> dict[str, Any]:
        """The message as a JSON-ready dict: canonical keys in spec order, then unknown keys.

        A subclass's own fields are written before the unknown keys.
        """
        fields = self.__dict__  # plain reads: this runs once per message sent
        data = fields["data"]
        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json", by_alias=True)
        elif type(self) is not BabelEnvelope and _typed_data(type(self)):
            # A parametrised `data` (`dict[str, Item]`, a dataclass) may hold what only its own
            # serializer writes: written by it, as `model_dump_json` writes it.
            data = self.__pydantic_serializer__.to_python(
                self, mode="json", by_alias=True, include={"data"}
            )["data"]
        meta = fields["meta"]
        out: dict[str, Any] = {
            "job": fields["job"],
            "trace_id": fields["trace_id"],
            "data": data,
            "meta": meta.to_wire(),
            "attempts": fields["attempts"],
        }
        dead_letter = fields["dead_letter"]
        if dead_letter is not MISSING:
            out["dead_letter"] = dead_letter.to_wire()
        if type(self) is not BabelEnvelope:
            out.update(own_members(self, BabelEnvelope))  # a user's subclass's own fields
        extra = self.__pydantic_extra__
        if extra:
            # Decoding never puts these among the extras; a caller mutating them might.
            out.update((k, v) for k, v in extra.items() if k not in _NOT_EXTRA)
        return out

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON, byte-identical to the Python reference encoder.

        ``job, trace_id, data, meta, attempts[, dead_letter]``, then a subclass's own fields,
        then preserved unknown keys in their original order. Never emits ``urn`` or a
        forbidden key.
        """
        return dumps(self.to_wire())

    # --- producing ---------------------------------------------------------------------------

    # For the type checkers; what runs, and what help() shows, is the implementation below.
    # Unparametrised, mypy solves `DataT` from `data` where pyright applies its default: a
    # mapping is typed by the first variant, which names no `DataT`, so mypy keeps the default
    # too. (Data that is no mapping mypy still solves it from: no annotation of `cls` tells
    # mypy's unsolved `DataT` from a parametrised class's.) A model given to a class typed by a
    # model (`Own(BabelEnvelope[Model])`, `BabelEnvelope[Model]`) makes that class by the
    # second variant, and one of another class is refused, as at run time. Given to the
    # unparametrised class it makes the class parametrised by the model's: mypy solves `DataT`
    # from it (the second variant), pyright reads the class as `BabelEnvelope[dict[str, Any]]`
    # (the third, as Matrix's `MxRequest.create` reads `MxRequest[JsonData]`).
    @overload
    @classmethod
    def create(
        cls: type[_Created],
        urn: str,
        data: Mapping[str, Any],
        *,
        queue: str | None = None,
        trace_id: str | None = None,
        settings: Settings | None = None,
    ) -> _Created: ...
    @overload
    @classmethod
    def create(
        cls,
        urn: str,
        data: DataT,
        *,
        queue: str | None = None,
        trace_id: str | None = None,
        settings: Settings | None = None,
    ) -> Self: ...
    @overload
    @classmethod
    def create(
        cls: type[BabelEnvelope[dict[str, Any]]],
        urn: str,
        data: ModelT,
        *,
        queue: str | None = None,
        trace_id: str | None = None,
        settings: Settings | None = None,
    ) -> BabelEnvelope[ModelT]: ...
    @classmethod  # type: ignore[misc]  # (help() shows the signature as it was: `data: DataT`)
    def create(  # pyright: ignore[reportInconsistentOverload]
        cls,
        urn: str,
        data: DataT,
        *,
        queue: str | None = None,
        trace_id: str | None = None,
        settings: Settings | None = None,
    ) -> Self:
        """Produce a new message.

        The message is of the class called; given a model, the unparametrised class (or a
        subclass still generic in its data type) is parametrised by the model's class:
        ``BabelEnvelope.create(urn, Model(...))`` makes a ``BabelEnvelope[Model]``, typed so. A
        class typed by a model (``BabelEnvelope[Model]``, a user's
        ``class Own(BabelEnvelope[Model])``) makes itself, typed so, and refuses a model of
        another class, as a type error too. Limits of the type checkers: given a model, an
        unparametrised subclass (``class Mine(BabelEnvelope)``) makes a ``Mine[Model]``, typed
        ``BabelEnvelope[Model]`` (the checkers read ``Mine`` as not generic); a class typed by a
        JSON object (``BabelEnvelope[dict[str, Any]]``, ``class Mine(BabelEnvelope[dict[str,
        Any]])``), which refuses a model, is typed ``BabelEnvelope[Model]`` too (the checkers
        read it as the unparametrised class); pyright types a subclass still generic in its own
        type variable by it unsolved (``Gen[Unknown]``): call ``Gen[Model].create``.

        Args:
            urn: the message URN; surrounding ASCII whitespace is stripped.
            data: the payload: a mapping of JSON values (copied; validated into the type of
                a parametrised envelope) or a model instance (of the envelope's own model
                class, when it is typed by one).
            queue: the logical queue; ``settings.babelqueue_queue`` when not given.
            trace_id: an inbound trace id to continue; a fresh v4 UUID when absent or blank.
            settings: defaults; the environment's when not given.

        Returns:
            The envelope, with ``lang="python"``, ``schema_version=1``, ``attempts=0``,
            ``created_at`` now in Unix ms and a fresh v4 ``meta.id``.

        Raises:
            ProducerError: for anything that would make the message invalid, its
                ``violations`` naming each rule and pointer: a blank URN (``urn.missing``),
                ``data`` holding what JSON cannot (a ``datetime``, a ``Decimal``, bytes, a
                non-string key: ``json.invalid``), NaN or Infinity (``number.non_finite``),
                an integer beyond signed 64-bit, a ``trace_id`` that is not a UUID; a model
                whose JSON cannot be written (``json.invalid`` at ``/data``), or of a class the
                envelope's ``data`` type is not (``message-envelope.type``); a message larger
                or nesting deeper than ``check`` with ``settings`` reads (``message.too_large``,
                ``message.too_deep``).
            TypeError: for ``settings`` that are no :class:`~envelopekit.Settings` (nor ``None``).
        """
        if trace_id is not None and not isinstance(trace_id, str):
            raise _not_a_string(cls, "/trace_id", trace_id)
        if not isinstance(urn, str) or is_blank(urn):
            message = (
                "A BabelQueue message must carry a stable, non-empty URN so consumers can "
                "identify it without any class name."
            )
            raise ProducerError(message, [violation(rules.URN_MISSING, "/job", message)])
        settings = given_settings(settings)
        trace = (trace_id or "").strip(ASCII_WHITESPACE) or uuid4()
        message_id = uuid4()
        while message_id == trace:  # pragma: no cover - a 2^-122 event
            message_id = uuid4()
        # A mapping is checked to be pure JSON (GR-3) and copied; a model validates itself,
        # and its numbers are scanned below, but what it writes is checked here.
        model_text = None
        if isinstance(data, BaseModel):
            model_text = refuse_unwritable(data, "/data")
            cls = typed_by_model(cls, data)
        payload: Any = data
        levels = None  # read where the data is copied; else from its text
        if isinstance(data, Mapping):
            payload, within = plain_json_nesting(data, "/data")
            levels = within + 1  # `data` is the message's second level, as `meta` is
        members: dict[str, Any] = {
            "job": urn.strip(ASCII_WHITESPACE),
            "trace_id": trace,
            "data": payload,
            "meta": {
                "id": message_id,
                "queue": queue if queue is not None else settings.babelqueue_queue,
                "lang": "python",
                "schema_version": SCHEMA_VERSION,
                "created_at": now_ms(),
            },
            "attempts": 0,
        }
        # Other parametrised data (a dataclass, a list of models) is written by its type once
        # validated: its text is measured then.
        typed = (
            model_text is None and levels is None and cls is not BabelEnvelope and _typed_data(cls)
        )
        context = None
        if not typed:
            # The model's text is the one its writing above made; the rest is plain data.
            wire = members if model_text is None else {**members, "data": Fragment(model_text)}
            text = refuse_unbounded(wire, settings, levels=levels)
            # Its text, where orjson wrote it of the very dict validated, is not written again.
            if text is not None and model_text is None:
                context = {WRITTEN: text}
        try:
            created = cls.model_validate(members, context=context)
        except ValidationError as exc:
            raise ProducerError.from_validation(exc, cls) from exc
        if typed:
            data_text = _typed_text(created)
            refuse_unbounded({**members, "data": Fragment(data_text)}, settings)
        # What a consumer reads with a warning (Decisions §6), a producer never writes; only a
        # message with something noted has private state to look at.
        if created.__pydantic_private__ is not None:
            for found in attached_warnings(created):
                if found.rule == rules.NUMBER_BEYOND_INT64:
                    message = (
                        f"{found.pointer}: an integer beyond signed 64-bit; a producer writes "
                        "only integers within it (Go and Node would read it as a double)."
                    )
                    refused = violation(rules.NUMBER_OUT_OF_RANGE, found.pointer, message)
                    raise ProducerError(message, [refused])
        return created

    def child(
        self,
        urn: str,
        data: Mapping[str, Any],
        *,
        queue: str | None = None,
        settings: Settings | None = None,
    ) -> BabelEnvelope[dict[str, Any]]:
        """Produce a downstream message in the same trace: same ``trace_id``, new ``meta.id``.

        ``data`` is taken as :meth:`create` takes it: a mapping is copied, anything else refused
        (``message-envelope.type`` at ``/data``).
        """
        # `create` copies any mapping (and refuses what is none), not only a dict.
        taken = cast("dict[str, Any]", data)
        return BabelEnvelope.create(
            urn, taken, queue=queue, trace_id=self.trace_id, settings=settings
        )

    def retried(self) -> Self:
        """The same message with ``attempts + 1`` and everything else untouched.

        Raises:
            ProducerError: when ``attempts`` is already the signed 64-bit maximum: the next
                consumer would refuse 2^63 (the Router dead-letters such a message instead);
                when the message is larger or nests deeper than ``check`` with the
                environment's settings reads (``message.too_large``, ``message.too_deep``).
        """
        retried = self._retried()
        return bounded(retried, retried.to_json)

    def _retried(self) -> Self:
        """:meth:`retried` within no bounds: the Router keeps what it sends within its own."""
        if self.attempts >= INT64_MAX:
            message = (
                f"attempts is {self.attempts}, the signed 64-bit maximum: it cannot be counted "
                "once more"
            )
            rule = rules.structural(self.__schema_name__, "maximum")
            raise ProducerError(message, [violation(rule, "/attempts", message)])
        return self.model_copy(update={"attempts": self.attempts + 1})

    def redriven(self) -> Self:
        """The message made live again off a dead-letter queue (ADR-0026).

        ``dead_letter`` is removed and ``attempts`` reset to 0; ``job``, ``trace_id``, ``data``,
        ``meta`` (``meta.id`` included) and unknown keys are kept verbatim, so the idempotency
        key and the trace survive the replay. Publish it to :meth:`redrive_queue`.
        """
        return self.model_copy(update={"dead_letter": MISSING, "attempts": 0})

    def redrive_queue(self, to_queue: str | None = None) -> str:
        """Where a redrive republishes this message.

        Args:
            to_queue: an explicit target (a sandbox queue for a safe replay); it wins when given
                and not empty, as in the official redrive.

        Returns:
            ``to_queue``, else ``dead_letter.original_queue`` when not empty, else
            ``meta.queue``.
        """
        if to_queue:
            return to_queue
        dead_letter = self.dead_letter
        if dead_letter is not MISSING and dead_letter.original_queue:
            return dead_letter.original_queue
        return self.meta.queue

    def dead_lettered(
        self,
        reason: DeadLetterReason,
        *,
        error: str | BaseException | None = None,
        exception: str | None = None,
        original_queue: str | None = None,
        failed_at: int | None = None,
    ) -> Self:
        """The same message with a ``dead_letter`` block added; everything else kept.

        Args:
            reason: ``"failed"``, ``"unknown_urn"`` or ``"poison"``.
            error: the failure's message, or the exception itself (its text and type name are
                taken). Past :data:`ERROR_TEXT_CHARS` (4096) characters the text is cut, a
                marker saying how many more there were (``... [5238784 more characters cut]``):
                a dead letter stays within a few KiB of the message it carries.
            exception: the failure's type name; from ``error`` when that is an exception (cut
                as ``error`` is).
            original_queue: the queue it was consumed from; ``meta.queue`` when not given.
            failed_at: dead-letter time in Unix ms; now when not given.

        Raises:
            ProducerError: for a reason outside the three of the spec, an ``error`` or
                ``exception`` that is no text, or a block that would be invalid (a
                ``failed_at`` that is not an integer, a queue that is not a string or holds a
                lone surrogate), its ``violations`` naming each rule and ``/dead_letter/...``
                pointer; a message larger or nesting deeper than ``check`` with the
                environment's settings reads (``message.too_large``, ``message.too_deep``).
        """
        dead = self._dead_lettered(
            reason,
            error=error,
            exception=exception,
            original_queue=original_queue,
            failed_at=failed_at,
        )
        return bounded(dead, dead.to_json)

    def _dead_lettered(
        self,
        reason: DeadLetterReason,
        *,
        error: str | BaseException | None = None,
        exception: str | None = None,
        original_queue: str | None = None,
        failed_at: int | None = None,
    ) -> Self:
        """:meth:`dead_lettered` within no bounds: the Router fits what it sends in its own."""
        if not isinstance(reason, str):
            raise _not_a_string(type(self), "/dead_letter/reason", reason)
        if reason not in _REASONS:
            message = f"dead_letter.reason must be one of {sorted(_REASONS)}"
            rule = rules.structural(self.__schema_name__, "enum")
            raise ProducerError(message, [violation(rule, "/dead_letter/reason", message)])
        # Checked before they are cut and escaped, which read them as text.
        if error is not None and not isinstance(error, (str, BaseException)):
            raise _not_a_string(type(self), "/dead_letter/error", error)
        if exception is not None and not isinstance(exception, str):
            raise _not_a_string(type(self), "/dead_letter/exception", exception)
        if isinstance(error, BaseException):
            exception = exception if exception is not None else type(error).__name__
            error = error_text(error)
        # An exception's text may hold lone surrogates (`os.fsdecode` of a non-UTF-8 path),
        # which no JSON encoder writes: they are kept visible as \udcXX escapes (after the cut,
        # so the cut counts the characters the exception had).
        error = _unicode_text(cut_text(error))
        exception = _unicode_text(cut_text(exception))
        fields: dict[str, Any] = {
            "reason": reason,
            "error": error,
            "exception": exception,
            "failed_at": failed_at if failed_at is not None else now_ms(),
            "original_queue": original_queue if original_queue is not None else self.meta.queue,
            "attempts": self.attempts,
            "lang": "python",
        }
        # What no JSON text holds (a lone surrogate in the queue) is refused where it is: the
        # block's own door would name the whole block.
        plain_json(fields, "/dead_letter")
        try:
            block = DeadLetter.model_validate(fields)
        except ValidationError as exc:
            # Validated on its own, the block's pointers are relative to it.
            found = violations(exc, model=DeadLetter)
            raise ProducerError.of(
                [replace(v, pointer="/dead_letter" + v.pointer) for v in found]
            ) from exc
        return self.model_copy(update={"dead_letter": block})


class _Read:
    """The envelope a dict's JSON text was read into, on its way out of the model's step."""

    __slots__ = ("envelope",)

    def __init__(self, envelope: BabelEnvelope[Any]) -> None:
        self.envelope = envelope


class _ReadAsText(dict[str, Any]):
    """A dict given to ``__init__``, whose fields the model reads from its JSON text."""

    __slots__ = ()


def _read_as_text(
    cls: type[BabelEnvelope[Any]],
    value: Any,
    handler: ValidatorFunctionWrapHandler,
    info: ValidationInfo,
) -> Any:
    """``value`` validated as its JSON text is, where it is JSON data; else as it is.

    ``handler`` reads the probe (:func:`~envelopekit._text.call_kind`): under run-time options
    (``strict``, ``extra``, ``by_name``, ``by_alias=False``), which the text's reading would
    not see, the value is read as Python data, as pydantic reads it. In ``__init__``, which
    fills its own instance, the model reads it, its fields from their text
    (:func:`_fields_read`). An envelope given to a class that does not keep it is its wire
    data (:func:`~envelopekit._text.instance_data`), read so.
    """
    if type(value) is not dict:
        if isinstance(value, BaseModel):
            value = instance_data(value, cls)
        if type(value) is not dict:
            return value
    text = plain_text(value)
    if text is None:
        return value  # Python data no JSON text holds: validated, and refused, as such
    if b"null" in text:
        # orjson writes NaN and Infinity as `null`, which a field may take (`float | None`)
        # or refuse as a type: refused as the number rules refuse them in Python data.
        refuse_non_finite(value)
    kind = call_kind(handler)
    if kind == "options":
        return value
    if kind == "init":
        return _ReadAsText(value)
    # Its errors are this validation's, at their own locations; over `FULL_REPORT_BYTES`, one
    # an array at most, as `model_validate_json` reads the same bytes (with the call's own
    # context: a user's validator reads it, and may note into it).
    if len(text) > FULL_REPORT_BYTES:
        return _Read(validate_large_json(cls, text, context=info.context))
    return _Read(cls.__pydantic_validator__.validate_json(text, context=info.context))


def _take_read(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """The envelope :func:`_read_as_text` read, else ``value`` read by the model."""
    if type(value) is _Read:
        return value.envelope
    return handler(value)


def _fields_read(
    cls: type[BabelEnvelope[Any]],
    value: Any,
    handler: ValidatorFunctionWrapHandler,
    info: ValidationInfo,
) -> Any:
    """The model's fields of ``value``: from its JSON text where ``__init__`` was given it.

    The model's own validators (a user's ``before``, ``wrap`` and ``after`` ones) run as they
    do on any dict, once; a ``before`` one may have changed it, so its text is written here.
    """
    if type(value) is _ReadAsText:
        text = plain_text(dict(value))  # orjson writes no subclass as plain data
        if text is not None:
            return _fields_validator(cls).validate_json(text, context=info.context)
    return handler(value)


@cache
def _fields_validator(cls: type[BabelEnvelope[Any]]) -> SchemaValidator:
    """A validator of ``cls``'s fields alone (:func:`_fields_read`), from its finished schema."""
    schema: Any = cls.__pydantic_core_schema__
    for node in schemas_in(schema):
        function = node["function"]["function"] if node.get("type") == "function-wrap" else None
        if isinstance(function, partial) and function.func is _fields_read:
            fields: CoreSchema = node["schema"]
            break
    else:  # pragma: no cover - every typed envelope's schema holds it
        raise LookupError(cls)
    if schema["type"] == "definitions":
        fields = core_schema.definitions_schema(fields, schema["definitions"])
    return SchemaValidator(fields, own_config(schema, cls))


def _reading_fields(schema: CoreSchema, cls: type[BabelEnvelope[Any]]) -> CoreSchema:
    """``schema`` with ``cls``'s model fields read through :func:`_fields_read`.

    Only the class's own schema, which ``__init__`` runs; a use of a finished class is its own
    validator, which pydantic-core reuses.
    """
    if cls.__dict__.get("__pydantic_complete__"):
        return schema

    def reading(node: Any) -> Any:
        if isinstance(node, list):
            items: list[Any] = node
            return [reading(item) for item in items]
        if not isinstance(node, dict):
            return node
        found = cast("dict[str, Any]", node)  # a schema, or a mapping of them (a model's fields)
        kind = found.get("type")
        if kind == "model-fields":  # only a model of `cls` is read within
            fields = cast("CoreSchema", found)
            return core_schema.with_info_wrap_validator_function(partial(_fields_read, cls), fields)
        if kind == "model" and found["cls"] is not cls:
            return found
        return {key: item if key == "metadata" else reading(item) for key, item in found.items()}

    return cast("CoreSchema", reading(schema))


def _typed_text(envelope: BabelEnvelope[Any]) -> bytes:
    """The JSON of a produced message's parametrised ``data``, which must be an object.

    Raises:
        ProducerError: ``json.invalid`` at ``/data`` for what its type's serializer cannot
            write; the envelope's ``type`` rule for a value that is no JSON object.
    """
    data_text = refuse_unwritable(envelope, "/data", "data")
    if not data_text.startswith(b"{"):
        message = "data must be a JSON object; its type writes another JSON value."
        rule = rules.structural(envelope.__schema_name__, "type")
        raise ProducerError(message, [violation(rule, "/data", message)])
    return data_text


FAST_PATH: Final = FastPath(
    BabelEnvelope,
    BabelMeta,
    DeadLetter,
    BabelEnvelope.__pydantic_decorators__.model_validators["_consume"].func,
)
"""``BabelEnvelope``'s fast path (:mod:`._fast`), built on first use."""


_parse: JsonParse = first_parse(FAST_PATH, globals(), "_parse")


def _fast_python(obj: dict[str, Any], context: object) -> Any:
    """The fast path's envelope of ``obj`` (Python data), ``None``, or ``TOO_LARGE``.

    What the fast path leaves to its caller is checked here: the numbers of Python data, and
    their depth (orjson writes 254 levels, the parser reads 200; ``data`` is the second).
    """
    # A producer's text of the dict, which the fast path need not write again.
    written = context.get(WRITTEN) if type(context) is dict else None
    found = FAST_PATH.validate_python(obj, written)
    if isinstance(found, BabelEnvelope) and needs_scan(found.__dict__["data"], levels=_DATA_LEVELS):
        return None
    return found


def _held_door(
    value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> object:
    """``BabelEnvelope`` held in another schema, validating Python data in strict mode.

    The class's own validator runs no fast path (a validator function does not see the call's
    options, which ``model_validate`` checks): held, the envelope takes it first, as
    ``model_validate`` does, where the call's options cannot change the verdict (see
    ``text_checked_schema``). A message it does not take, or over ``FULL_REPORT_BYTES``, is
    the class's own validator's.
    """
    if type(value) is dict:
        found = _fast_python(cast("dict[str, Any]", value), info.context)
        if isinstance(found, BabelEnvelope):
            return found
    return handler(value)


_DATA_LEVELS: Final = PARSER_MAX_DEPTH - 1
"""The levels ``data`` may nest, itself included: the message is the first of the parser's."""


def _warning_cap(context: object) -> int:
    """The most warnings the number scan builds.

    The validation context's ``max_violations`` (``check`` passes its own settings'), else the
    environment's.
    """
    return context_cap(context) or get_settings().max_violations


def _refuse_non_json(
    data: Any,
    extra: dict[str, Any] | None,
    meta_extra: dict[str, Any] | None,
    dead_extra: dict[str, Any] | None,
) -> None:
    """:func:`refuse_non_json` of each free-form part of a message validated from Python data.

    ``data`` is ``None`` where its parametrised type validated it. Typed ``Any``, it is any
    value the door was given, the whole of it as free-form as an object's members.
    """
    if data is not None and not isinstance(data, BaseModel):  # a model validated itself
        refuse_non_json(data, "/data")
    for part, base in ((extra, ""), (meta_extra, "/meta"), (dead_extra, "/dead_letter")):
        if part:
            refuse_non_json(part, base)


def _keep_extras(*models: BaseModel | MISSING) -> None:
    """Give each model (the envelope, its ``meta``, its ``dead_letter``) a mapping of extras.

    A run-time ``extra="ignore"`` or ``"forbid"`` leaves pydantic's ``None``; the fast path,
    which sees no run-time option where the envelope is held (a FastAPI body, FastStream's
    arguments), builds the config's empty mapping: every door builds the same envelope.
    """
    for model in models:
        if isinstance(model, BaseModel) and model.__pydantic_extra__ is None:
            # The frozen model is still under construction here.
            object.__setattr__(model, "__pydantic_extra__", {})


def _drop_forbidden(
    extra: dict[str, Any], forbidden: Mapping[str, str], base: str, noted: list[Violation]
) -> None:
    for key, instead in forbidden.items():
        if key in extra:
            del extra[key]
            where = f"{base}/{key}"
            logger.warning("Dropped the forbidden BabelQueue key %s (use %s).", where, instead)
            noted.append(
                violation(
                    rules.FORBIDDEN_KEY,
                    where,
                    f"{where} is a forbidden, non-canonical key: dropped, never re-emitted "
                    f"(use {instead}).",
                )
            )


def _not_a_string(model: type[WireModel], at: str, value: object) -> ProducerError:
    message = f"{at[1:].replace('/', '.')} must be a string, not {type(value).__name__}"
    rule = rules.structural(model.__schema_name__, "type")
    return ProducerError(message, [violation(rule, at, message)])


def error_text(error: BaseException) -> str:
    """An exception's text, or for one whose ``__str__`` raises, that failure's name.

    A handler's odd exception is still dead-lettered: ``Router.dispatch`` never raises.
    """
    try:
        return str(error)
    except Exception as failure:  # any failure of the handler's own code
        return f"<str() of {type(error).__name__} raised {type(failure).__name__}>"


def _unicode_text(text: str | None) -> str | None:
    r"""``text`` with any lone surrogate written as a ``\udcXX`` escape, so it encodes."""
    return None if text is None else printable(text)
