"""The SOM 1.0 envelope (``envelope.schema.json``): the model, its parts and its validators.

Around it: the wire version (:mod:`._version`), producing (:mod:`._producing`), the typed
envelope ``SomEnvelope[Family]`` (:mod:`._typed`), its JSON Schema (:mod:`._envelope_schema`)
and the fast path of ``model_validate_json`` (:mod:`._fast`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Final,
    Generic,
    Literal,
    TypeAlias,
    TypedDict,
    cast,
    overload,
)
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.config import ExtraValues
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema
from typing_extensions import Self, TypeVar, Unpack

from .. import rules
from .._compat import MISSING
from .._doors import validate_large_json
from .._errors import ProducerError
from .._failfast import (
    FULL_REPORT_BYTES,
    TOO_LARGE,
    Absent,
    JsonParse,
    first_parse,
    large_validator,
    passes_absent,
)
from .._json import dumps, reading_context
from .._model import any_is_unparametrised
from .._schema import shipping
from .._settings import Settings
from .._text import WRITTEN, text_checked_schema
from .._violations import Violation, rule_error, shown, violation
from ._delivery import DeliveryMediaAvailable
from ._envelope_schema import as_tagged_union, envelope_json_schema
from ._fast import FastPath
from ._link import LinkEvent, LinkMessageType
from ._payloads import (
    FAMILY_BY_MESSAGE_TYPE,
    PAYLOAD_MODELS,
    FamilyPayload,
    SomPayload,
    UnvalidatedPayload,
    done_validating,
    validating_as,
)
from ._producing import wire_data
from ._skill_warning import SkillWarning
from ._story_context import StoryContext
from ._system_audit import SystemAudit
from ._telling import TellingEvent, TellingMessageType
from ._typed import READ_BY_MESSAGE_TYPE, expect_family, unparametrised
from ._types import (
    MESSAGE_TYPE_PATTERN,
    TOPIC_PATTERN,
    DateTimeStr,
    Extensions,
    Integer,
    JsonArray,
    JsonObject,
    SomModel,
    SomOpenModel,
    Str,
    StringOrObject,
    UuidStr,
    parse_date_time,
)
from ._version import SOM_VERSION, SomVersion, supported_version

__all__ = [
    "FAST_PATH",
    "ModificationHeader",
    "OriginatingSystem",
    "ProducingKeywords",
    "SomEnvelope",
    "SystemType",
    "validate_large",
]

SystemType: TypeAlias = Literal[
    "ncs",
    "mos_device",
    "graphics",
    "automation",
    "wire_service",
    "ai_agent",
    "compliance_engine",
    "editorial_dashboard",
    "archive",
    "prompter",
    "camera",
    "audio",
    "skill_worker",
    "custom",
]
"""``originating_system.system_type``: the closed, lower-case 14-value enum."""

MessageType: TypeAlias = Annotated[
    str, StringConstraints(strict=True, pattern=MESSAGE_TYPE_PATTERN)
]
Topic: TypeAlias = Annotated[str, StringConstraints(strict=True, pattern=TOPIC_PATTERN)]

P = TypeVar("P", bound="FamilyPayload | UnvalidatedPayload")
F = TypeVar("F", bound="FamilyPayload")
PayloadT = TypeVar(
    "PayloadT",
    bound="FamilyPayload | UnvalidatedPayload",
    # Unparametrised, the payload is the union `message_type` dispatches (the type checkers
    # read it as `FamilyPayload | UnvalidatedPayload`); covariant, so a `SomEnvelope[Family]`
    # goes wherever a `SomEnvelope` does.
    default=SomPayload,
    covariant=True,
)


# A user's class typed by one family (`class Story(SomEnvelope[StoryContext])`): what
# `create` makes of that family, typed as the class itself.
_StoryEnvelope = TypeVar("_StoryEnvelope", bound="SomEnvelope[StoryContext]")
_TellingEnvelope = TypeVar("_TellingEnvelope", bound="SomEnvelope[TellingEvent]")
_LinkEnvelope = TypeVar("_LinkEnvelope", bound="SomEnvelope[LinkEvent]")
_DeliveryEnvelope = TypeVar("_DeliveryEnvelope", bound="SomEnvelope[DeliveryMediaAvailable]")
_AuditEnvelope = TypeVar("_AuditEnvelope", bound="SomEnvelope[SystemAudit]")
_WarningEnvelope = TypeVar("_WarningEnvelope", bound="SomEnvelope[SkillWarning]")


class OriginatingSystem(SomModel):
    """``originating_system``: the system that sent the message (renamed from ``source`` in v0.3).

    Whoever publishes a message stamps it, so a correction is attributed to the corrector. On the
    SOM Managed Bus, ``system_id`` must be one the connection may stamp.
    """

    __schema_name__: ClassVar[str] = "envelope"

    system_id: Str
    """The sending system's id: a string (empty allowed); SOM 1.0 does not define it further."""
    system_type: SystemType
    """Classifies the sending system: one of 14 lower-case values (UPPER_SNAKE is refused)."""
    system_name: Str | MISSING = MISSING
    """The sending system's name, a string; SOM 1.0 does not define it further."""
    vendor: Str | MISSING = MISSING
    """The sending system's vendor, a string; SOM 1.0 does not define it further."""
    version: Str | MISSING = MISSING
    """The sending system's version, a string; SOM 1.0 does not define it further."""


class ModificationHeader(SomOpenModel):
    """``modification_header``: an open object on snapshot messages; unknown members are kept."""

    __schema_name__: ClassVar[str] = "envelope"

    story_version: Integer | MISSING = MISSING
    """The story's version number, an integer; non-normatively monotonic."""
    modified_at: DateTimeStr | MISSING = MISSING
    """RFC 3339 date-time of the modification; SOM 1.0 does not define it further."""
    modified_by: Str | MISSING = MISSING
    """Who made the modification, a string; SOM 1.0 does not define it further."""
    change_summary: Str | MISSING = MISSING
    """A summary of the change, a string; SOM 1.0 does not define it further."""
    history: JsonArray | MISSING = MISSING
    """Version-tracking history: an array, items unconstrained (non-normatively at most 20)."""


class ProducingKeywords(TypedDict, total=False):
    """The keywords :meth:`SomEnvelope.create` and :meth:`SomEnvelope.follow_up` share.

    What the type checkers read them as (a misspelt keyword is a type error); the methods
    themselves declare each one, with the meanings :meth:`SomEnvelope.create` documents.
    """

    originating_system: OriginatingSystem | Mapping[str, Any] | None
    correlation_id: str | UUID | None
    causation_id: str | UUID | None
    topic: str | None
    timestamp: datetime | str | None
    message_id: str | UUID | None
    extensions: Mapping[str, Any] | None
    settings: Settings | None


def _context_value(info: ValidationInfo, key: str) -> Any:
    context = info.context
    if isinstance(context, Mapping):
        return cast("Mapping[str, Any]", context).get(key)
    return None


class SomEnvelope(SomModel, Generic[PayloadT]):
    """A SOM 1.0 message: the envelope, with the payload its ``message_type`` selects.

    Parse with ``SomEnvelope.model_validate_json(raw)``; ``payload`` is then the family model
    (:class:`StoryContext`, :class:`TellingEvent`, ...) or, for a ``message_type`` with no
    SOM 1.0 schema, an :class:`UnvalidatedPayload` holding the JSON object as received.

    ``SomEnvelope[StoryContext]`` is the envelope typed by its payload: what :meth:`create`
    returns for a story, and a parser that also refuses a message whose ``message_type`` does
    not select that family (``payload.family_unexpected``). ``SomEnvelope[Any]`` is
    ``SomEnvelope`` itself: every family, each payload its model. A union of families is read
    by ``message_type`` too, never by the payload's shape; a subclass takes what its payload
    type names, and one still generic in a type variable of its own (``class
    Mine(SomEnvelope[X], Generic[X])``) what its default, constraints or bound name, or with
    none of them every family.

    Validation context (``model_validate_json(raw, context={...})``):

    * ``"som_version_mode"``: ``"strict"`` or ``"tolerant"``; defaults to
      ``Settings.som_version_mode``.
    * ``"unknown_message_type"``: ``"refuse"`` refuses a ``message_type`` with no SOM 1.0
      schema (``message_type.unknown``) instead of accepting it unvalidated.

    Wire names that are not Python identifiers are aliases: ``actors`` is ``_actors`` and
    ``context`` is ``@context``.
    """

    model_config = ConfigDict(json_schema_extra=envelope_json_schema)
    __schema_name__: ClassVar[str] = "envelope"
    __false_schema__: ClassVar[frozenset[str]] = frozenset({"source", "signature"})

    if not TYPE_CHECKING:

        def __class_getitem__(cls, item: Any) -> Any:
            # As a payload type `Any` would leave the payload unvalidated (and on Python 3.10,
            # where `Any` is no class, reach the agreement check as a dict).
            # The payload's own type variable: PayloadT, or a user's subclass's own.
            if any_is_unparametrised(cls, item, cls.__pydantic_fields__["payload"].annotation):
                return cls
            return super().__class_getitem__(item)

    som_version: SomVersion
    (
        "The schema pack version the payload conforms to — 1.0.0 for SOM 1.0. Pre-1.0 values "
        "(0.3.2 and earlier) are not conformant to this specification; see "
        "spec/migration-from-v0.3.2.md. Informative, never a parsing discriminator — message_type "
        "identifies the payload family."
    )
    message_id: UuidStr
    """UUIDv7, time-ordered"""
    correlation_id: UuidStr
    """Required as of v0.3 (decision #18); links all messages about the same story lifecycle"""
    causation_id: UuidStr | MISSING = MISSING
    """Optional; ID of the message that directly caused this one"""
    message_type: MessageType
    (
        "Selects the payload's schema and is the only parsing discriminator: lower-case and "
        "dotted; a value with no SOM 1.0 schema carries an unvalidated object payload."
    )
    timestamp: DateTimeStr
    (
        "Microsecond precision recommended. Skill-output timestamp lives HERE, not in the payload "
        "(decision #18)"
    )
    originating_system: OriginatingSystem
    """The system that sent the message (renamed from ``source``); whoever publishes stamps it."""
    topic: Topic
    """Required per the #18 envelope lock"""
    modification_header: ModificationHeader | MISSING = MISSING
    """On snapshot-style messages such as story.context"""
    actors: JsonObject | MISSING = Field(default=MISSING, alias="_actors")
    """Key-value map of short-key actor lookups"""
    payload: Annotated[PayloadT, READ_BY_MESSAGE_TYPE]
    """The message's content: a JSON object, validated by the schema ``message_type`` selects."""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""
    context: StringOrObject | MISSING = Field(default=MISSING, alias="@context")
    """JSON-LD context — DEFERRED in v0.3 (decision #18); permitted for forward compatibility"""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The envelope's JSON Schema; in pydantic's own (FastAPI's OpenAPI) a tagged union.

        The shipped schemas (:func:`envelopekit.json_schema`) dispatch the payload with
        ``if``/``then``, which the reference validators read but code generators cannot type.
        Pydantic's JSON Schema says the same as a ``oneOf`` of one envelope per known
        ``message_type`` (``SomStoryContextEnvelope`` ...), with an OpenAPI ``discriminator``
        on ``message_type``, and ``SomUnknownEnvelope`` for every other ``message_type``.
        """
        found = super().__get_pydantic_json_schema__(schema, handler)
        if cls is SomEnvelope and not shipping():
            as_tagged_union(handler.resolve_ref_schema(found), handler)
        return found

    # --- validation --------------------------------------------------------------------------

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The model's schema, refusing in Python mode what JSON text cannot carry.

        Strings that are not Unicode, and nesting deeper than the JSON parser reads.
        """
        return text_checked_schema(cls, source, handler)

    @field_validator("som_version")
    @classmethod
    def _wire_version(cls, value: str, info: ValidationInfo) -> str:
        if value == SOM_VERSION:
            return value
        return supported_version(value, _context_value(info, "som_version_mode"))

    @field_validator("payload", mode="wrap")
    @classmethod
    @passes_absent
    def _dispatch(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        # `message_type` is declared (so validated) before `payload`; when it failed, the
        # payload is only checked to be an object, as the envelope schema does.
        message_type = info.data.get("message_type")
        if cls is not SomEnvelope and isinstance(message_type, str) and type(value) is not Absent:
            expect_family(cls, message_type)
        token = validating_as(message_type if isinstance(message_type, str) else "")
        try:
            return handler(value)
        finally:
            done_validating(token)

    @model_validator(mode="after")
    def _payload_agrees(self, info: ValidationInfo) -> Self:
        payload = self.payload
        if isinstance(payload, UnvalidatedPayload):
            if _context_value(info, "unknown_message_type") == "refuse":
                raise rule_error(
                    rules.MESSAGE_TYPE_UNKNOWN,
                    f"message_type '{self.message_type}' has no SOM 1.0 schema",
                    pointer="/message_type",
                )
            return self
        if not _own_type_agrees(self):
            raise rule_error(
                rules.PAYLOAD_MESSAGE_TYPE_MISMATCH,
                f"The payload's message_type '{payload.__dict__['message_type']}' disagrees "
                f"with the envelope's '{self.message_type}'",
                pointer="/payload/message_type",
            )
        return self

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
        """Validate a SOM message given as Python data (see the class docstring for ``context``).

        A dict of plain JSON data of a known ``message_type`` is first tried by the fast path
        of :meth:`model_validate_json`; whatever it does not accept is validated, and
        reported, by the model's own validator, exactly as without it. A dict of plain JSON
        data over 16 KiB (its JSON, as orjson writes it) is validated as
        :meth:`model_validate_json` validates such a message: one error per array at most,
        the same verdict.
        """
        __tracebackhide__ = True
        if (
            cls is SomEnvelope
            and type(obj) is dict
            and not from_attributes
            and by_alias is None
            and by_name is None
        ):
            # A producer's text of the dict, which the fast path need not write again.
            written = context.get(WRITTEN) if type(context) is dict else None
            found = FAST_PATH.validate_python(cast("dict[str, Any]", obj), strict, extra, written)
            if found is TOO_LARGE:
                # Bounded as model_validate_json bounds the same message: one error per array.
                large: Self = large_validator(cls).validate_python(
                    obj, strict=strict, extra=extra, context=context
                )
                return large
            if found is not None:
                return found  # type: ignore[return-value]
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
        """Validate a SOM message given as JSON (see the class docstring for ``context``).

        A message of a known ``message_type`` is first tried by a validator that picks the
        payload's model in Rust (:mod:`._fast`); whatever that one does not accept is
        validated, and reported, by the model's own validator, exactly as without it. A
        message over 16 KiB (``len(json_data)`` over ``FULL_REPORT_BYTES``) is validated as
        ``ek.check`` reads it, by the model's schema with every array stopping at its first
        failing item (no fast path), so a refusal reports at most one error per array and its
        cost stays bounded (``assets = [{}] * 79000``: 237,000 errors before); the verdict is
        the same. The errors for members it lacks are pydantic's ``missing``, each holding the
        object it is missing from, built once for all of them.
        """
        if (
            strict is None
            and extra is None
            and by_alias is None
            and by_name is None
            and cls is SomEnvelope
            and len(json_data) <= FULL_REPORT_BYTES
        ):
            # The common call, first and inline: a Python frame costs what a few rules do in
            # Rust, so it does no more than the size test and the fast validator's own call.
            try:
                found = _parse(json_data)
            except ValidationError:  # not JSON: the model's validator reports it
                found = None
            if found is not None:
                return found  # type: ignore[no-any-return]
            __tracebackhide__ = True
            return super().model_validate_json(
                json_data, strict=None, extra=None, context=context, by_alias=None, by_name=None
            )
        __tracebackhide__ = True
        if len(json_data) > FULL_REPORT_BYTES:
            # Bounded as `check` reads it: one error per array (the same validator), free-form
            # JSON walked within a budget and then proven by C passes, and never the fast path,
            # whose free-form JSON costs more than the model's on large input.
            read = reading_context(json_data, context, integers=False)
            large: Self = validate_large_json(
                cls, json_data, strict, extra, read, by_alias, by_name
            )
            return large
        if cls is SomEnvelope and by_alias is None and by_name is None:
            found = FAST_PATH.validate_json(json_data, strict, extra, context)
            if found is not None:
                return found  # type: ignore[no-any-return]
        return super().model_validate_json(
            json_data,
            strict=strict,
            extra=extra,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )

    # --- reading -----------------------------------------------------------------------------

    @property
    def family(self) -> str | None:
        """The schema that validated the payload (``"story-context"`` ...), or ``None``."""
        return FAMILY_BY_MESSAGE_TYPE.get(self.message_type)

    @property
    def is_validated(self) -> bool:
        """Whether the payload was validated against a SOM 1.0 family schema."""
        return not isinstance(self.payload, UnvalidatedPayload)

    @property
    def timestamp_dt(self) -> datetime:
        """``timestamp`` as an aware datetime (the string itself is kept as sent)."""
        return parse_date_time(self.timestamp)

    @property
    def message_uuid(self) -> UUID:
        """``message_id`` as a :class:`~uuid.UUID`."""
        return UUID(self.message_id)

    @property
    def correlation_uuid(self) -> UUID:
        """``correlation_id`` as a :class:`~uuid.UUID`."""
        return UUID(self.correlation_id)

    def payload_as(self, kind: type[P]) -> P:
        """The payload, typed as ``kind``.

        Raises:
            TypeError: when the payload is not a ``kind`` (another family, or unvalidated).
        """
        payload = self.payload
        if not isinstance(payload, kind):
            raise TypeError(
                f"{self.message_type!r} carries a {type(payload).__name__}, not {kind.__name__}"
            )
        return payload

    @overload
    def payload_of(self, message_type: Literal["story.context"]) -> StoryContext: ...
    @overload
    def payload_of(
        self, message_type: Literal["telling.started", "telling.ended", "telling.exposed"]
    ) -> TellingEvent: ...
    @overload
    def payload_of(
        self, message_type: Literal["link.committed", "link.gate_changed", "link.withdrawn"]
    ) -> LinkEvent: ...
    @overload
    def payload_of(
        self, message_type: Literal["delivery.media_available"]
    ) -> DeliveryMediaAvailable: ...
    @overload
    def payload_of(self, message_type: Literal["system.audit"]) -> SystemAudit: ...
    @overload
    def payload_of(self, message_type: Literal["skill.warning.raised"]) -> SkillWarning: ...
    @overload
    def payload_of(self, message_type: str) -> FamilyPayload | UnvalidatedPayload: ...
    def payload_of(self, message_type: str) -> FamilyPayload | UnvalidatedPayload:
        """The payload, typed by the ``message_type`` this envelope is expected to carry.

        Raises:
            ValueError: when the envelope's ``message_type`` is another one.
        """
        if self.message_type != message_type:
            raise ValueError(f"the envelope carries {self.message_type!r}, not '{message_type}'")
        return self.payload

    def _notes(self) -> list[Violation]:
        """For ``envelope_warnings``: a tolerated 1.x version, an unvalidated payload."""
        found: list[Violation] = []
        if self.som_version != SOM_VERSION:
            found.append(
                violation(
                    rules.SOM_VERSION_UNSUPPORTED_MINOR,
                    "/som_version",
                    f"som_version {self.som_version} tolerated as SOM 1.x; validated as 1.0.0.",
                )
            )
        if isinstance(self.payload, UnvalidatedPayload):
            found.append(
                violation(
                    rules.PAYLOAD_UNVALIDATED,
                    "/payload",
                    f"message_type {shown(self.message_type)} has no SOM 1.0 schema; "
                    "the payload is passed through unvalidated.",
                )
            )
        return found

    # --- writing -----------------------------------------------------------------------------

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON: members in the schema's order, every value as it was parsed."""
        return dumps(self.model_dump(by_alias=True))

    # For the type checkers. A class typed by one family (a user's subclass, `SomEnvelope[X]`)
    # makes itself of that family, typed so; the plain class (and any other) makes an envelope
    # typed by the family it is given, by the variants after these.
    @overload
    @classmethod
    def create(
        cls: type[_StoryEnvelope],
        message_type: None = None,
        *,
        payload: StoryContext,
        **keywords: Unpack[ProducingKeywords],
    ) -> _StoryEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_StoryEnvelope],
        message_type: Literal["story.context"],
        payload: StoryContext | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> _StoryEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_TellingEnvelope],
        message_type: None = None,
        *,
        payload: TellingEvent,
        **keywords: Unpack[ProducingKeywords],
    ) -> _TellingEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_TellingEnvelope],
        message_type: TellingMessageType,
        payload: TellingEvent | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> _TellingEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_LinkEnvelope],
        message_type: None = None,
        *,
        payload: LinkEvent,
        **keywords: Unpack[ProducingKeywords],
    ) -> _LinkEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_LinkEnvelope],
        message_type: LinkMessageType,
        payload: LinkEvent | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> _LinkEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_DeliveryEnvelope],
        message_type: None = None,
        *,
        payload: DeliveryMediaAvailable,
        **keywords: Unpack[ProducingKeywords],
    ) -> _DeliveryEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_DeliveryEnvelope],
        message_type: Literal["delivery.media_available"],
        payload: DeliveryMediaAvailable | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> _DeliveryEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_AuditEnvelope],
        message_type: None = None,
        *,
        payload: SystemAudit,
        **keywords: Unpack[ProducingKeywords],
    ) -> _AuditEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_AuditEnvelope],
        message_type: Literal["system.audit"],
        payload: SystemAudit | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> _AuditEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_WarningEnvelope],
        message_type: None = None,
        *,
        payload: SkillWarning,
        **keywords: Unpack[ProducingKeywords],
    ) -> _WarningEnvelope: ...
    @overload
    @classmethod
    def create(
        cls: type[_WarningEnvelope],
        message_type: Literal["skill.warning.raised"],
        payload: SkillWarning | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> _WarningEnvelope: ...
    @overload
    @classmethod
    def create(
        cls, message_type: None = None, *, payload: F, **keywords: Unpack[ProducingKeywords]
    ) -> SomEnvelope[F]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: Literal["story.context"],
        payload: StoryContext | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[StoryContext]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: TellingMessageType,
        payload: TellingEvent | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[TellingEvent]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: LinkMessageType,
        payload: LinkEvent | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[LinkEvent]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: Literal["delivery.media_available"],
        payload: DeliveryMediaAvailable | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[DeliveryMediaAvailable]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: Literal["system.audit"],
        payload: SystemAudit | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[SystemAudit]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: Literal["skill.warning.raised"],
        payload: SkillWarning | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[SkillWarning]: ...
    @overload
    @classmethod
    def create(
        cls,
        message_type: str,
        payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any],
        *,
        allow_unknown: bool,
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope: ...
    @classmethod
    def create(
        cls,
        message_type: str | None = None,
        payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any] | None = None,
        *,
        originating_system: OriginatingSystem | Mapping[str, Any] | None = None,
        correlation_id: str | UUID | None = None,
        causation_id: str | UUID | None = None,
        topic: str | None = None,
        timestamp: datetime | str | None = None,
        message_id: str | UUID | None = None,
        extensions: Mapping[str, Any] | None = None,
        settings: Settings | None = None,
        allow_unknown: bool = False,
    ) -> SomEnvelope[Any]:
        """Produce a new SOM 1.0 message, checked before anything is sent.

        ``SomEnvelope.create(payload=story)`` takes the ``message_type`` from the family model
        and returns a ``SomEnvelope[StoryContext]``; so does ``create("story.context", ...)``
        with a mapping payload.

        The envelope is of the class called, and a user's class typed by one family
        (``class Stories(SomEnvelope[StoryContext])``) is typed as itself. Limits of the type
        checkers: given another family, which it refuses (``payload.family_unexpected``), such a
        class is typed as the plain envelope of that family (the payload type is covariant: a
        ``Stories`` is a ``SomEnvelope``); an unparametrised subclass (``class Mine(SomEnvelope)``)
        is typed ``SomEnvelope[StoryContext]``; a subclass still generic in its own TypeVar is
        typed by it unsolved (``Gen[Any]``, ``Gen[Unknown]``): call ``Gen[StoryContext].create``.

        Args:
            message_type: the lower-case dotted type; it alone selects the payload schema.
                One of the ten with a SOM 1.0 schema (:data:`KnownMessageType`), unless
                ``allow_unknown``; taken from ``payload`` when that is a family model.
            payload: a family model, or a mapping validated against the family's schema (a
                ``message_type`` member it requires is filled in from ``message_type``).
            originating_system: defaults to ``ENVELOPEKIT_SOM_SYSTEM_ID`` / ``_TYPE`` /
                ``_NAME`` from the settings.
            correlation_id: the story lifecycle's id; a new UUIDv7 when not given.
            causation_id: the id of the message that caused this one, if any.
            topic: the routing key; ``"som." + message_type`` when not given.
            timestamp: an aware datetime or an RFC 3339 string; now (UTC, microseconds)
                when not given.
            message_id: a new UUIDv7 when not given.
            extensions: vendor members, keys namespaced ``com.<vendor>.``.
            settings: the settings to take defaults from (the environment's when not given).
            allow_unknown: produce a ``message_type`` SOM 1.0 has no schema for (its payload
                a mapping or :class:`UnvalidatedPayload`, sent unvalidated). Consumers
                tolerate unknown families, so one can be produced, but only deliberately:
                without it, an unknown ``message_type`` (a typo such as ``story.contxt``) is
                refused (``message_type.unknown``).

        Raises:
            ProducerError: for anything that would make the message invalid, or that
                :func:`envelopekit.check` with ``settings`` refuses (over
                ``max_message_bytes`` or SOM's 240,000 bytes: ``message.too_large``; nesting
                deeper than ``max_depth``: ``message.too_deep``); its ``violations`` name each
                rule and pointer, as :func:`envelopekit.check` would for the message.
            TypeError: for ``settings`` that are no :class:`~envelopekit.Settings` (nor ``None``).
        """
        data, text = wire_data(
            message_type,
            payload,
            allow_unknown=allow_unknown,
            originating_system=originating_system,
            correlation_id=correlation_id,
            causation_id=causation_id,
            topic=topic,
            timestamp=timestamp,
            message_id=message_id,
            extensions=extensions,
            settings=settings,
        )
        context: dict[str, Any] = {"som_version_mode": "strict"}
        if text is not None:
            context[WRITTEN] = text
        try:
            return cls.model_validate(data, context=context)
        except ValidationError as exc:
            raise ProducerError.from_validation(exc, cls) from exc

    @overload
    def follow_up(
        self, message_type: None = None, *, payload: F, **keywords: Unpack[ProducingKeywords]
    ) -> SomEnvelope[F]: ...
    @overload
    def follow_up(
        self,
        message_type: Literal["story.context"],
        payload: StoryContext | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[StoryContext]: ...
    @overload
    def follow_up(
        self,
        message_type: TellingMessageType,
        payload: TellingEvent | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[TellingEvent]: ...
    @overload
    def follow_up(
        self,
        message_type: LinkMessageType,
        payload: LinkEvent | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[LinkEvent]: ...
    @overload
    def follow_up(
        self,
        message_type: Literal["delivery.media_available"],
        payload: DeliveryMediaAvailable | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[DeliveryMediaAvailable]: ...
    @overload
    def follow_up(
        self,
        message_type: Literal["system.audit"],
        payload: SystemAudit | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[SystemAudit]: ...
    @overload
    def follow_up(
        self,
        message_type: Literal["skill.warning.raised"],
        payload: SkillWarning | Mapping[str, Any],
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope[SkillWarning]: ...
    @overload
    def follow_up(
        self,
        message_type: str,
        payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any],
        *,
        allow_unknown: bool,
        **keywords: Unpack[ProducingKeywords],
    ) -> SomEnvelope: ...
    def follow_up(
        self,
        message_type: str | None = None,
        payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any] | None = None,
        *,
        originating_system: OriginatingSystem | Mapping[str, Any] | None = None,
        correlation_id: str | UUID | None = None,
        causation_id: str | UUID | None = None,
        topic: str | None = None,
        timestamp: datetime | str | None = None,
        message_id: str | UUID | None = None,
        extensions: Mapping[str, Any] | None = None,
        settings: Settings | None = None,
        allow_unknown: bool = False,
    ) -> SomEnvelope[Any]:
        """Produce a message caused by this one, typed as :meth:`create` types it.

        Same ``correlation_id``, ``causation_id`` = this ``message_id``, a new ``message_id``
        (each unless given); the other keywords as :meth:`create` (``originating_system`` is
        the settings', since whoever publishes stamps it).

        Raises:
            ProducerError: as :meth:`create`.
        """
        # The plain envelope produces: a `SomEnvelope[StoryContext]` is followed by any family.
        create = cast("Callable[..., SomEnvelope[Any]]", unparametrised(type(self)).create)
        return create(
            message_type,
            payload,
            originating_system=originating_system,
            correlation_id=self.correlation_id if correlation_id is None else correlation_id,
            causation_id=self.message_id if causation_id is None else causation_id,
            topic=topic,
            timestamp=timestamp,
            message_id=message_id,
            extensions=extensions,
            settings=settings,
            allow_unknown=allow_unknown,
        )


def _own_type_agrees(envelope: SomEnvelope[Any]) -> bool:
    """Whether the payload's own ``message_type``, where its family has one, is the envelope's."""
    # A family without the field would send `getattr` through pydantic's slow miss path.
    own = envelope.payload.__dict__.get("message_type", MISSING)
    return own is MISSING or own == envelope.message_type


FAST_PATH: Final[FastPath[Any]] = FastPath(
    SomEnvelope,
    "payload",
    "message_type",
    PAYLOAD_MODELS,
    # Only the current wire version takes the fast path: the others need the mode.
    narrowed={"som_version": core_schema.literal_schema([SOM_VERSION])},
    # Its rules: an unknown type never takes the fast path, and each choice's payload can only
    # carry its own message type.
    dropped=["_payload_agrees"],
)
"""``SomEnvelope.model_validate_json``'s fast path (:mod:`._fast`), built on first use."""


_parse: JsonParse = first_parse(FAST_PATH, globals(), "_parse")


def validate_large(raw: bytes | str, context: Mapping[str, Any]) -> SomEnvelope:
    """``SomEnvelope.model_validate_json`` for a message over ``FULL_REPORT_BYTES``.

    The model's own schema with every array failing fast (``envelopekit._failfast``), not the
    fast path: on a large free-form value (``_actors``, ``claim``, ``params``) the fast path's
    JSON-value union costs many times the model's own reading (a 170 KB ``_actors`` of nested
    arrays: 32 ms against 2.7 ms).

    Raises:
        pydantic.ValidationError: when the message is not valid.
    """
    reader = large_validator(SomEnvelope, absent=True)
    found: SomEnvelope = reader.validate_json(raw, context=context)
    return found
