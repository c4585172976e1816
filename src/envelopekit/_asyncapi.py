"""AsyncAPI 3.0 documents generated from the models: BabelQueue queues, the SOM bus, Matrix ops.

Each document is a view of the generated JSON Schemas, never a hand-kept copy. Its
``components.schemas`` are the shipped Draft-07 schemas (``envelopekit/schemas/draft-07``),
lifted so that AsyncAPI tools resolve them: each schema file becomes ``<spec>.<name>``, each of
its ``definitions`` ``<spec>.<Definition>``, and their ``#/definitions/...`` references are
re-rooted to ``#/components/schemas/...`` (its ``$id`` and ``$schema`` go, a ``$comment``
names the file). Nothing else changes, so the schemas keep AsyncAPI's default schema format
(the AsyncAPI Schema Object, a superset of Draft-07) and no ``schemaFormat`` is declared.

* BabelQueue: a channel per queue and one per dead-letter queue (``<queue>.dlq``), a message
  per URN (registered in a :class:`~envelopekit.babelqueue.Router` or given) whose ``data``
  is that URN's model when it has one, and the dead-letter message (``dead_letter`` required).
  Without queues, the channels are ``{queue}`` and ``{queue}.dlq``.
* SOM: a channel per topic (``som.<message_type>`` by default), one message per
  ``message_type`` whose payload is the family that type selects (``message_type`` held by a
  ``const``, so exactly one message matches: asyncapi/spec#585), and the unknown-family
  message, its payload an open object.
* Matrix: an operation per op whose reply is the Operation Reply object (address: the
  request's ``replyTo``; messages: the success and the error reply), ``correlationId`` as
  the messages' correlation id.

Same models and arguments, same bytes: keys are written in a fixed order and
:func:`render` indents them as the schema files are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import CoreSchema

from ._schema import json_schema, render, to_draft_07

if TYPE_CHECKING:
    from .babelqueue import Router

__all__ = [
    "ASYNCAPI_SPECS",
    "ASYNCAPI_VERSION",
    "asyncapi_document",
    "refuse_strays",
    "render",
    "write_asyncapi",
]

ASYNCAPI_VERSION: Final = "3.0.0"
ASYNCAPI_SPECS: Final = ("babelqueue", "som", "matrix")
CONTENT_TYPE: Final = "application/json"
DEFAULT_VERSION: Final = "1.0.0"

_TITLES: Final[dict[str, str]] = {
    "babelqueue": "BabelQueue v1 queues",
    "som": "SOM 1.0 bus",
    "matrix": "Matrix MxEnvelope actor",
}
_SCHEMAS: Final = "#/components/schemas/"
_DEFINITIONS: Final = "#/definitions/"
# What AsyncAPI allows as a components key (ECMA-262's `\w` is ASCII; a `$ref` to a non-ASCII
# key is no URI reference either); every other character becomes "_".
_KEY_UNSAFE: Final = re.compile(r"[^\w.\-]", re.ASCII)

JsonObject = dict[str, Any]


def _ref(target: str) -> JsonObject:
    return {"$ref": target}


def _key(name: str) -> str:
    # A URN's colons read best as dots: urn:babel:orders:created -> urn.babel.orders.created.
    return _KEY_UNSAFE.sub("_", name.replace(":", "."))


def _pointer(*tokens: str) -> str:
    """``#/a/b`` from tokens, escaped as RFC 6901 says."""
    return "#/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in tokens)


class _Components:
    """``components``: the lifted schemas, the messages and the correlation ids, by key."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}
        self.messages: dict[str, JsonObject] = {}
        self.correlation_ids: dict[str, JsonObject] = {}

    def schema(self, spec: str, name: str) -> JsonObject:
        """Lift one of our Draft-07 schemas; a reference to it."""
        key = f"{spec}.{name}"
        if key not in self.schemas:
            document = json_schema(spec, name, draft="07")
            definitions: dict[str, Any] = document.pop("definitions", {})
            document.pop("$schema")
            identity = document.pop("$id")
            body = _reroot(document, lambda d: f"{spec}.{d}")
            self.schemas[key] = {"$comment": f"envelopekit's {identity}", **body}
            for definition, schema in definitions.items():
                self.add_schema(f"{spec}.{definition}", _reroot(schema, lambda d: f"{spec}.{d}"))
        return _ref(_SCHEMAS + key)

    def definition(self, spec: str, name: str) -> JsonObject:
        """A reference to a definition of a lifted schema (which must be lifted first)."""
        key = f"{spec}.{name}"
        if key not in self.schemas:
            raise LookupError(f"no lifted definition {key}")
        return _ref(_SCHEMAS + key)

    def add_schema(self, key: str, schema: Any) -> None:
        if key in self.schemas and self.schemas[key] != schema:
            raise ValueError(f"two different schemas are named {key!r}")
        self.schemas[key] = schema

    def message(self, key: str, message: JsonObject) -> JsonObject:
        if key in self.messages:
            raise ValueError(f"two messages are named {key!r}")
        self.messages[key] = message
        return _ref(_pointer("components", "messages", key))

    def to_json(self) -> JsonObject:
        found: JsonObject = {"schemas": dict(sorted(self.schemas.items()))}
        found["messages"] = self.messages
        if self.correlation_ids:
            found["correlationIds"] = self.correlation_ids
        return found


def _reroot(node: Any, rename: Callable[[str], str]) -> Any:
    """``node`` with each ``#/definitions/X`` reference pointing at ``components.schemas``."""
    if isinstance(node, list):
        return [_reroot(item, rename) for item in node]
    if not isinstance(node, dict):
        return node
    node = cast("dict[str, Any]", node)
    moved: JsonObject = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith(_DEFINITIONS):
            moved[key] = _SCHEMAS + rename(value[len(_DEFINITIONS) :])
        else:
            moved[key] = _reroot(value, rename)
    return moved


class _Document:
    """One AsyncAPI document being built: channels, operations and components, in order."""

    def __init__(self, spec: str, title: str | None, version: str) -> None:
        self.spec = spec
        self.title = _TITLES[spec] if title is None else title
        self.version = version
        self.channels: dict[str, JsonObject] = {}
        self.operations: dict[str, JsonObject] = {}
        self.components = _Components()

    def channel(self, key: str, channel: JsonObject) -> JsonObject:
        if key in self.channels:
            raise ValueError(f"two channels are named {key!r} (address {channel['address']!r})")
        self.channels[key] = channel
        return _ref(_pointer("channels", key))

    def operation(self, key: str, operation: JsonObject) -> None:
        if key in self.operations:
            raise ValueError(f"two operations are named {key!r}")
        self.operations[key] = operation

    def to_json(self, description: str) -> JsonObject:
        return {
            "asyncapi": ASYNCAPI_VERSION,
            "info": {
                "title": self.title,
                "version": self.version,
                "description": description,
            },
            "defaultContentType": CONTENT_TYPE,
            "channels": self.channels,
            "operations": self.operations,
            "components": self.components.to_json(),
        }


def _channel_messages(channel_key: str, keys: Iterable[str]) -> list[JsonObject]:
    return [_ref(_pointer("channels", channel_key, "messages", key)) for key in keys]


# --- BabelQueue ------------------------------------------------------------------------------


def _babelqueue_urns(
    router: Router | None, urns: Mapping[str, Any] | Iterable[str] | None
) -> dict[str, Any]:
    """URN -> its ``data`` model (``None`` when untyped), the router's first."""
    from .babelqueue._data_model import require_object_data

    found: dict[str, Any] = {}
    if router is not None:
        for urn in router.urns():
            found[urn] = router.data_model(urn)
    if urns is not None:
        given: Mapping[str, Any] = urns if isinstance(urns, Mapping) else dict.fromkeys(urns)
        for urn, model in given.items():
            if not isinstance(urn, str) or not urn.strip():
                raise ValueError(f"a URN must be a non-blank string, not {urn!r}")
            if urn in found:
                raise ValueError(f"{urn!r} is given twice")
            if model is not None:
                require_object_data(model, urn)  # as a Router refuses it when registered
            found[urn] = model
    return found


def _data_schemas(document: _Document, models: dict[str, Any]) -> dict[str, JsonObject]:
    """Each URN's ``data`` schema, in Draft-07, its definitions lifted into components."""
    typed = {urn: model for urn, model in models.items() if model is not None}
    if not typed:
        return {}
    inputs: list[tuple[str, JsonSchemaMode, CoreSchema]] = [
        (urn, "validation", TypeAdapter(model).core_schema) for urn, model in typed.items()
    ]
    mapping, definitions = GenerateJsonSchema(by_alias=True).generate_definitions(inputs)
    # One Draft-07 conversion for all: the same spelling, and `$defs` references as one set.
    urns = list(typed)
    holder = {
        "$defs": definitions,
        "properties": {str(i): mapping[(urn, "validation")] for i, urn in enumerate(urns)},
    }
    try:
        converted = to_draft_07(holder)
    except ValueError as exc:
        raise ValueError(f"a data model's schema cannot be written in Draft-07: {exc}") from exc
    renamed = {name: _key(name) for name in converted.get("definitions", {})}
    if len(set(renamed.values())) != len(renamed):
        raise ValueError(f"data models whose names collide as AsyncAPI keys: {sorted(renamed)}")
    for name, schema in converted.get("definitions", {}).items():
        if renamed[name] in document.components.schemas:
            raise ValueError(f"a data model is named like a schema of ours: {name!r}")
        document.components.add_schema(renamed[name], _reroot(schema, renamed.__getitem__))
    return {
        urn: _reroot(converted["properties"][str(i)], renamed.__getitem__)
        for i, urn in enumerate(urns)
    }


def _model_name(model: Any) -> str:
    return str(getattr(model, "__name__", repr(model)))


def _babelqueue(
    document: _Document,
    router: Router | None,
    urns: Mapping[str, Any] | Iterable[str] | None,
    queues: Sequence[str],
) -> str:
    from .babelqueue._routing import DEFAULT_DLQ_SUFFIX
    from .babelqueue._urn import NOT_BLANK_PATTERN

    components = document.components
    envelope = components.schema("babelqueue", "envelope")
    found = _babelqueue_urns(router, urns)
    data = _data_schemas(document, found)
    suffix = router.dlq_suffix if router is not None else DEFAULT_DLQ_SUFFIX

    messages: dict[str, JsonObject] = {}
    if not found:
        messages["envelope"] = components.message(
            "envelope",
            {
                "name": "envelope",
                "title": "A BabelQueue v1 message",
                "summary": "Any URN; `data` is a JSON object.",
                "payload": envelope,
            },
        )
    for urn, model in found.items():
        key = _key(urn)
        # The URN the message is routed by: `job`, or `urn` where `job` is absent or blank.
        pinned: JsonObject = {
            "anyOf": [
                {"required": ["job"], "properties": {"job": {"const": urn}}},
                {
                    "required": ["urn"],
                    "properties": {
                        "job": {"not": {"pattern": NOT_BLANK_PATTERN}},
                        "urn": {"const": urn},
                    },
                },
            ]
        }
        if urn in data:
            pinned["properties"] = {"data": data[urn]}
        messages[key] = components.message(
            key,
            {
                "name": urn,
                "title": urn,
                "summary": (
                    f"`data` is {_model_name(model)}."
                    if model is not None
                    else "`data` is a JSON object."
                ),
                "payload": {"allOf": [envelope, pinned]},
            },
        )
    dead_letter = components.message(
        "deadLetter",
        {
            "name": "deadLetter",
            "title": "A dead-lettered BabelQueue v1 message",
            "summary": "The envelope as it failed, with its `dead_letter` block.",
            "payload": {"allOf": [envelope, {"required": ["dead_letter"]}]},
        },
    )

    routed = (
        f" A URN without a handler: `{router.unknown_urn}`; a failing message is retried up to "
        f"{router.max_attempts} deliveries, then dead-lettered."
        if router is not None
        else ""
    )
    places: list[tuple[str, str, str, JsonObject]]
    if queues:
        places = [(queue, queue, queue + suffix, {}) for queue in queues]
    else:
        parameter = {"queue": {"description": "The logical queue (`meta.queue`)."}}
        places = [("queue", "{queue}", "{queue}" + suffix, parameter)]
    for key, address, dlq_address, parameters in places:
        if not key:
            raise ValueError("a queue name cannot be empty (meta.queue is one character or more)")
        if "{" in key or "}" in key:
            raise ValueError(f"a queue name cannot hold braces: {key!r}")
        dlq_key = _key(key + suffix)
        queue_ref = document.channel(
            _key(key),
            {
                "address": address,
                "title": "Queue" if not queues else key,
                "description": "BabelQueue v1 messages consumed from this queue.",
                **({"parameters": parameters} if parameters else {}),
                "messages": messages,
            },
        )
        dlq_ref = document.channel(
            dlq_key,
            {
                "address": dlq_address,
                "title": "Dead-letter queue" if not queues else key + suffix,
                "description": "Messages that left the queue, each with its `dead_letter` block.",
                **({"parameters": parameters} if parameters else {}),
                "messages": {"deadLetter": dead_letter},
            },
        )
        suffix_key = "" if not queues else "." + _key(key)
        document.operation(
            "receive" + suffix_key,
            {
                "action": "receive",
                "channel": queue_ref,
                "summary": "Consume a message." + routed,
                "messages": _channel_messages(_key(key), messages),
            },
        )
        document.operation(
            "retry" + suffix_key,
            {
                "action": "send",
                "channel": queue_ref,
                "summary": "Republish a failed message: `attempts + 1`, same `meta.id`.",
                "messages": _channel_messages(_key(key), messages),
            },
        )
        document.operation(
            "deadLetter" + suffix_key,
            {
                "action": "send",
                "channel": dlq_ref,
                "summary": "Dead-letter a message whose retries ran out (or refused at once).",
                "messages": _channel_messages(dlq_key, ["deadLetter"]),
            },
        )
    return (
        "BabelQueue v1 envelopes, generated by envelopekit from its models. The payload of "
        "every message is the envelope schema; a URN's message holds `job` to the URN and "
        "types `data` by the URN's model."
    )


# --- SOM -------------------------------------------------------------------------------------


def _som(document: _Document, topics: Mapping[str, Iterable[str]] | None) -> str:
    from .som import PAYLOAD_MODELS

    components = document.components
    envelope = components.schema("som", "envelope")
    known = sorted(PAYLOAD_MODELS)
    messages: dict[str, JsonObject] = {}

    def message(message_type: str) -> JsonObject:
        if message_type in messages:
            return messages[message_type]
        model = PAYLOAD_MODELS.get(message_type)
        if model is not None:
            payload = components.definition("som", model.__name__)
            summary = f"The payload is a {model.__name__} ({model.__schema_name__})."
        else:
            payload = components.definition("som", "UnvalidatedPayload")
            summary = "A family with no SOM 1.0 schema: the payload is an open JSON object."
        messages[message_type] = components.message(
            _key(message_type),
            {
                "name": message_type,
                "title": message_type,
                "summary": summary,
                "payload": {
                    "allOf": [
                        envelope,
                        {
                            "properties": {
                                "message_type": {"const": message_type},
                                "payload": payload,
                            },
                            "required": ["message_type"],
                        },
                    ]
                },
            },
        )
        return messages[message_type]

    layout: dict[str, list[str]]
    if topics is None:
        layout = {f"som.{message_type}": [message_type] for message_type in known}
    else:
        layout = {}
        for topic, types in topics.items():
            if not topic.startswith("som."):
                raise ValueError(f"a SOM topic begins with 'som.': {topic!r}")
            if "{" in topic or "}" in topic:
                raise ValueError(f"a topic cannot hold braces: {topic!r}")
            chosen = list(dict.fromkeys(types))
            if not chosen:
                raise ValueError(f"topic {topic!r} carries no message_type")
            bad = [t for t in chosen if not re.fullmatch(r"[a-z][a-z0-9_.]*", t)]
            if bad:
                raise ValueError(f"not a SOM message_type (^[a-z][a-z0-9_.]*$): {bad}")
            layout[topic] = chosen
    for topic, types in layout.items():
        key = _key(topic)
        refs = {_key(t): message(t) for t in types}
        channel = document.channel(key, {"address": topic, "title": topic, "messages": refs})
        document.operation(
            "receive." + key,
            {
                "action": "receive",
                "channel": channel,
                "summary": "Consume a SOM message; `message_type` selects its payload.",
                "messages": _channel_messages(key, refs),
            },
        )
    if topics is None:
        other = components.message(
            "other",
            {
                "name": "other",
                "title": "Any other message_type",
                "summary": (
                    "A family with no SOM 1.0 schema: valid with an open payload; conformant "
                    "consumers ignore it (`payload.unvalidated`)."
                ),
                "payload": {
                    "allOf": [
                        envelope,
                        {
                            "properties": {
                                "message_type": {"not": {"enum": known}},
                                "payload": components.definition("som", "UnvalidatedPayload"),
                            },
                            "required": ["message_type"],
                        },
                    ]
                },
            },
        )
        channel = document.channel(
            "other",
            {
                "address": "som.{message_type}",
                "title": "Other families",
                "description": "Topics of the families with no SOM 1.0 schema.",
                "parameters": {
                    "message_type": {
                        "description": "The envelope's `message_type`.",
                        "location": "$message.payload#/message_type",
                    }
                },
                "messages": {"other": other},
            },
        )
        document.operation(
            "receive.other",
            {
                "action": "receive",
                "channel": channel,
                "summary": "Consume a message of an unknown family (its payload unvalidated).",
                "messages": _channel_messages("other", ["other"]),
            },
        )
    return (
        "SOM 1.0 envelopes, generated by envelopekit from its models. `message_type` alone "
        "selects the payload's schema: each message holds `message_type` with a `const` and "
        "types `payload` by the family it selects, so exactly one message of a channel "
        "matches a valid envelope."
    )


# --- Matrix ----------------------------------------------------------------------------------

_ERROR_PAYLOAD: Final[JsonObject] = {
    "type": "object",
    "properties": {"ok": {"const": False}},
    "required": ["ok"],
}


def _matrix(document: _Document, ops: Iterable[str] | None) -> str:
    from .matrix import REPLY_OP

    components = document.components
    request = components.schema("matrix", "request")
    response = components.schema("matrix", "response")
    components.correlation_ids["correlationId"] = {
        "description": "The request's `correlationId`, echoed by its reply.",
        "location": "$message.payload#/correlationId",
    }
    correlation = _ref(_pointer("components", "correlationIds", "correlationId"))
    reply = components.message(
        "reply",
        {
            "name": "reply",
            "title": "Reply",
            "summary": "A `$reply` whose payload is not an error payload (`{ok: true, ...}`).",
            "correlationId": correlation,
            "payload": {"allOf": [response, {"properties": {"payload": {"not": _ERROR_PAYLOAD}}}]},
        },
    )
    error = components.message(
        "error",
        {
            "name": "error",
            "title": "Error reply",
            "summary": "A `$reply` whose payload is an MxErrorPayload (`ok: false`).",
            "correlationId": correlation,
            "payload": {
                "allOf": [
                    response,
                    {"properties": {"payload": components.definition("matrix", "MxErrorPayload")}},
                ]
            },
        },
    )
    names = list(dict.fromkeys(ops)) if ops is not None else []
    # (operation key, message key, title) per op; one "request" for any op when none is named.
    served: list[tuple[str, str, str]] = []
    requests: dict[str, JsonObject] = {}
    if not names:
        served.append(("request", "request", "Any op"))
        requests["request"] = components.message(
            "request",
            {
                "name": "request",
                "title": "Request",
                "summary": "A request for any op but `$reply`.",
                "correlationId": correlation,
                "payload": {
                    "allOf": [request, {"properties": {"op": {"not": {"const": REPLY_OP}}}}]
                },
            },
        )
    for op in names:
        if not isinstance(op, str) or not op:
            raise ValueError(f"an op is a non-empty string, not {op!r}")
        if op == REPLY_OP:
            raise ValueError(f"{REPLY_OP!r} is the reply, not an op a request names")
        key = "request." + _key(op)
        served.append((_key(op), key, op))
        requests[key] = components.message(
            key,
            {
                "name": op,
                "title": op,
                "summary": f"A `{op}` request.",
                "correlationId": correlation,
                "payload": {"allOf": [request, {"properties": {"op": {"const": op}}}]},
            },
        )
    channel = document.channel(
        "requests",
        {
            "address": None,
            "title": "Requests",
            "description": (
                "Requests to the serving actor, at its mount path (the address is the "
                "runtime's, not the envelope's)."
            ),
            "messages": requests,
        },
    )
    replies = document.channel(
        "replies",
        {
            "address": None,
            "title": "Replies",
            "description": (
                "The requester's reply inbox: the request's `replyTo`, by convention "
                "`$replies.<correlationId>`."
            ),
            "messages": {"reply": reply, "error": error},
        },
    )
    for op_key, message_key, op_title in served:
        document.operation(
            op_key,
            {
                "action": "receive",
                "channel": channel,
                "title": op_title,
                "summary": "Serve the request; reply when it carries `replyTo`.",
                "messages": _channel_messages("requests", [message_key]),
                "reply": {
                    "address": {
                        "description": "The request's `replyTo`.",
                        "location": "$message.payload#/replyTo",
                    },
                    "channel": replies,
                    "messages": _channel_messages("replies", ["reply", "error"]),
                },
            },
        )
    return (
        "Matrix MxEnvelope requests and replies, generated by envelopekit from its models. "
        "Each op is an operation with its reply; `correlationId` correlates the two."
    )


# --- entry points ----------------------------------------------------------------------------


def asyncapi_document(
    spec: str,
    *,
    router: Router | None = None,
    urns: Mapping[str, Any] | Iterable[str] | None = None,
    queues: Sequence[str] = (),
    topics: Mapping[str, Iterable[str]] | None = None,
    ops: Iterable[str] | None = None,
    title: str | None = None,
    version: str = DEFAULT_VERSION,
) -> dict[str, Any]:
    """The AsyncAPI 3.0 document of one spec, e.g. ``asyncapi_document("som")``.

    Args:
        spec: ``"babelqueue"``, ``"som"`` or ``"matrix"``.
        router: BabelQueue: a message per URN it routes, ``data`` typed by the URN's model.
        urns: BabelQueue: more URNs, a list or a mapping URN -> ``data`` model (or ``None``).
        queues: BabelQueue: the queues, a channel each (and one for its dead-letter queue);
            ``{queue}`` when none is given.
        topics: SOM: topic -> the ``message_type`` values it carries; by default a topic
            ``som.<message_type>`` per known type and ``som.{message_type}`` for the others.
        ops: Matrix: the ops served, an operation each; one for any op when none is given.
        title: ``info.title``; by default the spec's own title (``"SOM 1.0 bus"``,
            ``"BabelQueue v1 queues"``, ``"Matrix MxEnvelope actor"``).
        version: ``info.version``, the version of the API described.

    Raises:
        ValueError: for an unknown spec, an option of another spec (named), names that
            collide, or a ``data`` model whose values are not JSON objects.
    """
    _known((spec,))
    refuse_strays(
        (spec,), {"router": router, "urns": urns, "queues": queues, "topics": topics, "ops": ops}
    )
    for name, value in (("queues", queues), ("urns", urns), ("ops", ops)):
        if isinstance(value, str):
            raise TypeError(f"{name} is a collection of names, not one string")
    for topic, types in (topics or {}).items():
        if isinstance(types, str):
            raise TypeError(f"topic {topic!r}: a collection of message_type values, not a string")
    if len(set(queues)) != len(queues):
        raise ValueError(f"a queue is given twice: {list(queues)}")
    document = _Document(spec, title, version)
    if spec == "babelqueue":
        description = _babelqueue(document, router, urns, queues)
    elif spec == "som":
        description = _som(document, topics)
    else:
        description = _matrix(document, ops)
    return document.to_json(description)


def write_asyncapi(
    directory: Path, specs: Iterable[str] | None = None, **options: Any
) -> list[Path]:
    """Write ``<directory>/<spec>.asyncapi.json`` per spec (all three by default); the paths.

    ``options`` are :func:`asyncapi_document`'s, each given to the spec it belongs to.
    """
    written: list[Path] = []
    chosen = tuple(specs) if specs is not None else ASYNCAPI_SPECS
    _known(chosen)
    # An option of a spec not written would be dropped unsaid (`--spec som --op x --out DIR`).
    refuse_strays(chosen, options)
    documents = {spec: asyncapi_document(spec, **_options_for(spec, options)) for spec in chosen}
    directory.mkdir(parents=True, exist_ok=True)
    for spec, document in documents.items():
        path = directory / f"{spec}.asyncapi.json"
        path.write_bytes(render(document))
        written.append(path)
    return written


_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "babelqueue": frozenset({"router", "urns", "queues"}),
    "som": frozenset({"topics"}),
    "matrix": frozenset({"ops"}),
}
_SHARED: Final = frozenset({"title", "version"})


def _known(specs: Iterable[str]) -> None:
    for spec in specs:
        if spec not in ASYNCAPI_SPECS:
            raise ValueError(f"unknown spec {spec!r}; expected one of {', '.join(ASYNCAPI_SPECS)}")


def _spec_of(option: str) -> str:
    return next(spec for spec, names in _OPTIONS.items() if option in names)


def refuse_strays(
    specs: tuple[str, ...], options: Mapping[str, Any], spelt: Mapping[str, str] | None = None
) -> None:
    """Refuse an option given (not ``None``; ``queues`` not empty) that none of ``specs`` takes.

    Args:
        specs: the specs whose documents are made.
        options: :func:`asyncapi_document`'s keyword arguments.
        spelt: how the caller spells each option (``{"ops": "--op"}``), named in the error.

    Raises:
        ValueError: naming each stray option and its spec: ``ops (a matrix option) given for
            a som document``.
        TypeError: for a name that is no option.
    """
    unknown = set(options) - _SHARED - set().union(*_OPTIONS.values())
    if unknown:
        raise TypeError(f"unknown options: {', '.join(sorted(unknown))}")
    given = (
        name
        for name, value in options.items()
        if name not in _SHARED and (bool(value) if name == "queues" else value is not None)
    )
    strays = [name for name in given if _spec_of(name) not in specs]
    if not strays:
        return
    said = ", ".join(
        f"{(spelt or {}).get(name, name)} (a {_spec_of(name)} option)" for name in strays
    )
    documents = f"a {specs[0]} document" if len(specs) == 1 else f"{', '.join(specs)} documents"
    raise ValueError(f"{said} given for {documents}")


def _options_for(spec: str, options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k in _OPTIONS[spec] or k in _SHARED}
