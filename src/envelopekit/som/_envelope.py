"""The SOM 1.0 envelope (``envelope.schema.json``), its wire-version rule, and producing."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import (
    Annotated,
    Any,
    ClassVar,
    Final,
    Literal,
    TypeAlias,
    TypeVar,
    cast,
    overload,
)
from uuid import UUID

from pydantic import (
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.config import ExtraValues
from pydantic_core import PydanticCustomError, SchemaValidator, core_schema
from typing_extensions import Self

from .. import rules
from .._compat import MISSING
from .._errors import ProducerError
from .._failfast import fail_fast_validator
from .._ids import rfc3339, uuid7
from .._json import dumps, plain_json
from .._schema import ref_to
from .._settings import Settings, get_settings
from .._violations import Violation, violation, violations
from ._delivery import DeliveryMediaAvailable
from ._fast import dispatching_validator
from ._link import LinkEvent
from ._payloads import (
    FAMILY_BY_MESSAGE_TYPE,
    PAYLOAD_MODELS,
    FamilyPayload,
    SomPayload,
    UnvalidatedPayload,
    done_validating,
    validating_as,
)
from ._skill_warning import SkillWarning
from ._story_context import StoryContext
from ._system_audit import SystemAudit
from ._telling import TellingEvent
from ._types import (
    MESSAGE_TYPE_PATTERN,
    SEMVER_PATTERN,
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
    is_extension_key,
    parse_date_time,
)

__all__ = [
    "SOM_VERSION",
    "ModificationHeader",
    "OriginatingSystem",
    "SomEnvelope",
    "SystemType",
    "VersionMode",
]

SOM_VERSION: Final = "1.0.0"
"""The wire version SOM 1.0 producers emit, and the only one the official tools accept."""

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

VersionMode: TypeAlias = Literal["strict", "tolerant"]
"""``strict``: only ``1.0.0`` (the official tools); ``tolerant``: any ``1.x.y`` (the bus)."""

SomVersion: TypeAlias = Annotated[str, StringConstraints(strict=True, pattern=SEMVER_PATTERN)]
MessageType: TypeAlias = Annotated[
    str, StringConstraints(strict=True, pattern=MESSAGE_TYPE_PATTERN)
]
Topic: TypeAlias = Annotated[str, StringConstraints(strict=True, pattern=TOPIC_PATTERN)]

P = TypeVar("P", bound="FamilyPayload | UnvalidatedPayload")

_MESSAGE_TYPE_RE: Final = re.compile(r"\A[a-z][a-z0-9_.]*\Z")
_uuid_adapter: Final = TypeAdapter(UuidStr)
_date_time_adapter: Final = TypeAdapter(DateTimeStr)
# Families whose schema requires the payload to repeat the envelope's message_type.
_OWN_TYPE_REQUIRED: Final = (TellingEvent, LinkEvent, DeliveryMediaAvailable)


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


def _context_value(info: ValidationInfo, key: str) -> Any:
    context = info.context
    if isinstance(context, Mapping):
        return cast("Mapping[str, Any]", context).get(key)
    return None


_ENVELOPE_DESCRIPTION: Final = (
    "A SOM 1.0 message: the envelope, with the payload its `message_type` selects. "
    "`message_type` is the only parsing discriminator: the payload of one of the ten types with "
    "a SOM 1.0 schema must match that family's schema; any other `message_type` carries a JSON "
    "object, unvalidated. `som_version` is 1.0.0."
)


def _envelope_json_schema(schema: dict[str, Any]) -> None:
    """What the envelope's validators enforce, in its generated JSON Schema.

    ``som_version`` is 1.0.0 (the default, strict mode). The payload is chosen by
    ``message_type`` alone: one ``if``/``then`` per known type, whose ``then`` also holds the
    payload's own ``message_type`` (where its family has one) to the envelope's; any other
    ``message_type`` carries an object, unvalidated. A plain ``oneOf`` of the families and the
    unknown-family object would refuse every valid known message (it matches both).

    The class docstring documents the Python API; the schema gets the wire-level description.
    """
    schema["description"] = _ENVELOPE_DESCRIPTION
    properties = schema["properties"]
    properties["som_version"]["const"] = SOM_VERSION
    payload = properties["payload"]
    branches = payload.pop("oneOf")
    payload["type"] = "object"
    dispatch: list[dict[str, Any]] = []
    for message_type, model in PAYLOAD_MODELS.items():
        family = ref_to(model, branches)
        if "message_type" in model.model_fields:
            family["properties"] = {"message_type": {"const": message_type}}
        dispatch.append(
            {
                "if": _message_type_is({"const": message_type}),
                "then": {"properties": {"payload": family}},
            }
        )
    dispatch.append(
        {
            "if": _message_type_is({"not": {"enum": sorted(PAYLOAD_MODELS)}}),
            "then": {"properties": {"payload": ref_to(UnvalidatedPayload, branches)}},
        }
    )
    schema["allOf"] = dispatch


def _message_type_is(condition: dict[str, Any]) -> dict[str, Any]:
    return {"properties": {"message_type": condition}, "required": ["message_type"]}


class SomEnvelope(SomModel):
    """A SOM 1.0 message: the envelope, with the payload its ``message_type`` selects.

    Parse with ``SomEnvelope.model_validate_json(raw)``; ``payload`` is then the family model
    (:class:`StoryContext`, :class:`TellingEvent`, ...) or, for a ``message_type`` with no
    SOM 1.0 schema, an :class:`UnvalidatedPayload` holding the JSON object as received.

    Validation context (``model_validate_json(raw, context={...})``):

    * ``"som_version_mode"``: ``"strict"`` or ``"tolerant"``; defaults to
      ``Settings.som_version_mode``.
    * ``"unknown_message_type"``: ``"refuse"`` refuses a ``message_type`` with no SOM 1.0
      schema (``message_type.unknown``) instead of accepting it unvalidated.

    Wire names that are not Python identifiers are aliases: ``actors`` is ``_actors`` and
    ``context`` is ``@context``.
    """

    model_config = ConfigDict(json_schema_extra=_envelope_json_schema)
    __schema_name__: ClassVar[str] = "envelope"
    __false_schema__: ClassVar[frozenset[str]] = frozenset({"source", "signature"})

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
    payload: SomPayload
    """The message's content: a JSON object, validated by the schema ``message_type`` selects."""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""
    context: StringOrObject | MISSING = Field(default=MISSING, alias="@context")
    """JSON-LD context — DEFERRED in v0.3 (decision #18); permitted for forward compatibility"""

    # --- validation --------------------------------------------------------------------------

    @field_validator("som_version")
    @classmethod
    def _wire_version(cls, value: str, info: ValidationInfo) -> str:
        if value == SOM_VERSION:
            return value
        # Compared as text: the pattern allows more digits than int() converts, and zeros lead.
        major = value.partition(".")[0].lstrip("0")
        if not major:
            raise PydanticCustomError(
                rules.SOM_VERSION_PRE_1_0,
                "som_version {version} is pre-1.0 and not SOM 1.0 conformant",
                {"version": value},
            )
        if major != "1":
            raise PydanticCustomError(
                rules.SOM_VERSION_UNSUPPORTED_MAJOR,
                "som_version {version} is not SOM 1.x",
                {"version": value},
            )
        mode = _context_value(info, "som_version_mode") or get_settings().som_version_mode
        if mode == "tolerant":
            return value
        raise PydanticCustomError(
            rules.SOM_VERSION_UNSUPPORTED_MINOR,
            "som_version {version} is not 1.0.0 (accepted only in tolerant mode)",
            {"version": value},
        )

    @field_validator("payload", mode="wrap")
    @classmethod
    def _dispatch(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        # `message_type` is declared (so validated) before `payload`; when it failed, the
        # payload is only checked to be an object, as the envelope schema does.
        message_type = info.data.get("message_type")
        token = validating_as(message_type if isinstance(message_type, str) else "")
        try:
            return handler(value)
        finally:
            done_validating(token)

    @model_validator(mode="after")
    def _payload_agrees(self, info: ValidationInfo) -> SomEnvelope:
        payload = self.payload
        if isinstance(payload, UnvalidatedPayload):
            if _context_value(info, "unknown_message_type") == "refuse":
                raise PydanticCustomError(
                    rules.MESSAGE_TYPE_UNKNOWN,
                    "message_type '{message_type}' has no SOM 1.0 schema",
                    {"message_type": self.message_type, "pointer": "/message_type"},
                )
            return self
        # A family without the field would send `getattr` through pydantic's slow miss path.
        own = payload.__dict__.get("message_type", MISSING)
        if own is not MISSING and own != self.message_type:
            raise PydanticCustomError(
                rules.PAYLOAD_MESSAGE_TYPE_MISMATCH,
                "The payload's message_type '{own}' disagrees with the envelope's '{envelope}'",
                {"own": own, "envelope": self.message_type, "pointer": "/payload/message_type"},
            )
        return self

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
        validated, and reported, by the model's own validator, exactly as without it.
        """
        __tracebackhide__ = True
        if cls is SomEnvelope and by_alias is None and by_name is None:
            fast = _FAST[0] if _FAST else _fast_validator()
            if fast is not None:
                try:
                    # Keyword arguments cost a Rust call more than the check does.
                    found = (
                        fast.validate_json(json_data)
                        if strict is None and extra is None and context is None
                        else fast.validate_json(
                            json_data, strict=strict, extra=extra, context=context
                        )
                    )
                except ValidationError:  # not JSON: the model's validator reports it below
                    found = None
                if found is not None and _payload_agrees(found):
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
                    f"message_type {self.message_type!r} has no SOM 1.0 schema; "
                    "the payload is passed through unvalidated.",
                )
            )
        return found

    # --- writing -----------------------------------------------------------------------------

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON: members in the schema's order, every value as it was parsed."""
        return dumps(self.model_dump(by_alias=True))

    @classmethod
    def create(
        cls,
        message_type: str,
        payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any],
        *,
        originating_system: OriginatingSystem | Mapping[str, Any] | None = None,
        correlation_id: str | UUID | None = None,
        causation_id: str | UUID | None = None,
        topic: str | None = None,
        timestamp: datetime | str | None = None,
        message_id: str | UUID | None = None,
        extensions: Mapping[str, Any] | None = None,
        settings: Settings | None = None,
    ) -> SomEnvelope:
        """Produce a new SOM 1.0 message, checked before anything is sent.

        Args:
            message_type: the lower-case dotted type; it alone selects the payload schema.
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

        Raises:
            ProducerError: for anything that would make the message invalid.
        """
        settings = settings if settings is not None else get_settings()
        if not isinstance(message_type, str) or _MESSAGE_TYPE_RE.match(message_type) is None:
            raise ProducerError(f"message_type '{message_type}' is not lower-case dotted")
        chosen_topic = f"som.{message_type}" if topic is None else topic
        if not isinstance(chosen_topic, str) or not chosen_topic.startswith("som."):
            raise ProducerError(f"topic {chosen_topic!r} does not begin with 'som.'")
        data: dict[str, Any] = {
            "som_version": SOM_VERSION,
            "message_id": _uuid_text("message_id", message_id),
            "correlation_id": _uuid_text("correlation_id", correlation_id),
        }
        if causation_id is not None:
            data["causation_id"] = _uuid_text("causation_id", causation_id)
        data["message_type"] = message_type
        data["timestamp"] = _timestamp_text(timestamp)
        data["originating_system"] = _originating_system(originating_system, settings)
        data["topic"] = chosen_topic
        data["payload"] = _payload_input(message_type, payload)
        if extensions is not None:
            bad = [key for key in extensions if not _is_extension_key(key)]
            if bad:
                raise ProducerError(f"extension keys {bad!r} are not namespaced com.<vendor>.")
            data["extensions"] = extensions
        # Validation takes a model instance as it is, and `model_copy(update=...)` derives one
        # unvalidated: every model given (payload, originating_system, or one nested in a
        # mapping) is validated from what it would put on the wire, as a consumer will see it.
        data = plain_json(data)
        try:
            return cls.model_validate(data, context={"som_version_mode": "strict"})
        except ValidationError as exc:
            found = "; ".join(f"{v.rule} at {v.pointer or '/'}" for v in violations(exc, model=cls))
            raise ProducerError(f"the message would be invalid: {found}") from exc

    def follow_up(
        self,
        message_type: str,
        payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any],
        **keywords: Any,
    ) -> SomEnvelope:
        """Produce a message caused by this one.

        Same ``correlation_id``, ``causation_id`` = this ``message_id``, a new ``message_id``;
        other keywords as :meth:`create` (``originating_system`` is the settings', since
        whoever publishes stamps it).

        Raises:
            ProducerError: as :meth:`create`.
        """
        keywords.setdefault("correlation_id", self.correlation_id)
        keywords.setdefault("causation_id", self.message_id)
        return type(self).create(message_type, payload, **keywords)


_FAST: list[SchemaValidator | None] = []
_FAIL_FAST: dict[str, SchemaValidator | None] = {}


def _payload_agrees(found: SomEnvelope) -> bool:
    # `_payload_agrees`, left out of the fast validator: cheaper checked on its result.
    own = found.payload.__dict__.get("message_type", MISSING)
    return own is MISSING or own == found.message_type


def _fast_validator(*, fail_fast: bool = False) -> SchemaValidator | None:
    """The Rust-dispatching validator of :mod:`._fast`, built on first use."""
    if fail_fast or not _FAST:
        validator = dispatching_validator(
            SomEnvelope,
            "payload",
            "message_type",
            PAYLOAD_MODELS,
            # Only the current wire version takes the fast path: the others need the mode.
            narrowed={"som_version": core_schema.literal_schema([SOM_VERSION])},
            # Checked by the caller on the result; a Python hook costs more when Rust calls it.
            dropped=["_payload_agrees"],
            fail_fast=fail_fast,
        )
        if fail_fast:
            return validator
        _FAST.append(validator)
    return _FAST[0]


def validate_large(raw: bytes | str, context: Mapping[str, Any]) -> SomEnvelope:
    """``SomEnvelope.model_validate_json`` for a large message, both validators failing fast.

    The verdict is the model's; a refusal reports one failing item per array (``_failfast``).

    Raises:
        pydantic.ValidationError: when the message is not valid.
    """
    if "fast" not in _FAIL_FAST:
        _FAIL_FAST["fast"] = _fast_validator(fail_fast=True)
        _FAIL_FAST["model"] = fail_fast_validator(SomEnvelope.__pydantic_core_schema__)
    fast = _FAIL_FAST["fast"]
    if fast is not None:
        try:
            found = fast.validate_json(raw, context=context)
        except ValidationError:  # not JSON: the model's validator reports it below
            found = None
        if found is not None and _payload_agrees(found):
            return found  # type: ignore[no-any-return]
    model = _FAIL_FAST["model"]
    assert model is not None
    return model.validate_json(raw, context=context)  # type: ignore[no-any-return]


# --- producing helpers -------------------------------------------------------------------------


def _uuid_text(name: str, value: str | UUID | None) -> str:
    if value is None:
        return uuid7()
    if isinstance(value, UUID):
        return str(value)
    try:
        return _uuid_adapter.validate_python(value)
    except ValidationError:
        raise ProducerError(f"{name} '{value}' is not a UUID") from None


def _timestamp_text(value: datetime | str | None) -> str:
    if value is None:
        return rfc3339(digits=6)
    if isinstance(value, datetime):
        try:
            return rfc3339(value, digits=6)
        except ValueError as exc:
            raise ProducerError(f"timestamp: {exc}") from None
    try:
        return _date_time_adapter.validate_python(value)
    except ValidationError:
        raise ProducerError(f"timestamp '{value}' is not an RFC 3339 date-time") from None


def _originating_system(
    given: OriginatingSystem | Mapping[str, Any] | None, settings: Settings
) -> OriginatingSystem | Mapping[str, Any]:
    if given is not None:
        return given
    if settings.som_system_id is None:
        raise ProducerError("no originating_system given and ENVELOPEKIT_SOM_SYSTEM_ID is not set")
    system: dict[str, Any] = {
        "system_id": settings.som_system_id,
        "system_type": settings.som_system_type,
    }
    if settings.som_system_name is not None:
        system["system_name"] = settings.som_system_name
    return system


def _payload_input(
    message_type: str, payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any]
) -> Any:
    family = PAYLOAD_MODELS.get(message_type)
    if isinstance(payload, UnvalidatedPayload):
        payload = payload.root
    elif not isinstance(payload, Mapping):
        if family is None or not isinstance(payload, family):
            expected = family.__name__ if family is not None else "a mapping"
            raise ProducerError(
                f"'{message_type}' takes {expected}, not a {type(payload).__name__}"
            )
        return payload
    if family is None:
        return dict(payload)
    body = dict(payload)
    if issubclass(family, _OWN_TYPE_REQUIRED) and "message_type" not in body:
        body["message_type"] = message_type
    return body


def _is_extension_key(key: Any) -> bool:
    return isinstance(key, str) and is_extension_key(key)
