"""The SOM 1.0 envelope (``envelope.schema.json``), its wire-version rule, and producing."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from datetime import datetime
from typing import (
    Annotated,
    Any,
    ClassVar,
    Final,
    Generic,
    Literal,
    TypeAlias,
    TypedDict,
    cast,
    get_args,
    get_origin,
    overload,
)
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
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
from pydantic_core import CoreSchema, PydanticCustomError, SchemaValidator, core_schema
from typing_extensions import Self, TypeVar, Unpack

from .. import rules
from .._compat import MISSING
from .._errors import ProducerError
from .._failfast import fail_fast_validator
from .._ids import rfc3339, uuid7
from .._json import dumps, plain_json
from .._schema import ref_to, shipping
from .._settings import Settings, get_settings
from .._violations import Violation, violation
from ._delivery import DeliveryMediaAvailable
from ._fast import dispatching_validator
from ._link import LinkEvent, LinkMessageType
from ._payloads import (
    FAMILY_BY_MESSAGE_TYPE,
    PAYLOAD_MODELS,
    FamilyPayload,
    SomPayload,
    UnvalidatedPayload,
    done_validating,
    message_type_of,
    validating_as,
)
from ._skill_warning import SkillWarning
from ._story_context import StoryContext
from ._system_audit import SystemAudit
from ._telling import TellingEvent, TellingMessageType
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
    parse_date_time,
)

__all__ = [
    "SOM_VERSION",
    "ModificationHeader",
    "OriginatingSystem",
    "ProducingKeywords",
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

_MESSAGE_TYPE_RE: Final = re.compile(r"\A[a-z][a-z0-9_.]*\Z")
_FAMILIES: Final = tuple(dict.fromkeys(PAYLOAD_MODELS.values()))
_DATE_TIME: Final = rules.structural("envelope", "format.date-time")
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


_ENVELOPE_DESCRIPTION: Final = (
    "A SOM 1.0 message: the envelope, with the payload its `message_type` selects. "
    "`message_type` is the only parsing discriminator: the payload of one of the ten types with "
    "a SOM 1.0 schema must match that family's schema; any other `message_type` carries a JSON "
    "object, unvalidated. `som_version` is 1.0.0."
)


def _envelope_json_schema(schema: dict[str, Any], cls: type[Any]) -> None:
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
    if "oneOf" not in payload:
        _typed_envelope_json_schema(properties, cls)
        return
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


def _typed_envelope_json_schema(properties: dict[str, Any], cls: type[Any]) -> None:
    """``SomEnvelope[Family]``: the payload is that type; ``message_type`` one that selects it."""
    expected = _expected_of(cls)
    if expected is None:
        return
    known, unknown, _ = expected
    if not unknown:
        properties["message_type"]["enum"] = sorted(known)
    elif not known:
        properties["message_type"]["not"] = {"enum": sorted(PAYLOAD_MODELS)}


def _message_type_is(condition: dict[str, Any]) -> dict[str, Any]:
    return {"properties": {"message_type": condition}, "required": ["message_type"]}


def _as_tagged_union(envelope: dict[str, Any], handler: GetJsonSchemaHandler) -> None:
    """Rewrite the envelope's ``if``/``then`` schema as a discriminated ``oneOf`` of variants.

    Each ``if``/``then`` pair becomes one variant: the envelope with ``message_type`` held to
    the condition and ``payload`` to the schema it selects. The conditions exclude each other
    (nine ``const`` and the ``not`` ``enum`` of them), so exactly one variant takes a message
    the ``if``/``then`` form accepts, and none one it refuses.
    """
    dispatch = envelope.pop("allOf", None)
    if dispatch is None:  # already rewritten in this generation
        return
    properties = envelope["properties"]
    payload = {k: v for k, v in properties["payload"].items() if k != "type"}
    variants: list[JsonSchemaValue] = []
    mapping: dict[str, str] = {}
    for branch in dispatch:
        condition = branch["if"]["properties"]["message_type"]
        message_type = condition.get("const")
        title = _variant_title(message_type)
        variant = {
            **envelope,
            "title": title,
            "description": (
                f"A SOM 1.0 message of message_type {message_type}."
                if message_type is not None
                else "A SOM 1.0 message of a message_type with no SOM 1.0 schema: its payload "
                "is a JSON object, unvalidated."
            ),
            "properties": {
                **properties,
                "message_type": {**properties["message_type"], **condition},
                "payload": {**payload, **branch["then"]["properties"]["payload"]},
            },
        }
        # Through a `definitions` schema: generated in full (its hook, its definition), where
        # the handler called on the model's own schema would only inline it.
        model = _variant_model(title).__pydantic_core_schema__
        reference = model.get("ref")
        assert reference is not None, "a model's core schema has a reference"
        wrapped = core_schema.definitions_schema(
            core_schema.definition_reference_schema(reference), [model]
        )
        token = _VARIANT.set(variant)
        try:
            ref = handler(wrapped)
        finally:
            _VARIANT.reset(token)
        variants.append(ref)
        if message_type is not None:
            mapping[message_type] = ref["$ref"]
    for key in ("type", "properties", "required", "additionalProperties"):
        envelope.pop(key, None)
    envelope["oneOf"] = variants
    envelope["discriminator"] = {"propertyName": "message_type", "mapping": mapping}


def _variant_title(message_type: str | None) -> str:
    """``story.context`` -> ``SomStoryContextEnvelope``; ``None`` -> ``SomUnknownEnvelope``."""
    words = re.split(r"[._]", message_type) if message_type is not None else ["unknown"]
    return "Som" + "".join(word.capitalize() for word in words) + "Envelope"


# The variant schema `_as_tagged_union` is registering, read by the variant model's hook.
_VARIANT: ContextVar[JsonSchemaValue | None] = ContextVar("envelopekit_som_variant", default=None)
_VARIANT_MODELS: dict[str, type[BaseModel]] = {}


def _variant_model(title: str) -> type[BaseModel]:
    """A model that only names one variant's definition (its JSON Schema is ``_VARIANT``'s).

    A JSON Schema definition is registered by a core schema with a reference, and a model's is
    one; validation never uses it.
    """
    if title not in _VARIANT_MODELS:

        def variant_schema(
            cls: type[BaseModel], schema: CoreSchema, handler: GetJsonSchemaHandler
        ) -> JsonSchemaValue:
            found = _VARIANT.get()
            assert found is not None, "generated only inside _as_tagged_union"
            ref = handler(schema)  # registers the definition, then holds the variant
            definition = handler.resolve_ref_schema(ref)
            definition.clear()
            definition.update(found)
            return ref

        _VARIANT_MODELS[title] = type(
            title,
            (BaseModel,),
            {
                "__module__": __name__,
                "__qualname__": title,
                "__doc__": f"The {title} variant of SomEnvelope's JSON Schema.",
                "__get_pydantic_json_schema__": classmethod(variant_schema),
            },
        )
    return _VARIANT_MODELS[title]


class SomEnvelope(SomModel, Generic[PayloadT]):
    """A SOM 1.0 message: the envelope, with the payload its ``message_type`` selects.

    Parse with ``SomEnvelope.model_validate_json(raw)``; ``payload`` is then the family model
    (:class:`StoryContext`, :class:`TellingEvent`, ...) or, for a ``message_type`` with no
    SOM 1.0 schema, an :class:`UnvalidatedPayload` holding the JSON object as received.

    ``SomEnvelope[StoryContext]`` is the envelope typed by its payload: what :meth:`create`
    returns for a story, and a parser that also refuses a message whose ``message_type`` does
    not select that family (``payload.family_unexpected``).

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
    payload: PayloadT
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
            _as_tagged_union(handler.resolve_ref_schema(found), handler)
        return found

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
        if cls is not SomEnvelope and isinstance(message_type, str):
            _expect_family(cls, message_type)
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
            ProducerError: for anything that would make the message invalid; its
                ``violations`` name each rule and pointer, as :func:`envelopekit.check`
                would for the message.
        """
        settings = settings if settings is not None else get_settings()
        if message_type is None:
            message_type = _inferred_message_type(payload)
        if payload is None:
            raise ProducerError.of(
                [violation(_ENVELOPE_REQUIRED, "/payload", "'payload' is a required property")]
            )
        if (
            not allow_unknown
            and message_type not in PAYLOAD_MODELS
            and _MESSAGE_TYPE_RE.match(message_type) is not None
        ):
            raise ProducerError.of([_unknown_message_type(message_type)])
        data: dict[str, Any] = {
            "som_version": SOM_VERSION,
            "message_id": _uuid_text(message_id),
            "correlation_id": _uuid_text(correlation_id),
        }
        if causation_id is not None:
            data["causation_id"] = _uuid_text(causation_id)
        data["message_type"] = message_type
        data["timestamp"] = _timestamp_text(timestamp)
        data["originating_system"] = _originating_system(originating_system, settings)
        data["topic"] = f"som.{message_type}" if topic is None else topic
        data["payload"] = _payload_input(message_type, payload)
        if extensions is not None:
            data["extensions"] = extensions
        # Validation takes a model instance as it is, and `model_copy(update=...)` derives one
        # unvalidated: every model given (payload, originating_system, or one nested in a
        # mapping) is validated from what it would put on the wire, as a consumer will see it.
        data = plain_json(data)
        try:
            return cls.model_validate(data, context={"som_version_mode": "strict"})
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
        create = cast("Callable[..., SomEnvelope[Any]]", _unparametrised(type(self)).create)
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


def _unparametrised(cls: type[SomEnvelope[Any]]) -> type[SomEnvelope[Any]]:
    origin = cls.__pydantic_generic_metadata__["origin"]
    return cls if origin is None else cast("type[SomEnvelope[Any]]", origin)


# A parametrised envelope class -> (the message types it takes, whether unknown ones too, the
# payload types' names), or None when it takes every message type.
_EXPECTED: dict[type, tuple[frozenset[str], bool, str] | None] = {}


def _expect_family(cls: type[SomEnvelope[Any]], message_type: str) -> None:
    """Refuse a ``message_type`` that does not select ``SomEnvelope[X]``'s payload type X."""
    if cls not in _EXPECTED:
        _EXPECTED[cls] = _expected_of(cls)
    expected = _EXPECTED[cls]
    if expected is None:
        return
    known, unknown, names = expected
    if message_type in known or (unknown and message_type not in PAYLOAD_MODELS):
        return
    # At /payload: a field validator's pointer is its field's (message_type was valid).
    family = PAYLOAD_MODELS.get(message_type, UnvalidatedPayload).__name__
    raise PydanticCustomError(
        rules.PAYLOAD_FAMILY_UNEXPECTED,
        "message_type '{message_type}' selects {family}; this envelope takes {expected}",
        {"message_type": message_type, "family": family, "expected": names},
    )


def _expected_of(cls: type[SomEnvelope[Any]]) -> tuple[frozenset[str], bool, str] | None:
    args = cls.__pydantic_generic_metadata__["args"]
    kinds = _payload_classes(args[0]) if args else None
    if kinds is None:  # a subclass of the plain envelope, or a payload type we cannot read
        return None
    families: list[type] = [*dict.fromkeys(PAYLOAD_MODELS.values()), UnvalidatedPayload]
    chosen = [family for family in families if any(issubclass(k, family) for k in kinds)]
    if len(chosen) == len(families):
        return None
    known = frozenset(t for t, model in PAYLOAD_MODELS.items() if model in chosen)
    names = " or ".join(kind.__name__ for kind in kinds)
    return known, UnvalidatedPayload in chosen, names


def _payload_classes(annotation: Any) -> list[type] | None:
    """The classes a payload type argument names (through unions and ``Annotated``)."""
    if get_origin(annotation) is Annotated:
        return _payload_classes(get_args(annotation)[0])
    if isinstance(annotation, type) and not get_args(annotation):
        return [annotation]
    members = get_args(annotation)
    if not members:
        return None
    found: list[type] = []
    for member in members:
        classes = _payload_classes(member)
        if classes is None:
            return None
        found += classes
    return found


# --- producing helpers -------------------------------------------------------------------------

_ENVELOPE_REQUIRED: Final = rules.structural("envelope", "required")


def _inferred_message_type(payload: object) -> str:
    """The ``message_type`` of a family model given without one."""
    if isinstance(payload, _FAMILIES):
        return message_type_of(payload)
    given = "no payload" if payload is None else f"a {type(payload).__name__} payload"
    raise ProducerError.of(
        [
            violation(
                _ENVELOPE_REQUIRED,
                "/message_type",
                f"'message_type' is a required property: pass it, or a family model as the "
                f"payload to take it from (not {given})",
            )
        ]
    )


def _unknown_message_type(message_type: str) -> Violation:
    close = difflib.get_close_matches(message_type, PAYLOAD_MODELS, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return violation(
        rules.MESSAGE_TYPE_UNKNOWN,
        "/message_type",
        f"message_type '{message_type}' has no SOM 1.0 schema: {hint}pass allow_unknown=True "
        "to produce an unknown family deliberately",
    )


def _uuid_text(value: str | UUID | None) -> str:
    # A string is checked by the model's validation, reported at its pointer.
    if value is None:
        return uuid7()
    return str(value) if isinstance(value, UUID) else value


def _timestamp_text(value: datetime | str | None) -> str:
    if value is None:
        return rfc3339(digits=6)
    if isinstance(value, datetime):
        try:
            return rfc3339(value, digits=6)
        except ValueError as exc:
            found = violation(_DATE_TIME, "/timestamp", f"timestamp {value.isoformat()}: {exc}")
            raise ProducerError.of([found]) from None
    return value


def _originating_system(
    given: OriginatingSystem | Mapping[str, Any] | None, settings: Settings
) -> OriginatingSystem | Mapping[str, Any]:
    if given is not None:
        return given
    if settings.som_system_id is None:
        found = violation(
            _ENVELOPE_REQUIRED,
            "/originating_system",
            "no originating_system given and ENVELOPEKIT_SOM_SYSTEM_ID is not set",
        )
        raise ProducerError.of([found])
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
