"""Writing envelopes as CloudEvents and reading them back: structured JSON and binary mode."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final, Generic, Literal, TypeVar, cast, overload

from pydantic import BaseModel
from pydantic_core import from_json

from .. import rules
from .._check import check
from .._duplicates import duplicate_keys
from .._errors import ProducerError
from .._failfast import FULL_REPORT_BYTES
from .._json import dumps, exceeds_depth, needs_scan, plain_numbers, scan_numbers
from .._settings import Settings, given_settings
from .._violations import Verdict, Violation, pointer, violation
from ..babelqueue._envelope import BabelEnvelope
from ..babelqueue._traceparent import TraceParent
from ..som._envelope import SomEnvelope
from ._mapping import (
    SPEC_BY_DATASCHEMA,
    AttributeValue,
    Envelope,
    agreement,
    write_attributes,
)
from ._types import (
    SPECVERSION,
    bad_string,
    datetime_instant,
    http_decode,
    http_encode,
    instant_of,
    is_attribute_name,
    is_int32,
    is_uri,
    is_uri_reference,
    millis_instant,
)

__all__ = [
    "STRUCTURED_CONTENT_TYPE",
    "BinaryMessage",
    "Binding",
    "from_binary",
    "from_message",
    "from_structured",
    "to_attributes",
    "to_binary",
    "to_structured",
]

Binding = Literal["http", "kafka", "amqp"]
"""A protocol binding of binary content mode."""
HeaderT = TypeVar("HeaderT", str, bytes)
M = TypeVar("M", bound=BaseModel)
HeaderValue = str | bytes | int | bool | datetime
Headers = Mapping[str, Any] | Sequence[tuple[str, Any]]

STRUCTURED_CONTENT_TYPE: Final = "application/cloudevents+json"
"""The media type of a structured-mode event in the JSON format."""

_CONTEXT: Final = frozenset(
    {"id", "source", "specversion", "type", "datacontenttype", "dataschema", "subject", "time"}
)
_REQUIRED: Final = ("id", "source", "specversion", "type")
# Attributes that, when present, MUST be non-empty (spec.md; the correlation extension).
_NON_EMPTY: Final = frozenset(
    {
        "id",
        "source",
        "type",
        "datacontenttype",
        "dataschema",
        "subject",
        "correlationid",
        "causationid",
        "traceparent",
        "tracestate",
    }
)
_PREFIX: Final[dict[str, str]] = {"http": "ce-", "kafka": "ce_"}
_AMQP_PREFIXES: Final = ("cloudEvents_", "cloudEvents:")
_CONTENT_TYPE: Final = "content-type"
# Attribute names and values of one event, all told: far beyond any real event, and a bound on
# what a hostile header set costs to read.
_MAX_ATTRIBUTE_CHARS: Final = 65_536
# A structured event carries the envelope (base64 makes it 4/3 larger) and its attributes.
_ATTRIBUTE_ROOM: Final = 65_536


@dataclass(slots=True)
class EventVerdict(Verdict[M]):
    """A verdict on a CloudEvent: an :class:`~envelopekit.Verdict`, and the event's attributes.

    Read-only by contract, as every verdict.

    Attributes:
        attributes: each valid attribute read, by name, as received (percent-decoded; an
            extension's Boolean or Integer as such; an AMQP ``time`` as its timestamp): the
            producer's ``traceparent`` to continue its span, ``source``, ``partitionkey``...
    """

    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BinaryMessage(Generic[HeaderT]):
    """An event in binary content mode: the envelope's JSON as the body, attributes as headers.

    Attributes:
        headers: HTTP headers (``ce-*`` and ``content-type``, percent-encoded strings), Kafka
            headers (``ce_*`` and ``content-type``, UTF-8 bytes) or AMQP application properties
            (``cloudEvents_*``, strings; the content type goes in the AMQP ``properties``).
        body: the data: the envelope exactly as its ``to_json()`` writes it.
        content_type: the data's media type, ``application/json`` (for AMQP, the
            ``content-type`` message property).
    """

    headers: dict[str, HeaderT]
    body: bytes
    content_type: str


# --- writing ---------------------------------------------------------------------------------


def to_attributes(
    envelope: Envelope,
    *,
    source: str | None = None,
    traceparent: str | TraceParent | None = None,
    tracestate: str | None = None,
    extensions: Mapping[str, AttributeValue] | None = None,
) -> dict[str, AttributeValue]:
    """The CloudEvents context attributes of ``envelope``, as canonical strings.

    Args:
        envelope: a ``BabelEnvelope`` or a ``SomEnvelope``.
        source: the event's ``source`` (a URI-reference naming the producer's context);
            ``/babelqueue`` or ``/som/<system_type>/<system_id>`` when not given.
        traceparent: the producing span (W3C Trace Context); for BabelQueue, the parent every
            SDK derives from ``trace_id`` when not given; for SOM, none when not given.
        tracestate: a W3C ``tracestate`` to carry with ``traceparent``.
        extensions: more extension attributes (``partitionkey`` for a Kafka key, a vendor's
            routing attribute): names ``a-z0-9``, at most 20 characters, none the mapping
            writes itself; values a String, a Boolean or a 32-bit Integer. A reader gets them
            back in :attr:`EventVerdict.attributes`, uncompared.

    Raises:
        ProducerError: what cannot be expressed, each with its rule id and pointer:
            ``cloudevents.unrepresentable`` (an envelope field its attribute cannot carry),
            ``cloudevents.attribute_invalid`` (an argument that is not of its type),
            ``cloudevents.attribute_mismatch`` (a BabelQueue ``traceparent`` of another trace).
        TypeError: for an ``envelope`` that is neither spec's model.
    """
    _spec_of(envelope)
    return write_attributes(
        envelope,
        source=source,
        traceparent=traceparent,
        tracestate=tracestate,
        extensions=extensions,
    )


def to_structured(
    envelope: Envelope,
    *,
    source: str | None = None,
    traceparent: str | TraceParent | None = None,
    tracestate: str | None = None,
    extensions: Mapping[str, AttributeValue] | None = None,
    settings: Settings | None = None,
) -> bytes:
    """The event in structured mode: ``application/cloudevents+json`` bytes.

    The attributes of :func:`to_attributes`, then ``data``: the envelope's ``to_json()`` bytes,
    embedded as they are. Arguments and errors as :func:`to_attributes`, and
    ``message.too_large`` for an event larger than :func:`from_structured` reads under
    ``settings`` (twice ``max_message_bytes``, and 64 KiB for the attributes): the reader's
    settings, as :func:`from_structured` takes them; the environment's when not given (a
    ``TypeError`` for ``settings`` that are no :class:`~envelopekit.Settings`).
    """
    settings = given_settings(settings)
    attributes = to_attributes(
        envelope,
        source=source,
        traceparent=traceparent,
        tracestate=tracestate,
        extensions=extensions,
    )
    event = dumps(attributes)[:-1] + b',"data":' + envelope.to_json() + b"}"
    limit = _structured_limit(settings)
    if len(event) > limit:
        raise _too_large(f"the event would be {len(event)} bytes, over the {limit} a reader takes")
    return event


@overload
def to_binary(
    envelope: Envelope,
    binding: Literal["kafka"],
    *,
    source: str | None = None,
    traceparent: str | TraceParent | None = None,
    tracestate: str | None = None,
    extensions: Mapping[str, AttributeValue] | None = None,
    separator: Literal["_", ":"] = "_",
) -> BinaryMessage[bytes]: ...
@overload
def to_binary(
    envelope: Envelope,
    binding: Literal["http", "amqp"] = "http",
    *,
    source: str | None = None,
    traceparent: str | TraceParent | None = None,
    tracestate: str | None = None,
    extensions: Mapping[str, AttributeValue] | None = None,
    separator: Literal["_", ":"] = "_",
) -> BinaryMessage[str]: ...
def to_binary(
    envelope: Envelope,
    binding: Binding = "http",
    *,
    source: str | None = None,
    traceparent: str | TraceParent | None = None,
    tracestate: str | None = None,
    extensions: Mapping[str, AttributeValue] | None = None,
    separator: Literal["_", ":"] = "_",
) -> BinaryMessage[str] | BinaryMessage[bytes]:
    """The event in binary content mode for ``binding``.

    Args:
        envelope: a ``BabelEnvelope`` or a ``SomEnvelope``.
        binding: ``"http"`` (``ce-`` headers, values percent-encoded), ``"kafka"`` (``ce_``
            headers, UTF-8 bytes) or ``"amqp"`` (``cloudEvents_`` application properties,
            canonical strings: a plain mapping cannot mark an AMQP timestamp).
        source: as :func:`to_attributes`.
        traceparent: as :func:`to_attributes`.
        tracestate: as :func:`to_attributes`.
        extensions: as :func:`to_attributes`; written as canonical strings in HTTP and Kafka
            headers, as native values in AMQP.
        separator: AMQP only: ``"_"`` (``cloudEvents_``, which JMS 2.0 clients can select on,
            as the binding prefers) or ``":"`` (``cloudEvents:``).

    Raises:
        ProducerError: as :func:`to_attributes`, and ``message.too_large`` for attributes past
            the 65,536 characters :func:`from_binary` reads, counted as the binding writes them
            (a long URN, queue or extension value; percent-encoding triples a non-ASCII byte).
        ValueError: for an unknown ``binding`` or ``separator``.
    """
    if binding not in ("http", "kafka", "amqp"):
        raise ValueError(f"unknown binding {binding!r}; expected 'http', 'kafka' or 'amqp'")
    if separator not in ("_", ":"):
        raise ValueError(f"unknown AMQP separator {separator!r}; expected '_' or ':'")
    attributes = to_attributes(
        envelope,
        source=source,
        traceparent=traceparent,
        tracestate=tracestate,
        extensions=extensions,
    )
    content_type = str(attributes.pop("datacontenttype"))
    body = envelope.to_json()
    if binding == "kafka":
        kafka = {
            f"ce_{name}": _canonical(value).encode("utf-8") for name, value in attributes.items()
        }
        _within_reading(kafka)
        return BinaryMessage(
            {_CONTENT_TYPE: content_type.encode("utf-8"), **kafka}, body, content_type
        )
    if binding == "http":
        http = {f"ce-{name}": http_encode(_canonical(value)) for name, value in attributes.items()}
        _within_reading(http)
        return BinaryMessage({_CONTENT_TYPE: content_type, **http}, body, content_type)
    # AMQP has a native Boolean and a native long; a plain mapping's bool and int become them.
    prefix = f"cloudEvents{separator}"
    properties: dict[str, Any] = {f"{prefix}{name}": value for name, value in attributes.items()}
    _within_reading(properties)
    return BinaryMessage(properties, body, content_type)


def _within_reading(headers: Mapping[str, Any]) -> None:
    """Refuse the attribute headers :func:`from_binary` would refuse as too large to read."""
    size = sum(_attribute_size(name, value) for name, value in headers.items())
    if size > _MAX_ATTRIBUTE_CHARS:
        raise _too_large(
            f"the event's attributes would be {size} characters as the binding writes them, "
            f"over the {_MAX_ATTRIBUTE_CHARS} a reader takes"
        )


def _too_large(message: str) -> ProducerError:
    # As the reader reports the event: the whole of it, not one attribute, is too large.
    return ProducerError.of([violation(rules.MESSAGE_TOO_LARGE, "", message)])


def _canonical(value: AttributeValue) -> str:
    """An attribute value's canonical string (spec.md, "Type System")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- reading ---------------------------------------------------------------------------------


@overload
def from_structured(
    body: bytes | str, *, spec: Literal["babelqueue"], settings: Settings | None = None
) -> EventVerdict[BabelEnvelope[Any]]: ...
@overload
def from_structured(
    body: bytes | str, *, spec: Literal["som"], settings: Settings | None = None
) -> EventVerdict[SomEnvelope]: ...
@overload
def from_structured(
    body: bytes | str, *, spec: Literal["auto"] = "auto", settings: Settings | None = None
) -> EventVerdict[BabelEnvelope[Any] | SomEnvelope]: ...
@overload
def from_structured(
    body: bytes | str, *, spec: str, settings: Settings | None = None
) -> EventVerdict[Any]: ...
def from_structured(
    body: bytes | str, *, spec: str = "auto", settings: Settings | None = None
) -> EventVerdict[Any]:
    """Read a structured-mode event (``application/cloudevents+json``); never raises on input.

    The envelope is the event's ``data`` (or ``data_base64``), checked as
    :func:`envelopekit.check` checks a message; the attributes are checked against the
    CloudEvents type system and then against the envelope.

    Args:
        body: the event's JSON bytes or text.
        spec: ``"babelqueue"`` or ``"som"``; ``"auto"`` takes it from ``dataschema``, else from
            the envelope's shape.
        settings: limits and modes; the environment's when not given.

    Returns:
        An :class:`EventVerdict` whose ``envelope`` is the envelope when the event is valid, and
        whose ``attributes`` are the valid attributes as received. Pointers are into the event:
        ``/id``, ``/data/meta/id``; inside ``data_base64`` they are the decoded envelope's own.

    Raises:
        TypeError: for ``settings`` that are no :class:`~envelopekit.Settings` (nor ``None``).
    """
    settings = given_settings(settings)
    raw = _body_bytes(body)
    if raw is None:  # not text at all: as an empty body, no JSON
        raw = b""
    limit = _structured_limit(settings)
    if len(raw) > limit:
        return _refused(rules.MESSAGE_TOO_LARGE, "", f"{len(raw)} bytes exceeds {limit}.")
    if exceeds_depth(raw, settings.max_depth + 1):
        return _refused(
            rules.MESSAGE_TOO_DEEP, "", f"The event nests deeper than {settings.max_depth + 1}."
        )
    try:
        document = from_json(raw, allow_inf_nan=True)
    except ValueError as exc:
        return _refused(rules.JSON_INVALID, "", f"Invalid JSON: {exc}.")
    if not isinstance(document, dict):
        return _refused(
            rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
            "",
            "A structured event is a JSON object; this has no attributes.",
        )
    found: list[Violation] = []
    members = [(name, value, pointer(name)) for name, value in document.items()]
    attributes, received = _attributes(
        [(n, v, p) for n, v, p in members if n not in ("data", "data_base64")],
        "json",
        found,
        pointer,
    )
    data: bytes | None = None
    base = ""
    if "data" in document and "data_base64" in document:
        found.append(
            violation(
                rules.CLOUDEVENTS_DATA_UNSUPPORTED,
                "",
                "data and data_base64 together: a JSON event carries one or the other",
            )
        )
    elif "data_base64" in document:
        encoded = document["data_base64"]
        try:
            data = base64.b64decode(encoded, validate=True) if isinstance(encoded, str) else None
        except binascii.Error:
            data = None
        if data is None:
            found.append(
                violation(
                    rules.CLOUDEVENTS_DATA_UNSUPPORTED,
                    "/data_base64",
                    "data_base64 is not a base64 string",
                )
            )
    elif "data" in document:
        value = document["data"]
        # The parser reads NaN, Infinity and 1e400 as floats no encoder writes back: refused
        # here as `check` refuses them in a message, before the envelope is re-encoded. A large
        # event whose numbers C passes prove plain has none: its data is not walked for them (a
        # Python step a value, 10x `orjson.loads` on 1 MiB of small integers).
        plain = len(raw) > FULL_REPORT_BYTES and plain_numbers(raw)
        refused = (
            scan_numbers(value, "/data", first_refusal=True, integers=False)[0]
            if not plain and needs_scan(value)
            else []
        )
        if refused:
            found += refused
        else:
            data, base = _json_bytes(value), "/data"
    else:
        found.append(
            violation(
                rules.CLOUDEVENTS_DATA_UNSUPPORTED,
                "/data",
                "The event has no data, so no envelope",
            )
        )
    _json_content(attributes.get("datacontenttype"), "/datacontenttype", found)
    noted: list[Violation] = []
    if settings.duplicate_keys != "allow":
        # The event is parsed once, so a member repeated in `data` is found here, not by the
        # check of the envelope (which sees it re-encoded).
        repeated = duplicate_keys(raw, settings.max_violations)
        (found if settings.duplicate_keys == "refuse" else noted).extend(repeated)
    return _verdict(attributes, received, data, base, spec, settings, found, pointer, noted)


@overload
def from_binary(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: Literal["babelqueue"],
    settings: Settings | None = None,
) -> EventVerdict[BabelEnvelope[Any]]: ...
@overload
def from_binary(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: Literal["som"],
    settings: Settings | None = None,
) -> EventVerdict[SomEnvelope]: ...
@overload
def from_binary(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: Literal["auto"] = "auto",
    settings: Settings | None = None,
) -> EventVerdict[BabelEnvelope[Any] | SomEnvelope]: ...
@overload
def from_binary(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: str,
    settings: Settings | None = None,
) -> EventVerdict[Any]: ...
def from_binary(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: str = "auto",
    settings: Settings | None = None,
) -> EventVerdict[Any]:
    """Read a binary-mode event: attributes from headers, the envelope from the body.

    Args:
        headers: HTTP headers (``ce-*``, names in any case, values percent-encoded), Kafka
            headers (``ce_*``, bytes or str) or AMQP application properties (``cloudEvents_*``
            or ``cloudEvents:*``; ``time`` may also be an AMQP timestamp: Unix ms or a
            ``datetime``); a mapping or a sequence of pairs. Other headers are ignored.
        body: the data: the envelope's JSON (text is read as its UTF-8); anything else, a
            Kafka tombstone's ``None``, is an event without data
            (``cloudevents.data_unsupported``).
        binding: ``"http"``, ``"kafka"`` or ``"amqp"``.
        content_type: the data's media type; for HTTP and Kafka the ``content-type`` header
            when not given; for AMQP the ``content-type`` message property, which is not among
            the application properties. ``application/json`` when absent.
        spec: as :func:`from_structured`.
        settings: as :func:`from_structured`.

    Returns:
        An :class:`EventVerdict`, as :func:`from_structured`. Pointers name a header (``/ce-id``) or
        point into the envelope (``/meta/id``).

    Raises:
        ValueError: for an unknown ``binding`` (a programming error, not bad input).
        TypeError: for ``settings`` that are no :class:`~envelopekit.Settings` (nor ``None``).
    """
    if binding not in ("http", "kafka", "amqp"):
        raise ValueError(f"unknown binding {binding!r}; expected 'http', 'kafka' or 'amqp'")
    settings = given_settings(settings)
    found: list[Violation] = []
    chosen: list[tuple[str, Any, str]] = []
    separators: set[str] = set()
    size = 0
    for name, value in _pairs(headers):
        attribute = _attribute_name(name, binding, separators)
        if attribute is None:
            if content_type is None and binding != "amqp" and name.lower() == _CONTENT_TYPE:
                content_type = _header_text(value, binding)
            continue
        size += _attribute_size(name, value)
        if size > _MAX_ATTRIBUTE_CHARS:
            return _refused(
                rules.MESSAGE_TOO_LARGE,
                "",
                f"The event's attributes exceed {_MAX_ATTRIBUTE_CHARS} characters.",
            )
        chosen.append((attribute, _decoded(value, binding), pointer(name)))
    if len(separators) > 1:
        found.append(
            violation(
                rules.CLOUDEVENTS_ATTRIBUTE_NAME,
                "",
                "The message mixes cloudEvents_ and cloudEvents: properties; one message uses "
                "one separator for all its attributes",
            )
        )
    prefix = _PREFIX.get(binding) or ("cloudEvents:" if separators == {":"} else "cloudEvents_")
    for attribute, _value, at in chosen:
        if attribute == "datacontenttype":
            found.append(
                violation(
                    rules.CLOUDEVENTS_ATTRIBUTE_NAME,
                    at,
                    "In binary mode datacontenttype travels as the content type, never as "
                    f"{prefix}datacontenttype",
                )
            )
    attributes, received = _attributes(
        [item for item in chosen if item[0] != "datacontenttype"],
        binding,
        found,
        lambda name: pointer(prefix + name),
    )
    if content_type is not None and content_type is not _UNREADABLE:
        attributes["datacontenttype"] = received["datacontenttype"] = content_type
    _json_content(content_type, pointer(_CONTENT_TYPE), found)
    data = _body_bytes(body)
    if data is None:
        found.append(
            violation(
                rules.CLOUDEVENTS_DATA_UNSUPPORTED,
                "",
                f"The body is {_shown(body)}, not bytes: the event has no data, so no envelope",
            )
        )
    return _verdict(
        attributes,
        received,
        data,
        "",
        spec,
        settings,
        found,
        lambda n: pointer(prefix + n),
    )


@overload
def from_message(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: Literal["babelqueue"],
    settings: Settings | None = None,
) -> EventVerdict[BabelEnvelope[Any]]: ...
@overload
def from_message(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: Literal["som"],
    settings: Settings | None = None,
) -> EventVerdict[SomEnvelope]: ...
@overload
def from_message(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: Literal["auto"] = "auto",
    settings: Settings | None = None,
) -> EventVerdict[BabelEnvelope[Any] | SomEnvelope]: ...
@overload
def from_message(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: str,
    settings: Settings | None = None,
) -> EventVerdict[Any]: ...
def from_message(
    headers: Headers,
    body: bytes | str,
    *,
    binding: Binding = "http",
    content_type: str | None = None,
    spec: str = "auto",
    settings: Settings | None = None,
) -> EventVerdict[Any]:
    """Read an event in either mode, told apart as the bindings say: by the content type.

    A content type starting ``application/cloudevents`` is structured mode (read by
    :func:`from_structured`), anything else binary mode (:func:`from_binary`). Arguments as
    :func:`from_binary`.
    """
    found = content_type
    if found is None and binding != "amqp":
        for name, value in _pairs(headers):
            if name.lower() == _CONTENT_TYPE:
                text = _header_text(value, binding)
                found = text if text is not _UNREADABLE else None
                break
    if isinstance(found, str) and found.strip().lower().startswith("application/cloudevents"):
        return from_structured(body, spec=spec, settings=settings)
    return from_binary(
        headers, body, binding=binding, content_type=content_type, spec=spec, settings=settings
    )


# --- internals -------------------------------------------------------------------------------


def _attribute_size(name: str, value: Any) -> int:
    """What one attribute header counts toward ``_MAX_ATTRIBUTE_CHARS``, as read and as written."""
    return len(name) + (len(value) if isinstance(value, (str, bytes)) else 32)


def _structured_limit(settings: Settings) -> int:
    """The most bytes a structured event may have to be read (its envelope may be the largest)."""
    return 2 * settings.max_message_bytes + _ATTRIBUTE_ROOM


# Stands for a header value the binding's codec could not decode.
_UNREADABLE: Final = "\x00unreadable"


def _spec_of(envelope: Any) -> None:
    if not isinstance(envelope, (BabelEnvelope, SomEnvelope)):
        raise TypeError(f"expected a BabelEnvelope or a SomEnvelope, not {type(envelope).__name__}")


def _pairs(headers: object) -> Iterator[tuple[str, Any]]:
    """The ``(name, value)`` pairs of ``headers`` whose name is a string; nothing else.

    A transport may hand over ``None`` (confluent-kafka, for a message without headers) or a
    list holding what is no pair; neither carries an attribute.
    """
    if isinstance(headers, Mapping):
        items: Iterable[Any] = cast("Mapping[object, Any]", headers).items()
    elif isinstance(headers, Iterable) and not isinstance(headers, (str, bytes)):
        items = headers
    else:
        return
    for item in items:
        if isinstance(item, (tuple, list)) and len(cast("Sequence[Any]", item)) == 2:
            name, value = cast("Sequence[Any]", item)
            if isinstance(name, str):
                yield name, value


def _body_bytes(body: object) -> bytes | None:
    """The body as bytes (text as its UTF-8), or ``None`` for what is neither (a tombstone)."""
    if isinstance(body, str):
        return body.encode("utf-8", "surrogatepass")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    return None


def _attribute_name(name: str, binding: Binding, separators: set[str]) -> str | None:
    if binding == "amqp":
        for prefix in _AMQP_PREFIXES:
            if name.startswith(prefix):
                separators.add(prefix[-1])
                return name[len(prefix) :]
        return None
    lowered = name.lower()
    prefix = _PREFIX[binding]
    return lowered[len(prefix) :] if lowered.startswith(prefix) else None


def _header_text(value: Any, binding: Binding) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8" if binding == "kafka" else "ascii")
        except UnicodeDecodeError:
            return _UNREADABLE
    return value if isinstance(value, str) else _UNREADABLE


def _decoded(value: Any, binding: Binding) -> Any:
    """A header value as its attribute value (``_UNREADABLE`` when the codec refuses it)."""
    if binding == "amqp":
        return value  # native AMQP values; typed per attribute below
    text = _header_text(value, binding)
    if binding == "kafka" or text is _UNREADABLE:
        return text
    decoded = http_decode(text)
    return _UNREADABLE if decoded is None else decoded


def _attributes(
    items: list[tuple[str, Any, str]],
    form: Literal["json", "http", "kafka", "amqp"],
    found: list[Violation],
    missing_at: Callable[[str], str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The valid attributes by name, as compared and as received.

    As compared, ``time`` is an instant and ``traceparent`` parsed. Each invalid one is
    reported in ``found`` and left out of both.
    """
    out: dict[str, Any] = {}
    received: dict[str, Any] = {}
    seen: set[str] = set()
    for name, value, at in items:
        if value is None and form in ("json", "amqp"):
            continue  # the JSON format: a null attribute is unset
        if not is_attribute_name(name) or name == "data":
            why = (
                "data is not an extension attribute name"
                if name == "data"
                else "attribute names are lowercase letters a-z and digits 0-9"
            )
            found.append(violation(rules.CLOUDEVENTS_ATTRIBUTE_NAME, at, f"{name!r}: {why}"))
            continue
        if name in seen:
            found.append(violation(rules.CLOUDEVENTS_ATTRIBUTE_NAME, at, f"{name} is given twice"))
            continue
        seen.add(name)
        parsed = _value(name, value, form)
        if isinstance(parsed, _Invalid):
            rule = (
                rules.CLOUDEVENTS_SPECVERSION_UNSUPPORTED
                if name == "specversion" and isinstance(value, str)
                else rules.CLOUDEVENTS_ATTRIBUTE_INVALID
            )
            found.append(violation(rule, at, f"{name}: {parsed.why}"))
            continue
        out[name] = parsed
        received[name] = value
    found.extend(
        violation(
            rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
            missing_at(name),
            f"The event has no {name}, a required CloudEvents attribute",
        )
        for name in _REQUIRED
        if name not in seen
    )
    return out, received


@dataclass(frozen=True, slots=True)
class _Invalid:
    why: str


def _value(name: str, value: Any, form: str) -> Any:
    if value is _UNREADABLE:
        return _Invalid("the header value is not percent-encoded UTF-8 text")
    if name == "time" and form == "amqp" and not isinstance(value, (str, bool)):
        if isinstance(value, int):
            return millis_instant(value)  # an AMQP timestamp: Unix milliseconds
        if isinstance(value, datetime) and value.tzinfo is not None:
            return datetime_instant(value)
        return _Invalid(f"an AMQP time is a timestamp or an RFC 3339 string, not {value!r}")
    if not isinstance(value, str):
        extension = name not in _CONTEXT and form in ("json", "amqp")
        if extension and (isinstance(value, bool) or (isinstance(value, int) and is_int32(value))):
            return value  # an extension's Boolean or Integer
        return _Invalid(f"must be a string, not {_shown(value)}")
    why = bad_string(value)
    if why is not None:
        return _Invalid(f"the value {why}")
    if name in _NON_EMPTY and not value:
        return _Invalid("must not be empty")
    if name == "specversion":
        return value if value == SPECVERSION else _Invalid(f"{value!r} is not 1.0")
    if name == "source" and not is_uri_reference(value):
        return _Invalid(f"{value!r} is not an RFC 3986 URI-reference")
    if name == "dataschema" and not is_uri(value):
        return _Invalid(f"{value!r} is not an absolute RFC 3986 URI")
    if name == "time":
        instant = instant_of(value)
        return _Invalid(f"{value!r} is not an RFC 3339 date-time") if instant is None else instant
    if name == "traceparent":
        parent = TraceParent.parse(value)
        if parent is None or parent.header() != value:
            return _Invalid(f"{value!r} is not a version-00 W3C traceparent")
        return parent
    return value


def _shown(value: Any) -> str:
    if isinstance(value, (int, float, bool)) or value is None:
        return json.dumps(value)
    return f"a {type(value).__name__}"


def _json_content(content_type: Any, at: str, found: list[Violation]) -> None:
    if content_type is None or not isinstance(content_type, str):
        return  # absent: JSON, as the JSON format says to proceed
    if content_type is _UNREADABLE:
        found.append(
            violation(rules.CLOUDEVENTS_ATTRIBUTE_INVALID, at, "The content type is not text")
        )
        return
    media = content_type.partition(";")[0].strip().lower()
    kind, _, subtype = media.partition("/")
    if not kind or not (subtype == "json" or subtype.endswith("+json")):
        found.append(
            violation(
                rules.CLOUDEVENTS_DATA_UNSUPPORTED,
                at,
                f"The data is {content_type!r}, not JSON: it cannot be an envelope",
            )
        )


def _json_bytes(value: Any) -> bytes:
    try:
        return dumps(value)
    except (TypeError, UnicodeEncodeError):
        # A string with a lone surrogate (a JSON escape allows one): ASCII escapes keep it for
        # `check`, which refuses it as any reader would.
        return json.dumps(value).encode("ascii")


def _verdict(
    attributes: dict[str, Any],
    received: dict[str, Any],
    data: bytes | None,
    base: str,
    spec: str,
    settings: Settings,
    found: list[Violation],
    at: Callable[[str], str],
    noted: list[Violation] | None = None,
) -> EventVerdict[Any]:
    if spec not in ("auto", "babelqueue", "som"):
        raise ValueError(f"unknown spec {spec!r}; expected 'auto', 'babelqueue' or 'som'")
    named = SPEC_BY_DATASCHEMA.get(attributes.get("dataschema", ""))
    target = spec if spec != "auto" else (named or "auto")
    warnings: list[Violation] = list(noted or ())
    envelope: Any = None
    name: str = target
    if data is not None:
        checked = check(data, target, settings=settings)
        name = checked.spec
        if base:
            found += [replace(v, pointer=base + v.pointer) for v in checked.violations]
            warnings += [replace(v, pointer=base + v.pointer) for v in checked.warnings]
        else:
            found += checked.violations
            warnings += checked.warnings
        envelope = checked.envelope
        if envelope is not None and not isinstance(envelope, (BabelEnvelope, SomEnvelope)):
            found.append(
                violation(
                    rules.CLOUDEVENTS_DATA_UNSUPPORTED,
                    base,
                    f"The data is a {checked.spec} message, which has no CloudEvents mapping",
                )
            )
            envelope = None
        if envelope is not None:
            found += agreement(envelope, attributes, at)
    return EventVerdict(name, None if found else envelope, found, warnings, received)


def _refused(rule: str, at: str, message: str) -> EventVerdict[Any]:
    return EventVerdict("auto", None, [violation(rule, at, message)])
