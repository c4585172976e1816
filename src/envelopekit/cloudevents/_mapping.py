"""The mapping table: which envelope field each CloudEvents attribute comes from, both ways.

The envelope itself travels whole as the event's ``data`` (JSON), so the round trip is lossless
by construction; the attributes are derived from it on the way out and checked against it on
the way back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import quote

from .. import rules
from .._compat import MISSING
from .._errors import ProducerError
from .._violations import Violation, pointer, violation
from ..babelqueue._envelope import BabelEnvelope
from ..babelqueue._traceparent import TraceParent, parent_of, trace_id_of
from ..som._envelope import SomEnvelope
from ._types import (
    MAX_MILLIS,
    MAX_NAME_LENGTH,
    Millis,
    bad_string,
    format_millis,
    instant_of,
    is_attribute_name,
    is_int32,
    is_uri_reference,
    to_millis,
)

__all__ = [
    "BABELQUEUE_DATASCHEMA",
    "DATACONTENTTYPE",
    "RESERVED",
    "SOM_DATASCHEMA",
    "AttributeValue",
    "Derived",
    "Envelope",
    "EventSpec",
    "derived",
    "spec_of",
    "write_attributes",
]

AttributeValue = str | int | bool
"""An attribute value as written: a canonical string, or an extension's Boolean or Integer."""
Envelope = BabelEnvelope[Any] | SomEnvelope
"""What maps to a CloudEvent: a BabelQueue or a SOM envelope."""
EventSpec = Literal["babelqueue", "som"]

DATACONTENTTYPE: Final = "application/json"
"""The media type of every event's data: the envelope as JSON."""
BABELQUEUE_DATASCHEMA: Final = "https://babelqueue.com/contracts/message-envelope.schema.json"
"""``dataschema`` of a BabelQueue event: the ``$id`` of the official envelope schema."""
SOM_DATASCHEMA: Final = "https://storyobjectmodel.com/schema/1.0/envelope.schema.json"
"""``dataschema`` of a SOM event: the ``$id`` of the official SOM 1.0 envelope schema."""
RESERVED: Final = frozenset(
    {
        "specversion",
        "id",
        "source",
        "type",
        "datacontenttype",
        "dataschema",
        "subject",
        "time",
        "traceparent",
        "tracestate",
        "correlationid",
        "causationid",
        "data",
    }
)
"""Names an ``extensions`` argument may not use: the attributes the mapping writes, and
``data``."""
SPEC_BY_DATASCHEMA: Final[dict[str, EventSpec]] = {
    BABELQUEUE_DATASCHEMA: "babelqueue",
    SOM_DATASCHEMA: "som",
}


@dataclass(frozen=True, slots=True)
class Derived:
    """One attribute the envelope determines: its value and the envelope field it comes from."""

    name: str
    value: str
    field: str
    """JSON pointer of the field in the envelope (``""`` for the envelope as a whole)."""


def spec_of(envelope: Envelope) -> EventSpec:
    """The spec of an envelope model.

    Raises:
        TypeError: for anything but a ``BabelEnvelope`` or a ``SomEnvelope``.
    """
    if isinstance(envelope, BabelEnvelope):
        return "babelqueue"
    if isinstance(envelope, SomEnvelope):
        return "som"
    raise TypeError(f"expected a BabelEnvelope or a SomEnvelope, not {type(envelope).__name__}")


def derived(envelope: Envelope) -> list[Derived]:
    """The attributes the envelope determines, in the order they are written.

    ``source``, ``traceparent`` and ``tracestate`` are not among them: ``source`` names the
    producer's context, which the caller may choose, and a trace context is the caller's span.
    The BabelQueue ``time`` is left out when ``created_at`` is past what RFC 3339 can write
    (the writer refuses such an envelope; the reader finds it cannot match any ``time``).
    """
    if isinstance(envelope, BabelEnvelope):
        meta = envelope.meta
        found = [
            Derived("id", meta.id, "/meta/id"),
            Derived("type", envelope.job, "/job"),
            Derived("datacontenttype", DATACONTENTTYPE, ""),
            Derived("dataschema", BABELQUEUE_DATASCHEMA, ""),
            Derived("subject", meta.queue, "/meta/queue"),
        ]
        if 0 <= meta.created_at <= MAX_MILLIS:
            found.append(Derived("time", format_millis(meta.created_at), "/meta/created_at"))
        found.append(Derived("correlationid", envelope.trace_id, "/trace_id"))
        return found
    found = [
        Derived("id", envelope.message_id, "/message_id"),
        Derived("type", envelope.message_type, "/message_type"),
        Derived("datacontenttype", DATACONTENTTYPE, ""),
        Derived("dataschema", SOM_DATASCHEMA, ""),
        Derived("subject", envelope.topic, "/topic"),
        Derived("time", envelope.timestamp, "/timestamp"),
        Derived("correlationid", envelope.correlation_id, "/correlation_id"),
    ]
    if envelope.causation_id is not MISSING:
        found.append(Derived("causationid", envelope.causation_id, "/causation_id"))
    return found


def default_source(envelope: Envelope) -> str:
    """The ``source`` written when the caller names none.

    BabelQueue carries no producer identity beyond a language tag, so its events share
    ``/babelqueue`` (``meta.id`` keeps ``source`` + ``id`` unique); a SOM event names its
    ``originating_system``: ``/som/<system_type>/<system_id>``, each segment percent-encoded.
    """
    if isinstance(envelope, BabelEnvelope):
        return "/babelqueue"
    system = envelope.originating_system
    return f"/som/{quote(system.system_type, safe='')}/{quote(system.system_id, safe='')}"


def write_attributes(
    envelope: Envelope,
    *,
    source: str | None,
    traceparent: str | TraceParent | None,
    tracestate: str | None,
    extensions: Mapping[str, AttributeValue] | None = None,
) -> dict[str, AttributeValue]:
    """The event's attributes, ``specversion`` first, then the caller's ``extensions``.

    Every value is a canonical string but for an extension's Boolean or Integer.

    Raises:
        ProducerError: ``cloudevents.unrepresentable`` for an envelope field its attribute
            cannot carry; ``cloudevents.attribute_invalid`` for a ``source``, ``traceparent``
            or ``tracestate`` argument that is not of its CloudEvents type;
            ``cloudevents.attribute_mismatch`` for a BabelQueue ``traceparent`` of another
            trace than the envelope's ``trace_id``; ``cloudevents.attribute_name`` or
            ``cloudevents.attribute_invalid`` for an extension the spec does not allow.
    """
    found: list[Violation] = []
    out: dict[str, AttributeValue] = {"specversion": "1.0"}
    if isinstance(envelope, BabelEnvelope) and not 0 <= envelope.meta.created_at <= MAX_MILLIS:
        found.append(
            violation(
                rules.CLOUDEVENTS_UNREPRESENTABLE,
                "/meta/created_at",
                f"created_at {envelope.meta.created_at} is past 9999-12-31T23:59:59.999Z, "
                "the last instant an RFC 3339 time can write",
            )
        )
    attributes = derived(envelope)
    for item in attributes:
        why = bad_string(item.value)
        if why is not None or not item.value:
            found.append(
                violation(
                    rules.CLOUDEVENTS_UNREPRESENTABLE,
                    item.field,
                    f"{item.name} cannot be {item.value!r}: it {why or 'is empty'}",
                )
            )
    chosen = source if source is not None else default_source(envelope)
    if not isinstance(chosen, str) or not is_uri_reference(chosen):
        found.append(
            violation(
                rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
                "/source",
                f"source must be a non-empty RFC 3986 URI-reference, not {chosen!r}",
            )
        )
    parent = _traceparent(envelope, traceparent, found)
    if tracestate is not None:
        if not isinstance(tracestate, str) or not tracestate or bad_string(tracestate):
            found.append(
                violation(
                    rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
                    "/tracestate",
                    f"tracestate must be a non-empty String, not {tracestate!r}",
                )
            )
        elif parent is None:
            found.append(
                violation(
                    rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
                    "/tracestate",
                    "tracestate goes with a traceparent, and there is none",
                )
            )
    chosen_extensions = _extensions(extensions or {}, found)
    if found:
        raise ProducerError.of(found)
    by_name = {item.name: item.value for item in attributes}
    out["id"] = by_name["id"]
    out["source"] = chosen
    out["type"] = by_name["type"]
    for name in ("datacontenttype", "dataschema", "subject", "time"):
        out[name] = by_name[name]
    if parent is not None:
        out["traceparent"] = parent
    if tracestate is not None:
        out["tracestate"] = tracestate
    for name in ("correlationid", "causationid"):
        if name in by_name:
            out[name] = by_name[name]
    out.update(chosen_extensions)
    return out


def _extensions(given: object, found: list[Violation]) -> dict[str, AttributeValue]:
    """The caller's extension attributes, each checked as the spec names and types them."""
    # Typed as a mapping for type-checked callers; checked at run time for the others.
    if not isinstance(given, Mapping):
        found.append(
            violation(rules.CLOUDEVENTS_ATTRIBUTE_INVALID, "", "extensions must be a mapping")
        )
        return {}
    out: dict[str, AttributeValue] = {}
    items: Any = given.items()
    for name, value in items:
        at = pointer(name) if isinstance(name, str) else ""
        if not isinstance(name, str) or not is_attribute_name(name):
            why = "lowercase letters a-z and digits 0-9 only"
        elif len(name) > MAX_NAME_LENGTH:
            why = f"at most {MAX_NAME_LENGTH} characters"
        elif name in RESERVED:
            why = "an attribute this mapping writes itself" if name != "data" else "reserved"
        else:
            why = None
        if why is not None:
            found.append(
                violation(rules.CLOUDEVENTS_ATTRIBUTE_NAME, at, f"extension {name!r}: {why}")
            )
            continue
        # A subclass (an enum member of a string or an integer) is written as its value, in
        # every mode alike: its `str()` could be another text (`Region.EU`).
        if isinstance(value, bool):
            out[name] = value
        elif isinstance(value, int) and is_int32(value):
            out[name] = int.__index__(value)
        elif isinstance(value, str) and bad_string(value) is None:
            out[name] = str.__str__(value)
        else:
            found.append(
                violation(
                    rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
                    at,
                    f"extension {name}: a String, a Boolean or a 32-bit Integer, not {value!r}",
                )
            )
    return out


def _traceparent(
    envelope: Envelope, given: str | TraceParent | None, found: list[Violation]
) -> str | None:
    if given is None:
        # BabelQueue's trace is its trace_id: the parent every SDK derives from it (ADR-0025).
        return parent_of(envelope).header() if isinstance(envelope, BabelEnvelope) else None
    parent = given if isinstance(given, TraceParent) else TraceParent.parse(given)
    if parent is None or (isinstance(given, str) and parent.header() != given):
        found.append(
            violation(
                rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
                "/traceparent",
                f"traceparent must be a version-00 W3C Trace Context header, not {given!r}",
            )
        )
        return None
    if isinstance(envelope, BabelEnvelope) and parent.trace_id != trace_id_of(envelope.trace_id):
        found.append(
            violation(
                rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
                "/traceparent",
                f"traceparent {parent.header()} is of trace {parent.trace_id}, but the "
                f"envelope's trace_id {envelope.trace_id!r} is trace "
                f"{trace_id_of(envelope.trace_id)}",
            )
        )
        return None
    return parent.header()


def agreement(envelope: Envelope, attributes: Mapping[str, Any], pointer: Any) -> list[Violation]:
    """Where the read attributes disagree with the envelope their event carries.

    ``attributes`` holds canonical strings, except ``time``, an :data:`~._types.Instant`.
    Absent optional attributes agree (another producer may leave them out); ``source`` is the
    producer's context and is not compared.
    """
    found: list[Violation] = []
    for item in derived(envelope):
        if item.name not in attributes or item.name == "datacontenttype":
            continue
        value = attributes[item.name]
        if item.name == "time":
            written = instant_of(item.value)
            # An AMQP timestamp carries milliseconds: it agrees with the instant so truncated.
            agrees = (
                isinstance(value, Millis) and written is not None and value == to_millis(written)
            ) or value == written
        else:
            agrees = value == item.value
        if not agrees:
            shown = item.value if item.name != "time" else f"{item.value} (as an instant)"
            found.append(
                violation(
                    rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
                    pointer(item.name),
                    f"{item.name} disagrees with the envelope's {item.field or 'spec'}: "
                    f"the envelope gives {shown!r}",
                )
            )
    if isinstance(envelope, BabelEnvelope) and time_missing(envelope, attributes):
        found.append(
            violation(
                rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
                pointer("time"),
                "time names an instant, but the envelope's created_at is past what RFC 3339 "
                "can write",
            )
        )
    parent = attributes.get("traceparent")
    if isinstance(envelope, BabelEnvelope) and isinstance(parent, TraceParent):
        expected = trace_id_of(envelope.trace_id)
        if parent.trace_id != expected:
            found.append(
                violation(
                    rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
                    pointer("traceparent"),
                    f"traceparent is of trace {parent.trace_id}, but the envelope's trace_id "
                    f"is trace {expected}",
                )
            )
    return found


def time_missing(envelope: BabelEnvelope[Any], attributes: Mapping[str, Any]) -> bool:
    """Whether a ``time`` was read for an envelope whose ``created_at`` RFC 3339 cannot write."""
    return "time" in attributes and not 0 <= envelope.meta.created_at <= MAX_MILLIS
