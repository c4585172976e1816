"""Valid messages per spec, and messages that break one chosen rule of the catalogue."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final, Literal

import orjson
from hypothesis import reject
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from .. import rules
from .._check import SPECS, SpecName, check, spec_named
from .._json import dumps, reference_dumps
from .._schema import SCHEMA_NAMES, json_schema, rule_schema
from .._settings import get_settings
from .._violations import is_unicode
from ..babelqueue._data_model import require_object_data
from ._break import Change, Fill, changes, schema_names, sites
from ._generate import Generator, merge

__all__ = [
    "NAMED_RULES",
    "TOOLING",
    "UNBREAKABLE",
    "UNBREAKABLE_KEYWORDS",
    "MatrixKind",
    "breakable_rules",
    "catalogued_rules",
    "invalid_messages",
    "unbreakable",
    "valid_documents",
    "valid_messages",
]

MatrixKind = Literal["request", "response", "error"]

NAMED_RULES: Final[dict[str, tuple[str, ...]]] = {
    "any": (
        rules.JSON_INVALID,
        rules.JSON_DUPLICATE_KEY,
        rules.MESSAGE_TOO_LARGE,
        rules.MESSAGE_TOO_DEEP,
        rules.NUMBER_NON_FINITE,
        rules.SPEC_UNRECOGNISED,
        rules.VIOLATIONS_TRUNCATED,
    ),
    # SOM reads integers of any size, as its schemas and the Python reference do.
    "babelqueue": (
        rules.NUMBER_OUT_OF_RANGE,
        rules.NUMBER_UNSAFE_INTEGER,
        rules.NUMBER_BEYOND_INT64,
        rules.URN_MISSING,
        rules.URN_CONVENTION,
        rules.SCHEMA_VERSION_UNSUPPORTED,
        rules.FORBIDDEN_KEY,
        rules.CREATED_AT_SECONDS,
        rules.URN_UNKNOWN,
        rules.HANDLER_FAILED,
        rules.DATA_INVALID,
        rules.ENVELOPE_REFUSED,
        rules.PAYLOAD_SCHEMA_FAILED,
        rules.TRANSPORT_SCHEMA_VERSION_UNSUPPORTED,
    ),
    "som": (
        rules.SOM_VERSION_PRE_1_0,
        rules.SOM_VERSION_UNSUPPORTED_MAJOR,
        rules.SOM_VERSION_UNSUPPORTED_MINOR,
        rules.PAYLOAD_MESSAGE_TYPE_MISMATCH,
        rules.PAYLOAD_UNVALIDATED,
        rules.MESSAGE_TYPE_UNKNOWN,
        rules.PAYLOAD_FAMILY_UNEXPECTED,
        rules.STORY_ID_CHANGED,
        rules.SEQUENCE_NUMBER_NOT_INCREASING,
        rules.SEQUENCE_NUMBER_GAP,
        rules.UPDATED_AT_BACKWARDS,
        rules.SNAPSHOT_MEMBERS_MISSING,
        rules.SNAPSHOT_ASSETS_DROPPED,
        rules.ASSET_TYPE_CHANGED,
        rules.STORY_TYPE_LEFT_TERMINAL,
    ),
    "matrix": (
        rules.NUMBER_OUT_OF_RANGE,
        rules.NUMBER_UNSAFE_INTEGER,
        rules.OP_CONVENTION,
        rules.IFACE_CONVENTION,
        rules.REPLY_UNPAIRED,
        rules.REPLY_TO_CONVENTION,
        rules.TRACE_CONTEXT_FORMAT,
        rules.ERROR_CODE_INCONSISTENT,
    ),
}
"""Every named rule of :mod:`envelopekit.rules`, by the spec whose messages can carry it
(``"any"``: every spec's; ``"tooling"``: no message's, see :data:`TOOLING`)."""

TOOLING: Final[dict[str, str]] = {
    rules.ATTEMPTS_AT_MAXIMUM: "the `Router`'s decision on a failed delivery",
    rules.SUBSCRIBER_UNEXPECTED: "a subscriber's decision on a valid message it does not take",
    rules.IDEMPOTENCY_HELD: "the idempotency store's answer while another worker holds a claim",
    rules.DATA_DECRYPT_FAILED: "`unprotect`'s verdict on a field its cipher cannot open",
    rules.COMPAT_TYPE_CHANGED: "a verdict on a schema change, not on a message",
    rules.COMPAT_ENUM_ADDED: "a verdict on a schema change, not on a message",
    rules.COMPAT_ENUM_VALUE_REMOVED: "a verdict on a schema change, not on a message",
    rules.COMPAT_MIN_LENGTH_TIGHTENED: "a verdict on a schema change, not on a message",
    rules.COMPAT_MINIMUM_TIGHTENED: "a verdict on a schema change, not on a message",
    rules.COMPAT_REQUIRED_ADDED: "a verdict on a schema change, not on a message",
    rules.COMPAT_ADDITIONAL_PROPERTIES_TIGHTENED: "a verdict on a schema change, not on a message",
    rules.COMPAT_PROPERTY_REMOVED: "a verdict on a schema change, not on a message",
    **dict.fromkeys(
        (
            rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
            rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
            rules.CLOUDEVENTS_ATTRIBUTE_NAME,
            rules.CLOUDEVENTS_SPECVERSION_UNSUPPORTED,
            rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
            rules.CLOUDEVENTS_DATA_UNSUPPORTED,
            rules.CLOUDEVENTS_UNREPRESENTABLE,
        ),
        "`envelopekit.cloudevents`' verdict on a CloudEvent around a message, not on a message",
    ),
}
"""Named rules of the consumer toolkit and the schema tools: no message is judged by them."""
NAMED_RULES["tooling"] = tuple(TOOLING)

_WARNING: Final = "a warning: `check` accepts the message and reports it in `warnings`"
_SEQUENCE: Final = (
    "a rule across a story's sequence of messages (`SomSequence`), not of one message"
)
UNBREAKABLE: Final[dict[str, str]] = {
    rules.JSON_DUPLICATE_KEY: (
        "refused only under the `duplicate_keys='refuse'` setting; by default a repeated "
        "name is allowed, as the JSON RFC permits"
    ),
    rules.NUMBER_UNSAFE_INTEGER: _WARNING,
    rules.SPEC_UNRECOGNISED: (
        "reported only by `check(spec='auto')`; a message checked as one spec is judged by it"
    ),
    rules.VIOLATIONS_TRUNCATED: (
        "a marker `check` appends past the `max_violations` cap, after other violations; "
        "it is never the reason a message is refused"
    ),
    rules.NUMBER_BEYOND_INT64: _WARNING + " (the integer is kept exact)",
    rules.URN_CONVENTION: _WARNING,
    rules.FORBIDDEN_KEY: _WARNING + " (the key is dropped)",
    rules.CREATED_AT_SECONDS: _WARNING,
    rules.URN_UNKNOWN: "the `Router`'s decision for a valid message, not a property of one",
    rules.HANDLER_FAILED: "the `Router`'s outcome when a handler raises",
    rules.DATA_INVALID: "the `Router`'s verdict against a registered `data` model or schema",
    rules.ENVELOPE_REFUSED: "the `Router`'s verdict against a registered envelope class",
    rules.PAYLOAD_SCHEMA_FAILED: "the `Router`'s outcome when its payload schema raises",
    rules.TRANSPORT_SCHEMA_VERSION_UNSUPPORTED: "a broker property, read before the body",
    rules.PAYLOAD_UNVALIDATED: _WARNING,
    rules.MESSAGE_TYPE_UNKNOWN: (
        "refused only when validated with the context `unknown_message_type='refuse'`; "
        "`check` keeps an unknown family with a warning"
    ),
    rules.PAYLOAD_FAMILY_UNEXPECTED: (
        "refused only by a typed envelope (`SomEnvelope[StoryContext]`); `check` parses "
        "with the plain `SomEnvelope`, which takes every family"
    ),
    rules.STORY_ID_CHANGED: _SEQUENCE,
    rules.SEQUENCE_NUMBER_NOT_INCREASING: _SEQUENCE,
    rules.SEQUENCE_NUMBER_GAP: _SEQUENCE,
    rules.UPDATED_AT_BACKWARDS: _SEQUENCE,
    rules.SNAPSHOT_MEMBERS_MISSING: _SEQUENCE,
    rules.SNAPSHOT_ASSETS_DROPPED: _SEQUENCE,
    rules.ASSET_TYPE_CHANGED: _SEQUENCE,
    rules.STORY_TYPE_LEFT_TERMINAL: _SEQUENCE,
    # Structural ids a generated schema carries where the model reports another rule.
    "message-envelope.anyOf": (
        "its unions are `job`-or-`urn` (missing both is `urn.missing`) and nullable "
        "`dead_letter` fields (a wrong value is reported as `message-envelope.type`)"
    ),
    "message-envelope.const": (
        "its only const is `meta.schema_version` (`schema_version.unsupported`)"
    ),
    "message-envelope.maximum": (
        "its maxima are `meta.schema_version`'s (`schema_version.unsupported`) and 2^63-1, "
        "above which an integer is `number.out_of_range`"
    ),
    "message-envelope.pattern": (
        "its patterns are the non-blank `job`/`urn` (`urn.missing`) and the UUIDs' spelling "
        "(`message-envelope.format.uuid`)"
    ),
    "envelope.const": "its only const is `som_version` (the `som_version.*` rules)",
    "link-event.pattern": "its patterns spell its formats (a miss is `link-event.format.*`)",
    "system-audit.pattern": "its patterns spell its formats (a miss is `system-audit.format.*`)",
    "request.maximum": "its only maximum is `lamport`'s 2^63-1 (`number.out_of_range` above)",
    "response.maximum": "its only maximum is `lamport`'s 2^63-1 (`number.out_of_range` above)",
    "response.const": (
        'its only const is `op: "$reply"`, which makes the message a reply at all '
        "(another op is a request)"
    ),
    "error-payload.const": (
        "its only const is `ok: false`, which makes the payload an error payload at all "
        "(another `ok` is a success result)"
    ),
    rules.OP_CONVENTION: _WARNING,
    rules.IFACE_CONVENTION: _WARNING,
    rules.REPLY_UNPAIRED: _WARNING,
    rules.REPLY_TO_CONVENTION: _WARNING,
    rules.TRACE_CONTEXT_FORMAT: _WARNING,
    rules.ERROR_CODE_INCONSISTENT: _WARNING,
}
"""Catalogued rules that no single message checked with the default settings can break, and
why. (Structural ids found in a schema but unbreakable are listed here too.)"""

UNBREAKABLE_KEYWORDS: Final[dict[str, str]] = {
    "if": (
        "a conditional's `if` only chooses a branch; a message that fails the branch is "
        "reported as the keyword that fails in it (`required`, `not`, ...), as the SOM bus does"
    ),
}
"""Structural keywords no message breaks under any schema, and why."""


def unbreakable(rule: str) -> str | None:
    """Why no message breaks ``rule``, or ``None`` when :func:`invalid_messages` can."""
    found = UNBREAKABLE.get(rule)
    if found is None and rule not in rules.NAMED:
        found = UNBREAKABLE_KEYWORDS.get(rule.partition(".")[2])
    return found


# --- the catalogue, read off the generated schemas ------------------------------------------


def _keywords(
    node: Any,
    scope: str,
    spec: str,
    root: dict[str, Any],
    found: set[str],
    seen: set[tuple[str, str]],
) -> None:
    """Collect ``<scope>.<keyword>`` for each keyword below ``node``, following ``$ref``.

    A definition belongs to the schema file of the model it describes, else to its referrer's.
    """
    if isinstance(node, list):
        for item in node:
            _keywords(item, scope, spec, root, found, seen)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "$defs":
            continue
        if key == "$ref":
            name = value.rpartition("/")[2]
            inner = schema_names(spec).get(name, scope)
            if (name, inner) not in seen:
                seen.add((name, inner))
                _keywords(root["$defs"][name], inner, spec, root, found, seen)
        elif key in ("properties", "patternProperties"):
            for sub in value.values():
                if sub is False:
                    found.add(rules.structural(scope, "false_schema"))
                _keywords(sub, scope, spec, root, found, seen)
        elif key == "if":
            # An `if` only chooses: what it holds never fails a message.
            found.add(rules.structural(scope, "if"))
        else:
            keyword = f"format.{value}" if key == "format" else key
            live = not (key == "additionalProperties" and value is not False)
            if keyword in rules.KEYWORDS and live and keyword != "invalid":
                found.add(rules.structural(scope, keyword))
            _keywords(value, scope, spec, root, found, seen)


@cache
def _structural(spec: str) -> frozenset[str]:
    found: set[str] = set()
    # BabelQueue's dead letter too: its envelope's reference reaches the same keywords.
    for name in SCHEMA_NAMES[spec]:
        document = json_schema(spec, name)
        title = document.get("title", "")
        scope = schema_names(spec).get(title) or rule_schema(spec, name)
        _keywords(document, scope, spec, document, found, set())
    return frozenset(found)


def catalogued_rules(spec: SpecName) -> list[str]:
    """Every rule a ``spec`` message may be judged by, sorted.

    The structural ids its generated schemas can fail, its named rules and those of any message.
    """
    named = {*NAMED_RULES["any"], *NAMED_RULES[spec]}
    return sorted(_structural(spec) | named)


def breakable_rules(spec: SpecName) -> list[str]:
    """The rules of :func:`catalogued_rules` that :func:`invalid_messages` can break."""
    return [rule for rule in catalogued_rules(spec) if unbreakable(rule) is None]


# --- valid messages --------------------------------------------------------------------------


@cache
def _generator(spec: str, name: str, complete: bool = False) -> Generator:
    return Generator(json_schema(spec, name), complete=complete)


def _model_generator(model: Any) -> Generator:
    adapter = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    return Generator(adapter.json_schema(mode="validation"))


def valid_documents(
    spec: SpecName,
    *,
    message_type: str | None = None,
    kind: MatrixKind | None = None,
    urn: str | None = None,
    data: type[BaseModel] | TypeAdapter[Any] | st.SearchStrategy[Any] | None = None,
    router: Any = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Valid messages of ``spec`` as parsed JSON objects; see :func:`valid_messages`."""
    return _documents(spec, message_type, kind, urn, data, router, complete=False)


def _documents(
    spec: str,
    message_type: str | None,
    kind: MatrixKind | None,
    urn: str | None,
    data: Any,
    router: Any,
    *,
    complete: bool,
) -> st.SearchStrategy[dict[str, Any]]:
    _known(spec)
    if spec == "som":
        _message_type_taken(message_type)
        return _som(message_type, complete)
    if spec == "matrix":
        if kind is not None and kind not in _KINDS:
            raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(_KINDS)}")
        return _matrix(kind, complete)
    _urn_taken(urn)
    return _babelqueue(urn, data, router, complete)


_KINDS: Final[tuple[MatrixKind, ...]] = ("request", "response", "error")


def _known(spec: str) -> None:
    if spec not in SPECS:
        raise ValueError(f"unknown spec {spec!r}; expected one of {', '.join(SPECS)}")


def _message_type_taken(message_type: object) -> None:
    """Refuse a ``message_type`` no SOM message carries (its schema's pattern), or a typo.

    An unknown family is drawn as asked (``x.custom``), but not one a known type's typo would
    be (``story.contxt``): every message would quietly hold an open payload instead.
    """
    from ..som._payloads import KNOWN_MESSAGE_TYPES, closest_known_type

    if message_type is None:
        return
    pattern = json_schema("som", "envelope")["properties"]["message_type"]["pattern"]
    if not isinstance(message_type, str) or re.fullmatch(pattern, message_type) is None:
        raise ValueError(f"message_type {message_type!r} is not lower-case and dotted ({pattern})")
    # A typo, not a family of one's own near a known one (`telling.paused`), which SOM takes.
    typo = None if message_type in KNOWN_MESSAGE_TYPES else closest_known_type(message_type, 0.9)
    if typo is not None:
        raise ValueError(
            f"message_type {message_type!r} is none of SOM 1.0's: did you mean {typo!r}? An "
            "unknown family is drawn from a message_type near none of them, such as 'x.custom'"
        )


def _urn_taken(urn: object) -> None:
    """Refuse a ``urn`` no BabelQueue message carries as its ``job``."""
    from ..babelqueue._urn import is_blank

    if urn is None:
        return
    if not isinstance(urn, str) or is_blank(urn) or not is_unicode(urn):
        raise ValueError(f"urn {urn!r} is no identity: a non-blank string of Unicode text")


def valid_messages(
    spec: SpecName,
    *,
    message_type: str | None = None,
    kind: MatrixKind | None = None,
    urn: str | None = None,
    data: type[BaseModel] | TypeAdapter[Any] | st.SearchStrategy[Any] | None = None,
    router: Any = None,
) -> st.SearchStrategy[bytes]:
    """Messages of ``spec`` that ``ek.check(raw, spec=spec)`` accepts, as wire bytes.

    Args:
        spec: ``"babelqueue"``, ``"som"`` or ``"matrix"``.
        message_type: SOM: one family (``"story.context"``) or an unknown one
            (``"x.custom"``, ``"telling.paused"``: an open payload; one a character or two
            off a known type, such as ``"story.contxt"``, is taken for its typo, a
            ``ValueError``); default: every known family and unknown ones.
        kind: Matrix: ``"request"``, ``"response"`` (a success reply) or ``"error"`` (a reply
            whose payload is an error payload); default: all three.
        urn: BabelQueue: the ``job``; default: drawn.
        data: BabelQueue: the ``data`` model (a pydantic model or ``TypeAdapter`` of JSON
            objects, whose JSON Schema drives the values; another is a ``ValueError``) or a
            strategy of ``data`` values; default: any JSON.
        router: BabelQueue: a ``Router``; each message takes one of its URNs and, where the
            route has a ``data`` model, data that model accepts.

    A ``data`` strategy's draws that make no valid message (not an object, NaN, nesting
    past ``max_depth``, a lone surrogate) are filtered out, as ``strategy.filter`` does:
    Hypothesis fails the test where it filters too much.
    """
    documents = valid_documents(
        spec, message_type=message_type, kind=kind, urn=urn, data=data, router=router
    )
    # The reference encoder: orjson's bytes, and a data strategy's integers beyond 64 bits too.
    return documents.map(dumps)


def _som(message_type: str | None, complete: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    from ..som import KNOWN_MESSAGE_TYPES

    generator = _generator("som", "envelope", complete)
    envelope = generator.root
    if message_type is None:
        families = st.sampled_from(sorted(KNOWN_MESSAGE_TYPES))
        unknown = st.from_regex(r"x\.[a-z][a-z0-9_]{0,8}", fullmatch=True)
        types = st.one_of(families, families, families, unknown)
    else:
        types = st.just(message_type)

    def envelopes(chosen: str) -> st.SearchStrategy[dict[str, Any]]:
        pinned = merge(envelope, {"properties": {"message_type": {"const": chosen}}})
        return generator.strategy(pinned)

    return types.flatmap(envelopes)


def _matrix(kind: MatrixKind | None, complete: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    if kind is None:
        return st.one_of([_matrix(k, complete) for k in ("request", "response", "error")])
    if kind == "request":
        generator = _generator("matrix", "request", complete)
        return generator.strategy(generator.root)
    generator = _generator("matrix", "response", complete)
    payload = generator.root["properties"]["payload"]
    chosen = payload["then"] if kind == "error" else {"not": payload["if"]}
    if kind == "response":
        # A success payload is any JSON but an object whose `ok` is false.
        return generator.strategy(
            merge(generator.root, {"properties": {"payload": {"$ref": "#/$defs/JsonValue"}}})
        ).filter(lambda document: not _is_error(document["payload"]))
    return generator.strategy(merge(generator.root, {"properties": {"payload": chosen}}))


def _is_error(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("ok") is False


def _babelqueue(
    urn: str | None, data: Any, router: Any, complete: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    generator = _generator("babelqueue", "envelope", complete)
    if router is not None:
        urns = router.urns()
        if not urns:
            raise ValueError("the router has no route to draw a URN from")
        return st.sampled_from(urns).flatmap(
            lambda chosen: _babelqueue(chosen, route_model(router, chosen), None)
        )
    envelopes = generator.strategy(generator.root)
    if urn is not None:
        # The URN as `job`, the canonical key (`urn` is only an inbound alias).
        envelopes = envelopes.map(
            lambda envelope: {
                "job": urn,
                **{k: v for k, v in envelope.items() if k not in ("job", "urn")},
            }
        )
    if data is None:
        return envelopes
    if not isinstance(data, st.SearchStrategy):
        values = _data_values(data)
        return st.builds(lambda envelope, value: {**envelope, "data": value}, envelopes, values)
    # A caller's strategy may draw what no valid message holds as `data` (a list, NaN, a lone
    # surrogate, nesting past the depth limit): such a draw is filtered out, as the strategy
    # promises messages `check` accepts (Hypothesis says so where it filters too much).
    documents = st.builds(lambda envelope, value: {**envelope, "data": value}, envelopes, data)
    return documents.filter(_accepted)


def _accepted(document: dict[str, Any]) -> bool:
    """Whether ``ek.check`` accepts ``document`` as :func:`valid_messages` writes it."""
    try:
        # The reference's own text, which refuses NaN and the infinities (orjson, whose text
        # `dumps` is otherwise, writes them `null`: another value than the one drawn).
        raw = reference_dumps(document)
    except (TypeError, ValueError, RecursionError):  # no JSON text holds it
        return False
    return check(raw, "babelqueue").ok


def _data_values(model: Any) -> st.SearchStrategy[Any]:
    # Every draw of another model would be refused (`message-envelope.type` at /data).
    require_object_data(model)
    generator = _model_generator(model)
    return generator.strategy(generator.root)


def route_model(router: Any, urn: str) -> Any:
    """The ``data`` model registered for ``urn`` in a ``Router``, or ``None``."""
    route = router._routes[urn]  # the Router keeps no public view of its parse models
    parse = route.parse
    if parse is None:
        return None
    return parse.model_fields["data"].annotation


# --- invalid messages ------------------------------------------------------------------------

# Where a spec's message holds free JSON, so a number or nesting can be put there.
_OPEN: Final[dict[str, tuple[str, ...]]] = {
    "babelqueue": ("zz_extra",),
    "som": ("_actors", "zz_extra"),
    "matrix": ("zz_extra",),
}
_NON_FINITE: Final = "__envelopekit_non_finite__"
_BEYOND_INT64: Final = "__envelopekit_beyond_int64__"


def invalid_messages(
    spec: SpecName,
    rule: str,
    *,
    message_type: str | None = None,
    kind: MatrixKind | None = None,
) -> st.SearchStrategy[bytes]:
    """Messages ``ek.check(raw, spec=spec)`` refuses with ``rule`` among their violations.

    Each is a valid message (:func:`valid_messages`) with one change: the smallest that breaks
    ``rule``, at a place of the message where the rule applies (for a structural id, any node
    of that schema file carrying that keyword). That one change may break other keywords at
    the same place too, which ``check`` reports beside ``rule`` (a string that misses its
    ``pattern`` inside an ``anyOf`` breaks the ``anyOf`` too, ``telling-event.pattern`` beside
    ``telling-event.anyOf``): assert ``rule in verdict.rules()``, not that it is the only one.

    ```python
    from hypothesis import strategies as st
    from envelopekit.testing import invalid_messages

    strategy = invalid_messages("som", rule="story-context.enum")   # bytes breaking that rule
    assert isinstance(strategy, st.SearchStrategy)
    ```

    Raises:
        ValueError: for a rule that is not in :func:`catalogued_rules` for ``spec``, or that no
            message can break (:data:`UNBREAKABLE` says why).
    """
    _known(spec)
    if rule not in catalogued_rules(spec):
        raise ValueError(f"{rule!r} is not a rule a {spec} message is judged by")
    why = unbreakable(rule)
    if why is not None:
        raise ValueError(f"no {spec} message breaks {rule!r}: {why}")
    if rule in rules.NAMED:
        return _named(spec, rule, message_type, kind)
    schema, _, keyword = rule.partition(".")
    _judged_by(spec, rule, schema, message_type, kind)
    documents = _documents(
        spec, message_type, kind or _kind(schema), None, None, None, complete=True
    )
    if spec == "som" and message_type is None and schema != "envelope":
        from ..som import PAYLOAD_MODELS

        families = sorted(t for t, m in PAYLOAD_MODELS.items() if m.__schema_name__ == schema)
        documents = st.sampled_from(families).flatmap(lambda t: _som(t, complete=True))
    return _broken(spec, documents, schema, keyword)


# The Matrix kinds whose messages a schema judges.
_KINDS_JUDGED: Final[dict[str, tuple[str, ...]]] = {
    "request": ("request",),
    "response": ("response", "error"),
    "error-payload": ("error",),
}


def _judged_by(
    spec: str, rule: str, schema: str, message_type: str | None, kind: MatrixKind | None
) -> None:
    """Refuse a ``message_type`` or ``kind`` whose messages ``schema`` never judges."""
    if spec == "som" and message_type is not None and schema != "envelope":
        from ..som import PAYLOAD_MODELS

        family = PAYLOAD_MODELS.get(message_type)
        if family is None or family.__schema_name__ != schema:
            judged = "no schema" if family is None else f"{family.__schema_name__}.json"
            raise ValueError(
                f"no {message_type} message breaks {rule!r}: its payload is judged by {judged}"
            )
    if spec == "matrix" and kind is not None and kind not in _KINDS_JUDGED[schema]:
        raise ValueError(f"no {kind} message breaks {rule!r}: {schema}.json does not judge it")


def _kind(schema: str) -> MatrixKind | None:
    return {"request": "request", "error-payload": "error"}.get(schema)  # type: ignore[return-value]


_REPLY: Final = {"properties": {"op": {"const": "$reply"}}, "required": ["op"]}
# Paths whose failure the model reports under a named rule, not a structural one.
_CLAIMED: Final[dict[str, frozenset[tuple[str | int, ...]]]] = {
    "babelqueue": frozenset({("job",), ("urn",), ("meta", "schema_version")}),
    "som": frozenset({("som_version",)}),
    "matrix": frozenset(),
}


def _root(spec: str, document: Mapping[str, Any]) -> tuple[str, str, Any]:
    """The generated schema judging ``document``, its rule-id scope, and what keeps it so."""
    if spec == "matrix":
        if document.get("op") == "$reply":
            return "response", rule_schema(spec, "response"), _REPLY
        return "request", rule_schema(spec, "request"), {"not": _REPLY}
    name = SCHEMA_NAMES[spec][0]  # the envelope's
    return name, rule_schema(spec, name), True


def _broken(
    spec: str, documents: st.SearchStrategy[dict[str, Any]], schema: str, keyword: str
) -> st.SearchStrategy[bytes]:
    @st.composite
    def broken(draw: st.DrawFn) -> bytes:
        document = draw(documents)
        name, scope, guard = _root(spec, document)
        generator = _generator(spec, name)
        found = list(sites(generator, document, scope, spec, guards=(((), guard),)))
        candidates = changes(document, found, schema, keyword, generator.root, _CLAIMED[spec])
        if not candidates:
            reject()
        change = draw(st.sampled_from(candidates))
        if isinstance(change.value, Fill):
            change = Change(change.path, draw(generator.strategy(change.value.schema)))
        return orjson.dumps(change.apply(document))

    return broken()


def _named(
    spec: SpecName, rule: str, message_type: str | None, kind: MatrixKind | None
) -> st.SearchStrategy[bytes]:
    documents = valid_documents(spec, message_type=message_type, kind=kind)
    settings = get_settings()
    if rule == rules.JSON_INVALID:
        return documents.map(lambda d: orjson.dumps(d)[:-1])
    if rule == rules.MESSAGE_TOO_LARGE:
        limit = settings.max_message_bytes
        own = spec_named(spec).max_bytes
        if own is not None:
            limit = min(limit, own)
        return documents.map(orjson.dumps).map(lambda raw: raw + b" " * (limit + 1 - len(raw)))
    if rule == rules.MESSAGE_TOO_DEEP:
        deep: Any = 0
        for _ in range(settings.max_depth + 1):
            deep = [deep]
        return documents.map(lambda d: orjson.dumps(_open(spec, d, deep)))
    if rule == rules.NUMBER_NON_FINITE:
        return documents.map(lambda d: _spelled(spec, d, _NON_FINITE, b"NaN"))
    if rule == rules.NUMBER_OUT_OF_RANGE:
        return documents.map(lambda d: _spelled(spec, d, _BEYOND_INT64, str(2**63).encode()))
    change = _NAMED_CHANGES.get(rule)
    if change is None:  # pragma: no cover - the catalogue test lists every rule
        raise ValueError(f"no change breaks {rule!r}")
    if rule == rules.PAYLOAD_MESSAGE_TYPE_MISMATCH:
        if message_type is not None and message_type not in _SIBLINGS:
            raise ValueError(
                f"no {message_type} message breaks {rule!r} alone: its payload schema refuses "
                "another message_type first (a const, an enum, the conditionals of each type); "
                f"those of {', '.join(sorted(_SIBLINGS))} can carry one"
            )
        # Complete payloads carry what the sibling type requires too, so only the type differs.
        chosen = (
            st.sampled_from(sorted(_SIBLINGS)) if message_type is None else st.just(message_type)
        )
        documents = chosen.flatmap(lambda t: _som(t, complete=True))
    return documents.map(lambda d: orjson.dumps(change(d)))


def _open(spec: str, document: dict[str, Any], value: Any) -> dict[str, Any]:
    path = _OPEN[spec]
    if spec == "matrix":
        # A request and a reply are closed; their payload is free JSON (an error payload's
        # `details`).
        error = _is_error(document.get("payload"))
        path = ("payload", "details") if error else ("payload",)
    if spec == "som":
        actors = dict(document.get("_actors", {}))
        actors["zz_extra"] = value
        return {**document, "_actors": actors}
    changed: dict[str, Any] = Change(path, value).apply(document)
    return changed


def _spelled(spec: str, document: dict[str, Any], marker: str, literal: bytes) -> bytes:
    """The document with a number JSON can spell but orjson cannot write in an open place."""
    raw = orjson.dumps(_open(spec, document, marker))
    return raw.replace(orjson.dumps(marker), literal)


# Each type whose complete payload also meets the conditionals of a sibling type, so that only
# the type differs: `telling.ended` needs the `exposure_end` an exposed telling has (and an
# ended one carries), `link.gate_changed` refuses nothing a committed link carries (and the
# reverse). Any other type's payload schema refuses another type first.
_SIBLINGS: Final = {
    "telling.exposed": "telling.ended",
    "telling.ended": "telling.exposed",
    "link.committed": "link.gate_changed",
    "link.gate_changed": "link.committed",
}


def _mismatched(document: dict[str, Any]) -> dict[str, Any]:
    sibling = _SIBLINGS[document["message_type"]]
    return {**document, "payload": {**document["payload"], "message_type": sibling}}


_NAMED_CHANGES: Final[dict[str, Any]] = {
    rules.URN_MISSING: lambda d: {k: v for k, v in d.items() if k not in ("job", "urn")},
    rules.SCHEMA_VERSION_UNSUPPORTED: lambda d: {**d, "meta": {**d["meta"], "schema_version": 2}},
    rules.SOM_VERSION_PRE_1_0: lambda d: {**d, "som_version": "0.3.2"},
    rules.SOM_VERSION_UNSUPPORTED_MAJOR: lambda d: {**d, "som_version": "2.0.0"},
    rules.SOM_VERSION_UNSUPPORTED_MINOR: lambda d: {**d, "som_version": "1.1.0"},
    rules.PAYLOAD_MESSAGE_TYPE_MISMATCH: _mismatched,
}
