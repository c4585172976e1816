"""A second validator for :class:`SomEnvelope`, choosing the payload's model in Rust.

The envelope's ``payload`` field picks its model from the sibling ``message_type`` through a
wrap validator and a callable discriminator. Both are Python functions, and pydantic-core
hands a Python function its input as Python objects: in JSON mode the whole payload is first
built as dicts and lists, then validated in Python mode. For the beat-6 example that
round-trip costs about as much as validating the envelope's own fields and is a third of the
parse (bench/NOTES-som-matrix.md).

This validator is the same schema with the dispatch moved up one level: a tagged union of
the envelope, keyed by the JSON object's own ``message_type``, whose choice for each known
message type is the envelope schema with ``payload`` typed as that family's model. The JSON
is then validated in one pass, in JSON mode, with no Python between the envelope and the
payload. It is only ever a fast path: a message it rejects (or an unknown ``message_type``,
which it has no choice for) is validated again by the model's own validator, so errors,
their locations and every verdict are the model's own.

Being only a fast path, it may also accept less than the model: a field can be *narrowed* to
the value nearly every message carries (so a Python validator that only matters for the other
values is not called), and a model validator can be *left out* when the caller checks what it
checks on the result. Either way what it accepts, the model accepts with the same result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, Generic, NamedTuple, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic.config import ExtraValues
from pydantic_core import CoreConfig, CoreSchema, SchemaValidator, core_schema

from .._failfast import TooLarge, fail_fast_validator, fresh_validator
from .._json import FAST_PYTHON, plain_within
from .._text import json_branch
from ._twin import Twin

__all__ = [
    "DispatchingSchema",
    "FastPath",
    "dispatching_schema",
    "dispatching_validator",
]  # internal: used by ._envelope only

M = TypeVar("M", bound=BaseModel)


def _none(raw: str | bytes | bytearray) -> None:
    """The fast path of a model whose schema is not the expected shape: never taken."""
    return None


# Schema nodes that wrap a model's schema without changing what a field is validated with.
_FUNCTIONS = frozenset({"function-after", "function-before", "function-wrap"})
_WRAPPERS = _FUNCTIONS | {"model"}


def _rewritten(
    node: dict[str, Any], fields: Mapping[str, CoreSchema], dropped: Collection[Any] = ()
) -> dict[str, Any] | None:
    """``node`` with ``fields`` re-typed and the model validators in ``dropped`` taken out.

    Only the dicts on the path down to the model's fields are copied, without their ``ref``, so
    that several rewritten copies can stand in one schema.
    """
    kind = node.get("type")
    if kind in _FUNCTIONS and node["function"]["function"] in dropped:
        return _rewritten(node["schema"], fields, dropped)
    copy = dict(node)
    copy.pop("ref", None)
    if kind == "model-fields":
        retyped = dict(copy["fields"])
        for name, schema in fields.items():
            if name not in retyped:
                return None
            retyped[name] = {**retyped[name], "schema": schema}
        copy["fields"] = retyped
        return copy
    if kind in _WRAPPERS and isinstance(copy.get("schema"), dict):
        found = _rewritten(copy["schema"], fields, dropped)
        if found is None:
            return None
        copy["schema"] = found
        return copy
    return None


def _field_choices(node: dict[str, Any], field: str) -> dict[Any, Any] | None:
    """The choices of the tagged union ``field`` is validated with (under its wrap validator)."""
    while node.get("type") in _WRAPPERS and node.get("type") != "model-fields":
        node = node["schema"]
        if node.get("type") == "model-fields":
            break
    if node.get("type") != "model-fields" or field not in node["fields"]:
        return None
    schema = node["fields"][field]["schema"]
    while schema.get("type") in _FUNCTIONS:
        schema = schema["schema"]
    if schema.get("type") != "tagged-union":
        return None
    choices: dict[Any, Any] = schema["choices"]
    return choices


def _field_read_from(fields_node: dict[str, Any], key: str) -> str | None:
    """The model field validated from the input's ``key`` (its name or alias), if any."""
    if fields_node.get("type") != "model-fields":
        return None
    for name, member in fields_node["fields"].items():
        if member.get("validation_alias", name) == key:
            return cast("str", name)
    return None


def _takes(schema: dict[str, Any], tag: str) -> bool:
    """Whether ``schema`` is a plain ``str`` schema (no hook) that accepts ``tag``."""
    if schema.get("type") != "str" or set(schema) - {"type", "strict", "pattern", "metadata"}:
        return False
    pattern = schema.get("pattern")
    return pattern is None or re.search(pattern, tag) is not None


def _own_tag(node: dict[str, Any], field: str, tag: str) -> dict[str, Any] | None:
    """A payload schema whose own ``field``, where it has one, can only be ``tag``.

    ``None`` when the payload's ``field`` cannot be ``tag`` at all.
    """
    kind = node.get("type")
    if kind in _WRAPPERS and kind != "model-fields":
        inner = _own_tag(node["schema"], field, tag)
        return None if inner is None else {**node, "schema": inner}
    if kind != "model-fields" or field not in node["fields"]:
        return node
    member = node["fields"][field]
    schema = member["schema"]
    path: list[dict[str, Any]] = []
    while schema.get("type") in ("default", "missing-sentinel"):
        path.append(schema)
        schema = schema["schema"]
    if schema.get("type") != "literal" or tag not in schema["expected"]:
        return None
    narrowed: dict[str, Any] = dict(core_schema.literal_schema([tag]))
    for outer in reversed(path):
        narrowed = {**outer, "schema": narrowed}
    return {**node, "fields": {**node["fields"], field: {**member, "schema": narrowed}}}


_PATTERN_REF: Final = "envelopekit.som._fast.pattern"


def _shared_patterns(top: core_schema.DefinitionsSchema) -> core_schema.DefinitionsSchema:
    """``top`` with one definition per distinct ``str`` schema with a pattern, referred to.

    pydantic-core compiles a regex for every schema node, each with its own match cache; the
    same format in forty places (a UUID in every choice and model) is forty regexes, each cold
    when its field comes round. A reference to one shared node is one regex, kept warm by every
    field that uses it (2-3% of a small family's parse). In JSON mode a reference to a
    definition costs no recursion guard.
    """
    refs: dict[tuple[tuple[str, Any], ...], str] = {}
    shared: list[CoreSchema] = []
    # The choices share most of their nodes (each is the envelope re-typed along one path):
    # each node is rewritten once, by identity (the tree is alive throughout).
    done: dict[int, Any] = {}

    def walk(node: Any) -> Any:
        if not isinstance(node, (dict, list)):
            return node
        found = done.get(id(node))
        if found is None:
            found = done[id(node)] = rewrite(node)
        return found

    def rewrite(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if node.get("type") == "str" and "pattern" in node and "ref" not in node:
            key = tuple(sorted((k, v) for k, v in node.items() if k != "metadata"))
            if key not in refs:
                refs[key] = f"{_PATTERN_REF}{len(refs)}"
                shared.append(cast("CoreSchema", {**dict(key), "ref": refs[key]}))
            return core_schema.definition_reference_schema(refs[key])
        return {k: v if k == "metadata" else walk(v) for k, v in node.items()}

    return core_schema.definitions_schema(walk(top["schema"]), [*walk(top["definitions"]), *shared])


class DispatchingSchema(NamedTuple):
    """The core schema of a :func:`dispatching_validator`, and what building it needs."""

    schema: CoreSchema
    models: set[type]
    """The model classes in it, built anew (``envelopekit._failfast.fresh_validator``)."""
    config: CoreConfig | None


def dispatching_validator(
    model: type[BaseModel],
    field: str,
    discriminator: str,
    tags: Iterable[str],
    *,
    narrowed: Mapping[str, CoreSchema] | None = None,
    dropped: Collection[str] = (),
    fail_fast: bool = False,
) -> SchemaValidator | None:
    """A validator of ``model`` whose ``field`` is typed by the input's ``discriminator`` key.

    Its schema is :func:`dispatching_schema`'s, which takes the same arguments.

    Args:
        model: the model; its own core schema is the starting point.
        field: the field whose schema is a tagged union under a wrap validator.
        discriminator: the input key whose value picks the union's choice.
        tags: the values of ``discriminator`` the fast path takes.
        narrowed: fields re-typed for the fast path only (see :func:`dispatching_schema`).
        dropped: the model validators left out (see :func:`dispatching_schema`).
        fail_fast: stop each array at its first failing item (``envelopekit._failfast``).

    Returns:
        The validator, or ``None`` when the model's schema is not the expected shape (the
        caller then uses the model's own validator only).
    """
    built = dispatching_schema(
        model, field, discriminator, tags, narrowed=narrowed, dropped=dropped
    )
    if built is None:
        return None
    if fail_fast:
        return fail_fast_validator(built.schema, built.config)
    return fresh_validator(built.schema, built.models, built.config)


def dispatching_schema(
    model: type[BaseModel],
    field: str,
    discriminator: str,
    tags: Iterable[str],
    *,
    narrowed: Mapping[str, CoreSchema] | None = None,
    dropped: Collection[str] = (),
) -> DispatchingSchema | None:
    """The schema of :func:`dispatching_validator`: ``field`` typed by ``discriminator``'s value.

    It is the model's own with the Python hooks :mod:`._twin` reads replaced by Rust schemas;
    in each choice the member read from ``discriminator`` is the tag itself, and the payload's
    own ``discriminator`` member (where it has one) is narrowed to the tag, so that it agrees
    with the input's. Each distinct pattern is one shared definition
    (:func:`_shared_patterns`).

    Args:
        model: the model; its own core schema is the starting point.
        field: the field whose schema is a tagged union under a wrap validator.
        discriminator: the input key whose value picks the union's choice.
        tags: the values of ``discriminator`` the fast path takes.
        narrowed: fields re-typed for the fast path only; each schema must accept a subset of
            what the field's own schema accepts, with the same result.
        dropped: names of the model's own ``model_validator``s to leave out; what they check
            must be what the narrowing checks.

    Returns:
        The schema, or ``None`` when the model's schema is not the expected shape.
    """
    schema: dict[str, Any] = dict(model.__pydantic_core_schema__)
    definitions: list[CoreSchema] = []
    if schema.get("type") == "definitions":
        definitions = list(schema["definitions"])
        schema = schema["schema"]
    # The fast path reads JSON: the branch of a message model's schema that JSON runs.
    schema = dict(json_branch(cast("CoreSchema", schema)))
    if schema.get("type") == "definition-ref":
        return None
    choices = _field_choices(schema, field)
    node = schema
    while node.get("type") != "model" and node.get("type") in _WRAPPERS:
        node = node["schema"]
    if choices is None or node.get("type") != "model":
        return None
    validators = model.__pydantic_decorators__.model_validators
    if any(name not in validators for name in dropped):
        return None
    functions = [validators[name].func for name in dropped]
    config = node.get("config")
    by_ref = {d.get("ref"): d for d in definitions}
    # The choices' definitions are only ever reached through the field this replaces.
    payloads = {c["schema_ref"] for c in choices.values() if c.get("type") == "definition-ref"}
    own_key = _field_read_from(node["schema"], discriminator)
    twin = Twin()
    base = twin.schema(cast("CoreSchema", schema))
    by_tag: dict[str, CoreSchema] = {}
    for tag in tags:
        if tag not in choices:
            return None
        choice = choices[tag]
        if choice.get("type") == "definition-ref":
            choice = by_ref[choice["schema_ref"]]
        payload = _own_tag(dict(twin.schema(choice, tag)), discriminator, tag)
        if payload is None:
            return None
        fields = {**(narrowed or {}), field: cast("CoreSchema", payload)}
        if own_key is not None and _takes(node["schema"]["fields"][own_key]["schema"], tag):
            # The union chose this tag by the same member: it can only be the tag (a literal
            # lookup, where the field's own schema would run its pattern again).
            fields[own_key] = core_schema.literal_schema([tag])
        variant = _rewritten(dict(base), fields, functions)
        if variant is None:
            return None
        by_tag[tag] = cast("CoreSchema", variant)
    # A rejected message is handed back as None, not raised: the errors would be built as a
    # Python ValidationError (with the whole input as Python objects) only to be dropped.
    union = core_schema.with_default_schema(
        core_schema.tagged_union_schema(by_tag, discriminator), default=None, on_error="default"
    )
    kept = [twin.definition(d) for d in definitions if d.get("ref") not in payloads]
    top = _shared_patterns(core_schema.definitions_schema(union, [*kept, *twin.definitions]))
    return DispatchingSchema(top, {model} | twin.models, config)


class FastPath(Generic[M]):
    """A model's fast path: a :func:`dispatching_validator` tried first, built on first use.

    Whatever it does not accept (``None`` from :meth:`validate_json`) the caller validates with
    the model's own validator, which then decides, and reports, exactly as without it.
    """

    def __init__(
        self,
        model: type[M],
        field: str,
        discriminator: str,
        tags: Iterable[str],
        *,
        narrowed: Mapping[str, CoreSchema],
        dropped: Collection[str],
    ) -> None:
        """A fast path for ``model``; the arguments are :func:`dispatching_validator`'s."""
        self._arguments = (model, field, discriminator, tuple(tags))
        self._narrowed = narrowed
        self._dropped = dropped
        self._fast: list[SchemaValidator | None] = []
        self.parse: Callable[[str | bytes | bytearray], M | None] = self._first_parse
        """``validate_json`` with no option: the fast validator's own bound method once built.

        Raises ``ValidationError`` for input that is not JSON (for the model to report).
        """

    def _built(self) -> SchemaValidator | None:
        # Built on first use, once: a list, so that the read needs no lock.
        if not self._fast:
            self._fast.append(self.validator())
        return self._fast[0]

    def _first_parse(self, raw: str | bytes | bytearray) -> M | None:
        fast = self._built()
        self.parse = _none if fast is None else fast.validate_json
        return self.parse(raw)

    def schema(self) -> DispatchingSchema | None:
        """The fast validator's schema (``None`` when the model's is not the expected shape)."""
        return dispatching_schema(*self._arguments, narrowed=self._narrowed, dropped=self._dropped)

    def validator(self, *, fail_fast: bool = False) -> SchemaValidator | None:
        """A new fast validator (``None`` when the model's schema is not the expected shape)."""
        return dispatching_validator(
            *self._arguments, narrowed=self._narrowed, dropped=self._dropped, fail_fast=fail_fast
        )

    def validate_json(
        self,
        raw: str | bytes | bytearray,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        context: Any | None = None,
    ) -> M | None:
        """The model ``raw`` validates to on the fast path, or ``None`` when it is not taken.

        No hook left in the fast validator reads the context, so it is not passed on. Nor is
        ``strict=False``: it would make the Rust schemas standing for Python hooks lax, where
        the hooks are not; the schema's own strictness accepts a subset of what lax does.
        """
        try:
            if strict is not True and extra is None:
                return self.parse(raw)
            fast = self._built()
            if fast is None:
                return None
            found: M | None = fast.validate_json(raw, strict=strict or None, extra=extra)
        except ValidationError:  # not JSON: the model's validator reports it
            return None
        return found

    def validate_python(
        self,
        value: dict[str, Any],
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        encoded: bytes | None = None,
    ) -> M | TooLarge | None:
        """``validate_json`` for a dict (``model_validate``), or ``None`` when not taken.

        Taken only for what :func:`~envelopekit._json.plain_within` passes, given
        ``encoded`` (plain JSON data; ``TOO_LARGE`` over ``FULL_REPORT_BYTES``): not a
        subclass of a JSON type, such as an enum member the hooks refuse and the Rust schemas
        would take.
        """
        text = plain_within(value, encoded)
        if not isinstance(text, bytes):
            return text
        fast = self._built()
        if fast is None:
            return None
        # The context tells the free-form validators their input passed the probe above.
        found: M | None = (
            fast.validate_python(value, context=FAST_PYTHON)
            if strict is not True and extra is None
            else fast.validate_python(
                value, strict=strict or None, extra=extra, context=FAST_PYTHON
            )
        )
        return found
