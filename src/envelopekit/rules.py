"""The rule-id catalogue: every id a :class:`~envelopekit.Violation` can carry.

One taxonomy serves the three specs, modelled on the SOM Managed Bus:

* **Structural ids** are ``<schema>.<keyword>``: ``<schema>`` names the spec's schema file
  (:data:`SCHEMAS`) and ``<keyword>`` the JSON Schema keyword that fails (:data:`KEYWORDS`),
  for example ``envelope.format.uuid`` or ``message-envelope.required``. They are built only
  by :func:`structural`, which refuses a schema or keyword not listed here.
* **Named ids** cover what no schema keyword says (:data:`NAMED`): each constant below is one,
  with the ``source`` a violation of it reports and a one-line meaning.

envelopekit's own validators state the rule they refuse where they raise it: a :data:`Keyword`
(the schema name is added from the model that failed) or a :data:`NamedId`, both ``Literal``
types that mypy and basedpyright check at every raise site, so a misspelled rule is a type
error; nothing else reaches a :class:`~envelopekit.Violation`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Final, Literal

from . import _exports

__all__ = [
    "ASSET_TYPE_CHANGED",
    "ATTEMPTS_AT_MAXIMUM",
    "BABELQUEUE_SCHEMAS",
    "CLOUDEVENTS_ATTRIBUTE_INVALID",
    "CLOUDEVENTS_ATTRIBUTE_MISMATCH",
    "CLOUDEVENTS_ATTRIBUTE_MISSING",
    "CLOUDEVENTS_ATTRIBUTE_NAME",
    "CLOUDEVENTS_DATA_UNSUPPORTED",
    "CLOUDEVENTS_SPECVERSION_UNSUPPORTED",
    "CLOUDEVENTS_UNREPRESENTABLE",
    "COMPAT_ADDITIONAL_PROPERTIES_TIGHTENED",
    "COMPAT_ENUM_ADDED",
    "COMPAT_ENUM_VALUE_REMOVED",
    "COMPAT_MINIMUM_TIGHTENED",
    "COMPAT_MIN_LENGTH_TIGHTENED",
    "COMPAT_PROPERTY_REMOVED",
    "COMPAT_REQUIRED_ADDED",
    "COMPAT_TYPE_CHANGED",
    "CREATED_AT_SECONDS",
    "DATA_DECRYPT_FAILED",
    "DATA_INVALID",
    "ENVELOPE_REFUSED",
    "ERROR_CODE_INCONSISTENT",
    "FALLBACK_KEYWORD",
    "FORBIDDEN_KEY",
    "HANDLER_FAILED",
    "IDEMPOTENCY_HELD",
    "IFACE_CONVENTION",
    "JSON_DUPLICATE_KEY",
    "JSON_INVALID",
    "KEYWORDS",
    "MATRIX_SCHEMAS",
    "MESSAGE_TOO_DEEP",
    "MESSAGE_TOO_LARGE",
    "MESSAGE_TYPE_UNKNOWN",
    "NAMED",
    "NUMBER_BEYOND_INT64",
    "NUMBER_NON_FINITE",
    "NUMBER_OUT_OF_RANGE",
    "NUMBER_UNSAFE_INTEGER",
    "OP_CONVENTION",
    "PAYLOAD_FAMILY_UNEXPECTED",
    "PAYLOAD_MESSAGE_TYPE_MISMATCH",
    "PAYLOAD_SCHEMA_FAILED",
    "PAYLOAD_UNVALIDATED",
    "REPLY_TO_CONVENTION",
    "REPLY_UNPAIRED",
    "SCHEMAS",
    "SCHEMA_VERSION_UNSUPPORTED",
    "SEQUENCE_NUMBER_GAP",
    "SEQUENCE_NUMBER_NOT_INCREASING",
    "SNAPSHOT_ASSETS_DROPPED",
    "SNAPSHOT_MEMBERS_MISSING",
    "SOM_SCHEMAS",
    "SOM_VERSION_PRE_1_0",
    "SOM_VERSION_UNSUPPORTED_MAJOR",
    "SOM_VERSION_UNSUPPORTED_MINOR",
    "SPEC_UNRECOGNISED",
    "STORY_ID_CHANGED",
    "STORY_TYPE_LEFT_TERMINAL",
    "SUBSCRIBER_UNEXPECTED",
    "TRACE_CONTEXT_FORMAT",
    "TRANSPORT_SCHEMA_VERSION_UNSUPPORTED",
    "UPDATED_AT_BACKWARDS",
    "URN_CONVENTION",
    "URN_MISSING",
    "URN_UNKNOWN",
    "VIOLATIONS_TRUNCATED",
    "Keyword",
    "NamedId",
    "RaisedRule",
    "Rule",
    "Source",
    "is_rule",
    "source_of",
    "structural",
]
__dir__ = _exports.listing(__name__, __all__)

Source = Literal["json", "schema", "conformance", "policy", "sequence"]
"""Where a rule comes from: the JSON text, a schema keyword, a spec's conformance text,
a bus or SDK policy, or a rule across a sequence of messages."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A named rule: its stable id, where it comes from and what it means."""

    id: NamedId
    source: Source
    summary: str


# --- Schema names ----------------------------------------------------------------------------

SOM_SCHEMAS: Final = (
    "envelope",
    "story-context",
    "telling-event",
    "link-event",
    "delivery-media-available",
    "system-audit",
    "skill-warning",
)
# "payload-schema": a per-URN JSON Schema for BabelQueue `data` (ADR-0024), registered by the
# user; its violations point into the message, e.g. `/data/order_id`.
BABELQUEUE_SCHEMAS: Final = ("message-envelope", "payload-schema")
MATRIX_SCHEMAS: Final = ("request", "response", "error-payload")

SCHEMAS: Final[frozenset[str]] = frozenset(SOM_SCHEMAS + BABELQUEUE_SCHEMAS + MATRIX_SCHEMAS)
"""Every schema name a structural id may start with."""

# --- JSON Schema keywords --------------------------------------------------------------------

Keyword = Literal[
    "required",
    "additionalProperties",
    "false_schema",
    "type",
    "enum",
    "const",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "propertyNames",
    "format.uuid",
    "format.date-time",
    "format.uri",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "dependentRequired",
]
"""A JSON Schema keyword a validator may raise (the ``<keyword>`` of a structural id)."""

FALLBACK_KEYWORD: Final = "invalid"
"""The keyword of an error no keyword names: a user's payload schema failing a keyword this
catalogue does not list (``payload-schema.invalid``). No envelopekit model ever yields it: an
error of theirs that maps to no catalogued rule is a bug, and ``tests/test_rule_identity.py``
drives the corpora and mutation sets to prove none does."""

KEYWORDS: Final[frozenset[str]] = frozenset((*typing.get_args(Keyword), FALLBACK_KEYWORD))
"""Every keyword a structural id may end with."""


def structural(schema: str, keyword: str) -> str:
    """Build the structural rule id ``<schema>.<keyword>``.

    Raises:
        ValueError: when ``schema`` or ``keyword`` is not in the catalogue.
    """
    if schema not in SCHEMAS:
        raise ValueError(f"unknown schema name {schema!r}")
    if keyword not in KEYWORDS:
        raise ValueError(f"unknown JSON Schema keyword {keyword!r}")
    return f"{schema}.{keyword}"


# --- Named rules -----------------------------------------------------------------------------

# The JSON text itself.
JSON_INVALID: Final = "json.invalid"
JSON_DUPLICATE_KEY: Final = "json.duplicate_key"
MESSAGE_TOO_LARGE: Final = "message.too_large"
MESSAGE_TOO_DEEP: Final = "message.too_deep"
NUMBER_NON_FINITE: Final = "number.non_finite"
NUMBER_OUT_OF_RANGE: Final = "number.out_of_range"
NUMBER_UNSAFE_INTEGER: Final = "number.unsafe_integer"
NUMBER_BEYOND_INT64: Final = "number.beyond_int64"
SPEC_UNRECOGNISED: Final = "spec.unrecognised"
VIOLATIONS_TRUNCATED: Final = "violations.truncated"

# BabelQueue v1.
URN_MISSING: Final = "urn.missing"
URN_CONVENTION: Final = "urn.convention"
SCHEMA_VERSION_UNSUPPORTED: Final = "schema_version.unsupported"
FORBIDDEN_KEY: Final = "forbidden_key"
CREATED_AT_SECONDS: Final = "created_at.seconds"

# BabelQueue consumer toolkit (routing, payload schemas, broker bindings).
URN_UNKNOWN: Final = "urn.unknown"
HANDLER_FAILED: Final = "handler.failed"
ATTEMPTS_AT_MAXIMUM: Final = "attempts.at_maximum"
DATA_INVALID: Final = "data.invalid"
ENVELOPE_REFUSED: Final = "envelope.refused"
PAYLOAD_SCHEMA_FAILED: Final = "payload_schema.failed"
IDEMPOTENCY_HELD: Final = "idempotency.held"
SUBSCRIBER_UNEXPECTED: Final = "subscriber.unexpected"
TRANSPORT_SCHEMA_VERSION_UNSUPPORTED: Final = "transport.schema_version_unsupported"
DATA_DECRYPT_FAILED: Final = "data.decrypt_failed"

# BabelQueue payload-schema evolution: the registry's `compat` rules (a change that can reject
# data the old schema accepted, so the URN must be versioned instead).
COMPAT_TYPE_CHANGED: Final = "compat.type_changed"
COMPAT_ENUM_ADDED: Final = "compat.enum_added"
COMPAT_ENUM_VALUE_REMOVED: Final = "compat.enum_value_removed"
COMPAT_MIN_LENGTH_TIGHTENED: Final = "compat.min_length_tightened"
COMPAT_MINIMUM_TIGHTENED: Final = "compat.minimum_tightened"
COMPAT_REQUIRED_ADDED: Final = "compat.required_added"
COMPAT_ADDITIONAL_PROPERTIES_TIGHTENED: Final = "compat.additional_properties_tightened"
COMPAT_PROPERTY_REMOVED: Final = "compat.property_removed"

# SOM 1.0.
SOM_VERSION_PRE_1_0: Final = "som_version.pre_1_0"
SOM_VERSION_UNSUPPORTED_MAJOR: Final = "som_version.unsupported_major"
SOM_VERSION_UNSUPPORTED_MINOR: Final = "som_version.unsupported_minor"
PAYLOAD_MESSAGE_TYPE_MISMATCH: Final = "payload.message_type_mismatch"
PAYLOAD_UNVALIDATED: Final = "payload.unvalidated"
PAYLOAD_FAMILY_UNEXPECTED: Final = "payload.family_unexpected"
MESSAGE_TYPE_UNKNOWN: Final = "message_type.unknown"

# SOM story sequences (som.md section 10).
STORY_ID_CHANGED: Final = "story_id.changed"
SEQUENCE_NUMBER_NOT_INCREASING: Final = "sequence_number.not_increasing"
SEQUENCE_NUMBER_GAP: Final = "sequence_number.gap"
UPDATED_AT_BACKWARDS: Final = "updated_at.backwards"
SNAPSHOT_MEMBERS_MISSING: Final = "snapshot.members_missing"
SNAPSHOT_ASSETS_DROPPED: Final = "snapshot.assets_dropped"
ASSET_TYPE_CHANGED: Final = "asset.type_changed"
STORY_TYPE_LEFT_TERMINAL: Final = "story_type.left_terminal"

# Matrix MxEnvelope.
OP_CONVENTION: Final = "op.convention"
IFACE_CONVENTION: Final = "iface.convention"
REPLY_UNPAIRED: Final = "reply.unpaired"
REPLY_TO_CONVENTION: Final = "reply_to.convention"
TRACE_CONTEXT_FORMAT: Final = "trace_context.format"
ERROR_CODE_INCONSISTENT: Final = "error_code.inconsistent"

# CloudEvents 1.0 (envelopekit.cloudevents): an event carrying a BabelQueue or SOM envelope.
CLOUDEVENTS_ATTRIBUTE_MISSING: Final = "cloudevents.attribute_missing"
CLOUDEVENTS_ATTRIBUTE_INVALID: Final = "cloudevents.attribute_invalid"
CLOUDEVENTS_ATTRIBUTE_NAME: Final = "cloudevents.attribute_name"
CLOUDEVENTS_SPECVERSION_UNSUPPORTED: Final = "cloudevents.specversion_unsupported"
CLOUDEVENTS_ATTRIBUTE_MISMATCH: Final = "cloudevents.attribute_mismatch"
CLOUDEVENTS_DATA_UNSUPPORTED: Final = "cloudevents.data_unsupported"
CLOUDEVENTS_UNREPRESENTABLE: Final = "cloudevents.unrepresentable"

NamedId = Literal[
    "json.invalid",
    "json.duplicate_key",
    "message.too_large",
    "message.too_deep",
    "number.non_finite",
    "number.out_of_range",
    "number.unsafe_integer",
    "number.beyond_int64",
    "spec.unrecognised",
    "violations.truncated",
    "urn.missing",
    "urn.convention",
    "schema_version.unsupported",
    "forbidden_key",
    "created_at.seconds",
    "urn.unknown",
    "handler.failed",
    "attempts.at_maximum",
    "data.invalid",
    "envelope.refused",
    "payload_schema.failed",
    "idempotency.held",
    "subscriber.unexpected",
    "transport.schema_version_unsupported",
    "data.decrypt_failed",
    "compat.type_changed",
    "compat.enum_added",
    "compat.enum_value_removed",
    "compat.min_length_tightened",
    "compat.minimum_tightened",
    "compat.required_added",
    "compat.additional_properties_tightened",
    "compat.property_removed",
    "som_version.pre_1_0",
    "som_version.unsupported_major",
    "som_version.unsupported_minor",
    "payload.message_type_mismatch",
    "payload.unvalidated",
    "payload.family_unexpected",
    "message_type.unknown",
    "story_id.changed",
    "sequence_number.not_increasing",
    "sequence_number.gap",
    "updated_at.backwards",
    "snapshot.members_missing",
    "snapshot.assets_dropped",
    "asset.type_changed",
    "story_type.left_terminal",
    "op.convention",
    "iface.convention",
    "reply.unpaired",
    "reply_to.convention",
    "trace_context.format",
    "error_code.inconsistent",
    "cloudevents.attribute_missing",
    "cloudevents.attribute_invalid",
    "cloudevents.attribute_name",
    "cloudevents.specversion_unsupported",
    "cloudevents.attribute_mismatch",
    "cloudevents.data_unsupported",
    "cloudevents.unrepresentable",
]
"""Every named rule id (pinned to :data:`NAMED` by ``tests/test_rule_identity.py``)."""

RaisedRule = Keyword | NamedId
"""What a validator raises (:func:`envelopekit._violations.rule_error`): a keyword, whose
schema name the mapper adds from the model that failed, or a named id."""

_NAMED_RULES: Final = (
    Rule(JSON_INVALID, "json", "The bytes are not one well-formed UTF-8 JSON document."),
    Rule(JSON_DUPLICATE_KEY, "json", "An object repeats a member name."),
    Rule(MESSAGE_TOO_LARGE, "policy", "The message is larger than the configured limit."),
    Rule(MESSAGE_TOO_DEEP, "policy", "The message nests deeper than the configured limit."),
    Rule(NUMBER_NON_FINITE, "json", "NaN or Infinity: not JSON, never accepted or emitted."),
    Rule(NUMBER_OUT_OF_RANGE, "conformance", "An integer outside signed 64-bit."),
    Rule(
        NUMBER_UNSAFE_INTEGER,
        "conformance",
        "An integer beyond 2^53-1: JavaScript consumers lose its exact value (a warning).",
    ),
    Rule(
        NUMBER_BEYOND_INT64,
        "conformance",
        "An integer literal beyond signed 64-bit inside BabelQueue `data`, as Go and Node write "
        "a double such as 1e20: accepted, kept exact and re-emitted unchanged (a warning).",
    ),
    Rule(SPEC_UNRECOGNISED, "policy", "The message's shape matches none of the three specs."),
    Rule(
        VIOLATIONS_TRUNCATED,
        "policy",
        "More findings than `max_violations`: the rest were left out (the message says how "
        "many), or not computed once validation stopped early on a large message.",
    ),
    Rule(URN_MISSING, "conformance", "A BabelQueue message with no non-blank `job` or `urn`."),
    Rule(
        URN_CONVENTION,
        "policy",
        "A URN off the `urn:babel:<context>:<event>` convention (a producer lint, a warning).",
    ),
    Rule(
        SCHEMA_VERSION_UNSUPPORTED,
        "conformance",
        "`meta.schema_version` is not exactly the JSON integer 1.",
    ),
    Rule(
        FORBIDDEN_KEY,
        "conformance",
        "A non-canonical BabelQueue key (policy K-15): dropped with a warning, never emitted.",
    ),
    Rule(
        CREATED_AT_SECONDS,
        "conformance",
        "`meta.created_at` looks like Unix seconds, not milliseconds (a warning).",
    ),
    # BabelQueue consumer toolkit.
    Rule(
        URN_UNKNOWN,
        "conformance",
        "No handler is mapped for the message URN: the unknown-URN strategy decides "
        "(fail, delete, release or dead_letter).",
    ),
    Rule(
        HANDLER_FAILED,
        "policy",
        "The URN's handler raised: the message is retried, then dead-lettered as `failed`.",
    ),
    Rule(
        ATTEMPTS_AT_MAXIMUM,
        "policy",
        "A delivery failed with `attempts` at the signed 64-bit maximum: it cannot be counted "
        "once more, so the message is dead-lettered now, `attempts` as received.",
    ),
    Rule(
        SUBSCRIBER_UNEXPECTED,
        "policy",
        "A valid message that is not what this subscriber takes (another SOM family, a Matrix "
        "reply where requests are consumed): quarantined.",
    ),
    Rule(
        IDEMPOTENCY_HELD,
        "policy",
        "Another worker holds the in-flight claim on this `meta.id` right now: the delivery is "
        "put back unchanged, and is skipped or run once the claim ends or lapses.",
    ),
    Rule(
        DATA_INVALID,
        "policy",
        "`data` does not fit the model or payload schema registered for its URN; it will not "
        "become valid on retry.",
    ),
    Rule(
        ENVELOPE_REFUSED,
        "policy",
        "A v1 envelope that the envelope class registered for its URN refuses outside `data` "
        "(the class's own members or validators): dead-lettered at once as `poison`, the "
        "class's rule ids and pointers in `dead_letter.error`; it will not become valid on retry.",
    ),
    Rule(
        PAYLOAD_SCHEMA_FAILED,
        "policy",
        "The payload schema of the URN could not be had or applied (the `schemas` provider "
        "raised, or validating against its schema did): retried, then dead-lettered as `failed`.",
    ),
    Rule(
        TRANSPORT_SCHEMA_VERSION_UNSUPPORTED,
        "conformance",
        "A broker `bq-schema-version` property that is present, not blank and not exactly 1: "
        "rejected before the body is decoded.",
    ),
    Rule(
        DATA_DECRYPT_FAILED,
        "policy",
        "A field marked `x-gdpr-sensitive` that the cipher cannot open, or whose plaintext is "
        "not JSON (ADR-0030).",
    ),
    Rule(COMPAT_TYPE_CHANGED, "policy", "A schema change retypes a location (`type` differs)."),
    Rule(
        COMPAT_ENUM_ADDED, "policy", "A schema change adds an `enum` where any value was allowed."
    ),
    Rule(COMPAT_ENUM_VALUE_REMOVED, "policy", "A schema change drops a value of an `enum`."),
    Rule(COMPAT_MIN_LENGTH_TIGHTENED, "policy", "A schema change adds or raises `minLength`."),
    Rule(COMPAT_MINIMUM_TIGHTENED, "policy", "A schema change adds or raises `minimum`."),
    Rule(
        COMPAT_REQUIRED_ADDED,
        "policy",
        "A schema change requires a property that was optional or did not exist.",
    ),
    Rule(
        COMPAT_ADDITIONAL_PROPERTIES_TIGHTENED,
        "policy",
        "A schema change closes an open object (`additionalProperties` to `false`).",
    ),
    Rule(
        COMPAT_PROPERTY_REMOVED,
        "policy",
        "A schema change removes (or renames) a property, whatever `additionalProperties` says.",
    ),
    Rule(SOM_VERSION_PRE_1_0, "conformance", "A pre-1.0 `som_version` such as 0.3.2."),
    Rule(SOM_VERSION_UNSUPPORTED_MAJOR, "policy", "A `som_version` outside SOM 1.x."),
    Rule(
        SOM_VERSION_UNSUPPORTED_MINOR,
        "conformance",
        "A 1.x `som_version` other than 1.0.0 (accepted only in tolerant mode).",
    ),
    Rule(
        PAYLOAD_MESSAGE_TYPE_MISMATCH,
        "policy",
        "The payload's own `message_type` disagrees with the envelope's.",
    ),
    Rule(
        PAYLOAD_UNVALIDATED,
        "policy",
        "A `message_type` with no SOM 1.0 schema: payload kept as sent (a warning).",
    ),
    Rule(MESSAGE_TYPE_UNKNOWN, "policy", "A `message_type` with no SOM 1.0 schema, refused."),
    Rule(
        PAYLOAD_FAMILY_UNEXPECTED,
        "policy",
        "A `message_type` selecting another family than the payload type of `SomEnvelope[X]`.",
    ),
    Rule(STORY_ID_CHANGED, "sequence", "A snapshot in a story's sequence names another story."),
    Rule(
        SEQUENCE_NUMBER_NOT_INCREASING,
        "sequence",
        "`sequence_number` is not greater than the last accepted one.",
    ),
    Rule(SEQUENCE_NUMBER_GAP, "sequence", "`sequence_number` skips values (a warning)."),
    Rule(UPDATED_AT_BACKWARDS, "sequence", "`updated_at` is earlier than the last snapshot's."),
    Rule(SNAPSHOT_MEMBERS_MISSING, "sequence", "A member of the last snapshot is absent."),
    Rule(SNAPSHOT_ASSETS_DROPPED, "sequence", "An asset of the last snapshot is absent."),
    Rule(ASSET_TYPE_CHANGED, "sequence", "An asset's `asset_type` changed between snapshots."),
    Rule(
        STORY_TYPE_LEFT_TERMINAL,
        "sequence",
        "A story left a terminal `story_type` (KILLED, SPIKED, ARCHIVED).",
    ),
    Rule(
        OP_CONVENTION,
        "policy",
        "A Matrix `op` off the `<area>.<verb>` / `$<verb>` convention (a lint, a warning).",
    ),
    Rule(
        IFACE_CONVENTION,
        "policy",
        "A Matrix `iface` off the `Name@N` form, e.g. `FsDaemon@1` (a lint, a warning).",
    ),
    Rule(
        REPLY_UNPAIRED,
        "policy",
        "A Matrix request with `replyTo` but no `correlationId`, or the reverse (a warning).",
    ),
    Rule(
        REPLY_TO_CONVENTION,
        "policy",
        "A Matrix `replyTo` other than `$replies.<correlationId>` (a lint, a warning).",
    ),
    Rule(
        TRACE_CONTEXT_FORMAT,
        "policy",
        "A Matrix `traceId`/`spanId`/`parentSpanId` that is not a W3C Trace Context id "
        "(a warning).",
    ),
    Rule(
        ERROR_CODE_INCONSISTENT,
        "policy",
        "A Matrix error payload with `code` OK, or a `statusCode` other than the code's HTTP "
        "status (a warning).",
    ),
    Rule(
        CLOUDEVENTS_ATTRIBUTE_MISSING,
        "conformance",
        "A CloudEvent without one of its required attributes `id`, `source`, `specversion`, "
        "`type`.",
    ),
    Rule(
        CLOUDEVENTS_ATTRIBUTE_INVALID,
        "conformance",
        "A CloudEvents attribute value its type refuses: empty, not a string, a control "
        "character, a `source` that is not a URI-reference, a `dataschema` that is not an "
        "absolute URI, a `time` that is not RFC 3339, a `traceparent` that is not W3C Trace "
        "Context, a header value that is not percent-encoded UTF-8.",
    ),
    Rule(
        CLOUDEVENTS_ATTRIBUTE_NAME,
        "conformance",
        "A CloudEvents attribute name that is not lowercase `a-z0-9` (at most 20 characters "
        "when written), an extension named `data`, an attribute given twice, `datacontenttype` "
        "as a binary-mode header, or AMQP `cloudEvents_` and `cloudEvents:` mixed in one message.",
    ),
    Rule(
        CLOUDEVENTS_SPECVERSION_UNSUPPORTED,
        "conformance",
        "A CloudEvent whose `specversion` is not `1.0`.",
    ),
    Rule(
        CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "policy",
        "A CloudEvents attribute that disagrees with the envelope its `data` carries (`id` and "
        "`meta.id` or `message_id`, `type` and `job` or `message_type`, `time`, `subject`, "
        "`dataschema`, `traceparent`, `correlationid`, `causationid`).",
    ),
    Rule(
        CLOUDEVENTS_DATA_UNSUPPORTED,
        "policy",
        "A CloudEvent whose data cannot be an envelope: absent, not JSON (`datacontenttype`), "
        "`data` and `data_base64` together, `data_base64` that is not base64.",
    ),
    Rule(
        CLOUDEVENTS_UNREPRESENTABLE,
        "policy",
        "An envelope field its CloudEvents attribute cannot carry (a control character in a URN, "
        "queue or topic; a `created_at` past 9999-12-31): the event is not produced.",
    ),
)

NAMED: Final[dict[str, Rule]] = {rule.id: rule for rule in _NAMED_RULES}
"""Every named rule by id."""


def is_rule(rule_id: str) -> bool:
    """Whether ``rule_id`` is a named id or a well-formed structural id of this catalogue."""
    if rule_id in NAMED:
        return True
    schema, _, keyword = rule_id.partition(".")
    return schema in SCHEMAS and keyword in KEYWORDS


def source_of(rule_id: str) -> Source:
    """The source a violation of ``rule_id`` reports (``"schema"`` for structural ids)."""
    rule = NAMED.get(rule_id)
    return "schema" if rule is None else rule.source
