"""The fast path's reading of the SOM models' Python hooks as Rust schemas.

A Python hook costs far more than the check it makes once pydantic-core calls it: the call
itself, the ``ValidationInfo``, the Python objects handed over. The SOM models need about
twenty on the beat-6 story (JSON Schema ``integer`` and ``number``, vendor enums, ``anyOf``
and ``if``/``then`` rules, NaN in free-form JSON), and they were most of what validating one
cost over pydantic-core's own floor (``BENCHMARKS.md``).

:func:`twin` rewrites a copy of a core schema for the fast path (:mod:`._fast`) with each hook
this module knows replaced by core-schema constructs pydantic-core checks in Rust. Each
replacement accepts a *subset* of what the hook accepts, with the same result; whatever it
refuses goes to the model's own validator, which decides and reports exactly as without the
fast path (so every rule id, pointer and message stays the model's). A hook with no entry
here is kept, and still runs.

* ``integer`` is a strict int (``7.0``, a float with a zero fraction, goes to the model);
  ``number`` an int, else a finite float, so an int stays an int.
* A vendor enum is its values as a literal, then the ``x-`` pattern.
* Free-form JSON (objects, arrays, an open model's unknown members): a string in Rust, any
  other value read once as ``Any`` and checked by its type (a float finite, a non-empty array
  or object walked once in Python).
* ``anyOf`` of ``required`` is a union of the model with each branch's members required; a
  conditional on a member's value (an ``if``/``then`` on a ``const``) a tagged union on that
  member, each choice the model with what that value requires or refuses. On the payload of
  a family with several message types, the envelope's own message type picks the choice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast, get_args, get_origin

from pydantic import AfterValidator, BaseModel, PlainValidator
from pydantic_core import CoreSchema, core_schema

from .._json import BY_TEXT, finite_json, written_plain
from ._story_context import (
    CLAIM_KEYS,
    Assertion,
    _tags_unique_as_sent,  # pyright: ignore[reportPrivateUsage]
    _unique_tags,  # pyright: ignore[reportPrivateUsage]
)
from ._types import (
    ANY_OF_REQUIRED,
    CONDITIONALS,
    EXTENSION_KEY_PATTERN,
    TIMERANGE_PATTERN,
    VENDOR_ENUMS,
    VENDOR_VALUE_PATTERN,
    Conditional,
    ExtensionKey,
    Integer,
    NonNegativeInteger,
    Number,
    SomOpenModel,
    StringOrObject,
    TimeRange,
    UnitNumber,
)

__all__ = ["Twin"]  # internal: used by ._fast only

Node = dict[str, Any]


def _hooks(alias: Any, kind: type[PlainValidator] | type[AfterValidator]) -> list[Any]:
    """The functions of the ``kind`` validators a type alias carries (``Annotated`` metadata)."""
    return [metadata.func for metadata in get_args(alias)[1:] if isinstance(metadata, kind)]


def _unbound(function: Any) -> Any:
    # A classmethod field validator is in the schema bound to its class.
    return getattr(function, "__func__", function)


(_integer,) = _hooks(Integer, PlainValidator)
(_number,) = _hooks(Number, PlainValidator)
(_time_range,) = _hooks(TimeRange, PlainValidator)
(_string_or_object,) = _hooks(StringOrObject, PlainValidator)
(_non_negative,) = _hooks(NonNegativeInteger, AfterValidator)
(_unit,) = _hooks(UnitNumber, AfterValidator)
(_extension_key,) = _hooks(ExtensionKey, AfterValidator)

JSON_REF: Final = "envelopekit.som._twin.json"
"""The ``ref`` of the recursive finite-JSON schema the fast validator defines."""

_JSON: Final[CoreSchema] = core_schema.definition_reference_schema(JSON_REF)

# Nothing validates against it: a member the rule refuses, present, fails in Rust.
_NEVER: Final[CoreSchema] = core_schema.int_schema(strict=True, gt=0, lt=0)

# A longer flat container is walked: item by item, Rust's reading (a `type` call and a copy)
# costs a little more than the walk, which only a short container's saved call outweighs.
_FLAT_AT_MOST: Final = 64

_STRICT_INT: Final = core_schema.int_schema(strict=True)
_FINITE_FLOAT: Final = core_schema.float_schema(strict=True, allow_inf_nan=False)


def json_definition() -> CoreSchema:
    """Any JSON value with finite numbers: what ``finite_json`` lets through.

    A string, the most common free-form value, is a strict ``str`` in Rust and nothing else.
    Any other value is read as ``Any`` reads it, once, and its Python object picks its check by
    its type (a tagged union on ``type``: a C call, never a Python frame): an int or a bool as
    it is, a float if finite. An array or object of scalars only (empty too) is read in Rust,
    its items checked the same way (a new list or dict of the same items, in the same order);
    any other is walked once by :func:`_finite_container`, whatever its depth. So a flat
    container (an extension's object of scalars, a claim) costs no Python call, and a nested
    one the Rust reading up to its first container item, then one walk.

    Only the ``str`` choice can fail, before the rest, and only at this level: pydantic-core
    copies the input into a failed choice's error, so a container is copied once, here, and
    never level by level (the first design, a union of the JSON types tried at every level,
    copied each container into the error of every choice that failed on it: 16 KB of nested
    arrays in ``_actors`` cost 10 times the model's own reading). After ``Any`` a choice that
    fails costs no copy (a Python object's error holds a reference), and none fails.
    """
    # An item of a flat array or object (a Python object already: `Any` read it): a scalar.
    scalar = core_schema.nullable_schema(
        core_schema.tagged_union_schema(
            {
                str: core_schema.any_schema(),
                int: core_schema.any_schema(),
                bool: core_schema.any_schema(),
                float: _FINITE_FLOAT,
            },
            discriminator=type,
        )
    )
    by_type = core_schema.tagged_union_schema(
        {
            int: core_schema.any_schema(),
            bool: core_schema.any_schema(),
            float: _FINITE_FLOAT,
            dict: _flat_or_walked(
                core_schema.dict_schema(
                    values_schema=scalar, max_length=_FLAT_AT_MOST, fail_fast=True
                )
            ),
            list: _flat_or_walked(
                core_schema.list_schema(scalar, max_length=_FLAT_AT_MOST, fail_fast=True)
            ),
        },
        discriminator=type,
    )
    return core_schema.nullable_schema(
        core_schema.union_schema(
            [
                core_schema.str_schema(strict=True),
                core_schema.chain_schema([core_schema.any_schema(), by_type]),
            ],
            mode="left_to_right",
        ),
        ref=JSON_REF,
    )


def _flat_or_walked(flat: CoreSchema) -> CoreSchema:
    """A container read by ``flat`` in Rust when it holds only scalars, else walked once.

    ``flat`` stops at its first item that is not a scalar (``fail_fast``), whose error holds
    a reference to the Python object, not a copy; a container it refuses is not empty.
    """
    return core_schema.union_schema([flat, _WALKED], mode="left_to_right")


def _finite_container(value: Any) -> Any:
    """``value``, a JSON array or object as ``Any`` reads it, if every float under it is finite.

    One of ``BY_TEXT`` members or more is first read from the text orjson writes of it
    (:func:`written_plain`), and walked only where that does not show it finite.

    Raises:
        ValueError: for a float that is not finite.
    """
    if len(value) >= BY_TEXT and written_plain(value, integers=False) is not None:
        return value
    stack: list[Any] = [value]
    while stack:
        container = stack.pop()
        items: Any = container.values() if type(container) is dict else container
        for item in items:
            kind = type(item)
            if kind is float:
                if item - item != 0.0:  # inf - inf and nan - nan are both nan
                    raise ValueError("a number that is not finite")
            elif (kind is dict or kind is list) and item:
                stack.append(item)
    return value


_WALKED: Final = core_schema.no_info_plain_validator_function(_finite_container)


def _number_schema(ge: int | None = None, le: int | None = None) -> CoreSchema:
    return core_schema.union_schema(
        [
            core_schema.int_schema(strict=True, ge=ge, le=le),
            core_schema.float_schema(strict=True, allow_inf_nan=False, ge=ge, le=le),
        ],
        mode="left_to_right",
    )


def _time_range_schema() -> CoreSchema:
    one = core_schema.str_schema(strict=True, pattern=TIMERANGE_PATTERN)
    return core_schema.union_schema(
        [one, core_schema.list_schema(one, strict=True)], mode="left_to_right"
    )


def _vendor_schema(values: tuple[str, ...]) -> CoreSchema:
    # The listed values by a hash lookup (a JSON string only); only an `x-` value runs a regex.
    return core_schema.union_schema(
        [
            core_schema.literal_schema(list(values)),
            core_schema.str_schema(strict=True, pattern=VENDOR_VALUE_PATTERN),
        ],
        mode="left_to_right",
    )


# A plain validator -> the schema standing for it.
_PLAIN: Final[dict[Callable[..., Any], CoreSchema]] = {
    _integer: _STRICT_INT,
    _number: _number_schema(),
    _time_range: _time_range_schema(),
    _string_or_object: core_schema.union_schema(
        [
            core_schema.str_schema(strict=True),
            core_schema.dict_schema(core_schema.str_schema(strict=True), _JSON, strict=True),
        ],
        mode="left_to_right",
    ),
}


def _plain(function: Callable[..., Any]) -> CoreSchema | None:
    """The schema standing for a plain validator; a vendor enum's, read from its values."""
    found = _PLAIN.get(function)
    if found is None and function in VENDOR_ENUMS:
        return _vendor_schema(VENDOR_ENUMS[function])
    return found


# An after-validator over the plain validator it is always stacked on -> the schema for both.
_AFTER_PLAIN: Final[dict[Callable[..., Any], tuple[Callable[..., Any], CoreSchema]]] = {
    _non_negative: (_integer, core_schema.int_schema(strict=True, ge=0)),
    _unit: (_number, _number_schema(ge=0, le=1)),
}


def _free_form(node: Node) -> Node | None:
    """A ``dict``/``list`` schema of ``any`` with finite JSON in place of ``any``."""
    kind = node.get("type")
    if kind == "dict" and node.get("values_schema", {"type": "any"}).get("type") == "any":
        return {**node, "values_schema": _JSON}
    if kind == "list" and node.get("items_schema", {"type": "any"}).get("type") == "any":
        return {**node, "items_schema": _JSON}
    return None


def _keys_of_extensions(node: Node) -> Node | None:
    """The ``str`` schema of extension keys with the key pattern, in Rust."""
    if node.get("type") != "str" or "pattern" in node:
        return None
    return {**node, "pattern": EXTENSION_KEY_PATTERN}


def _in_json(rust: Node, hook: Node) -> Node:
    """``rust`` for JSON input, the hook itself (without its ``ref``) for Python input.

    The readings of scalars and of free-form JSON hold for JSON only: in Python mode a strict
    ``str``, ``int`` or ``float`` schema takes a subclass (an enum member), which the hooks
    refuse or keep as it is.
    """
    python = {key: value for key, value in hook.items() if key != "ref"}
    return cast(
        "Node",
        core_schema.json_or_python_schema(cast("CoreSchema", rust), cast("CoreSchema", python)),
    )


@dataclass(frozen=True)
class Shape:
    """One branch of a conditional rule: members it requires, refuses, and the keys they hold.

    ``holding`` pairs a required member, an object, with the keys that object must have.
    """

    required: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    holding: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Rule:
    """A model's conditional validator (or its field validators), read as a union of its shapes.

    ``by`` names the member whose value picks the shape (a tagged union); ``"@message_type"``
    is the envelope's message type, known when the payload schema is built for it. Without
    ``by``, the shapes are ``anyOf`` branches tried in order.
    """

    shapes: Mapping[str, Shape]
    by: str | None = None
    fields: tuple[str, ...] = ()
    """The members whose field validators the rule replaces (none: a model validator)."""


_ENVELOPE_TYPE: Final = "@message_type"


def _field_validators(model: type[Any], *names: str) -> list[Callable[..., Any]]:
    """The functions of ``model``'s field validators ``names``, as its schema holds them."""
    validators = model.__pydantic_decorators__.field_validators
    return [_unbound(validators[name].func) for name in names]


# The rules no factory of `._types` declares; the others are read from their declarations.
_RULES: Final[dict[Callable[..., Any], Rule]] = {
    # `_claim_shape`: the keys `claim` holds for each assertion type.
    **dict.fromkeys(
        _field_validators(Assertion, "_claim_shape"),
        Rule(
            {kind: Shape(holding=(("claim", keys),)) for kind, keys in CLAIM_KEYS.items()},
            by="assertion_type",
            fields=("claim",),
        ),
    ),
}


def _any_of_rule(function: Callable[..., Any]) -> Rule | None:
    """The rule of an :func:`~._types.any_of_required` validator: a shape for each branch."""
    branches = ANY_OF_REQUIRED.get(function)
    if branches is None:
        return None
    return Rule({" ".join(branch): Shape(required=branch) for branch in branches})


def _conditional_rule(model: type[BaseModel], declared: list[Conditional]) -> Rule | None:
    """One rule for a model's :func:`~._types.conditional` rules: a shape for each value.

    They decide by one member, whose values its ``Literal`` lists; a payload's own
    ``message_type`` is read as the envelope's (the two agree, ``_own_type_agrees``).
    """
    deciding = {rule.by for rule in declared}
    if len(deciding) != 1:
        return None
    (by,) = deciding
    annotation = model.model_fields[by].annotation
    if get_origin(annotation) is not Literal:
        return None
    shapes = {
        value: Shape(
            required=tuple(name for rule in declared for name in rule.then(value).required),
            absent=tuple(name for rule in declared for name in rule.then(value).refused),
        )
        for value in get_args(annotation)
    }
    fields = tuple(dict.fromkeys(name for rule in declared for name in rule.members))
    return Rule(shapes, by=_ENVELOPE_TYPE if by == "message_type" else by, fields=fields)


def _fields_rule(model: type[BaseModel], fields: Mapping[str, Node]) -> Rule | None:
    """The one rule ``model``'s field validators enforce; ``None`` for none, or for two."""
    functions = [
        function
        for function in dict.fromkeys(_field_function(field["schema"]) for field in fields.values())
        if function is not None
    ]
    found = [_RULES[function] for function in functions if function in _RULES]
    declared = [CONDITIONALS[function] for function in functions if function in CONDITIONALS]
    if len(found) + bool(declared) != 1:
        return None  # two rules on one model: its hooks are kept
    return found[0] if found else _conditional_rule(model, declared)


_FUNCTIONS: Final = frozenset(
    {"function-after", "function-before", "function-wrap", "function-plain"}
)


class Twin:
    """A rewrite of one validator's schema: the definitions it adds, the models it meets.

    Every ``ref`` below a definition's own is dropped (only definitions are referred to), so
    that several rewritten copies of a model can stand in one schema.
    """

    def __init__(self) -> None:
        self.definitions: list[CoreSchema] = [json_definition()]
        self.models: set[type] = set()
        self._shared: dict[tuple[int, Shape], CoreSchema] = {}

    def definition(self, schema: CoreSchema) -> CoreSchema:
        """A rewritten copy of a definition of the schema, its ``ref`` kept."""
        found = self._node(cast("Node", schema), None)
        ref = schema.get("ref")
        return cast("CoreSchema", found if ref is None else {**found, "ref": ref})

    def schema(self, schema: CoreSchema, message_type: str | None = None) -> CoreSchema:
        """A rewritten copy of ``schema``; ``message_type`` is the envelope's, for a payload."""
        return cast("CoreSchema", self._node(cast("Node", schema), message_type))

    def _node(self, node: Node, message_type: str | None) -> Node:
        kind = node.get("type")
        if kind in _FUNCTIONS:
            found = self._function(node, message_type)
            if found is not None:
                return found
        copy = {key: value for key, value in node.items() if key != "ref"}
        for key in _SCHEMA_KEYS:
            if isinstance(copy.get(key), dict):
                copy[key] = self._node(copy[key], message_type)
        if kind == "model-fields":
            copy["fields"] = {
                name: {**field, "schema": self._node(field["schema"], message_type)}
                for name, field in copy["fields"].items()
            }
        elif kind == "union":
            copy["choices"] = [
                (self._node(c[0], message_type), c[1])
                if isinstance(c, tuple)
                else self._node(c, message_type)
                for c in copy["choices"]
            ]
        elif kind == "tagged-union":
            copy["choices"] = {
                tag: self._node(c, message_type) for tag, c in copy["choices"].items()
            }
        elif kind == "model":
            return self._model(copy, message_type)
        return copy

    def _function(self, node: Node, message_type: str | None) -> Node | None:
        function = _unbound(node["function"]["function"])
        kind = node["type"]
        if kind == "function-plain":
            plain = _plain(function)
            return None if plain is None else _in_json(cast("Node", plain), node)
        inner: Node = node.get("schema", {})  # none under a plain validator
        rule = _any_of_rule(function)
        if rule is not None and inner.get("type") == "model":
            return self._apply(rule, self._node(inner, message_type), message_type)
        if function is _tags_unique_as_sent:
            # The fast path takes valid tags only: their uniqueness, after the list's reading.
            walked = cast("CoreSchema", self._node(inner, message_type))
            return cast("Node", core_schema.no_info_after_validator_function(_unique_tags, walked))
        if kind != "function-after":
            return None
        if function in _AFTER_PLAIN:
            under, schema = _AFTER_PLAIN[function]
            if inner.get("type") == "function-plain" and inner["function"]["function"] is under:
                return _in_json(cast("Node", schema), node)
            return None
        if function is _extension_key:
            found = _keys_of_extensions(self._node(inner, message_type))
            return None if found is None else found
        if function is finite_json:
            walked = self._node(inner, message_type)
            free = _free_form(walked)
            return None if free is None else _in_json(free, {**node, "schema": walked})
        if function is _FINITE_EXTRAS and inner.get("type") == "model":
            walked = self._node(inner, message_type)
            extras = _open(walked)
            return None if extras is None else _in_json(extras, {**node, "schema": walked})
        return None

    def _model(self, node: Node, message_type: str | None) -> Node:
        """A model schema, children rewritten, with its field validators' rule read into it."""
        if isinstance(node.get("cls"), type):
            self.models.add(node["cls"])
        fields_node: Node = node["schema"]
        if fields_node.get("type") != "model-fields":
            return node
        rule = _fields_rule(node["cls"], fields_node["fields"])
        if rule is None:
            return node
        fields = {
            name: {**field, "schema": _strip_function(field["schema"])}
            if name in rule.fields
            else field
            for name, field in fields_node["fields"].items()
        }
        stripped = {**node, "schema": {**fields_node, "fields": fields}}
        applied = self._apply(rule, stripped, message_type)
        return node if applied is None else applied

    def _apply(self, rule: Rule, model: Node, message_type: str | None = None) -> Node | None:
        """The union of ``model``'s shapes that stands for ``rule``, or ``None``."""
        if rule.by == _ENVELOPE_TYPE:
            shape = rule.shapes.get(message_type or "")
            if shape is None:
                return None
            return _shaped(model, shape)
        choices: dict[str, Any] = {}
        uses = Counter(rule.shapes.values())
        for tag, shape in rule.shapes.items():
            shaped = _shaped(model, shape)
            if shaped is None:
                return None
            choices[tag] = self._share(model, shape, shaped) if uses[shape] > 1 else shaped
        if rule.by is None:
            return cast(
                "Node", core_schema.union_schema(list(choices.values()), mode="left_to_right")
            )
        return cast("Node", core_schema.tagged_union_schema(choices, rule.by))

    def _share(self, model: Node, shape: Shape, shaped: Node) -> CoreSchema:
        """One definition for a shape several tags choose (built once, not once per tag)."""
        key = (id(model), shape)
        if key not in self._shared:
            ref = f"{JSON_REF}.shape{len(self.definitions)}"
            self.definitions.append(cast("CoreSchema", {**shaped, "ref": ref}))
            self._shared[key] = core_schema.definition_reference_schema(ref)
        return self._shared[key]


_SCHEMA_KEYS: Final = (
    "schema",
    "items_schema",
    "keys_schema",
    "values_schema",
    "extras_schema",
    "json_schema",
    "python_schema",
)


def _field_function(schema: Node) -> Callable[..., Any] | None:
    """The function of a field's validator, as its schema holds it (a default's too)."""
    if schema.get("type") == "default":
        schema = schema["schema"]
    if schema.get("type") in ("function-after", "function-wrap"):
        return _unbound(schema["function"]["function"])  # type: ignore[no-any-return]
    return None


def _open(model: Node) -> Node | None:
    """An open model with its unknown members finite JSON (``_finite_extras``, in Rust)."""
    fields: Node = model["schema"]
    if fields.get("type") != "model-fields" or "extras_schema" in fields:
        return None
    return {**model, "schema": {**fields, "extras_schema": _JSON}}


def _strip_function(schema: Node) -> Node:
    """A field's schema without the function-after its field validator put in it."""
    if schema.get("type") == "default":
        inner = schema["schema"]
        copy = {key: value for key, value in schema.items() if key != "validate_default"}
        return {**copy, "schema": inner["schema"]}
    return cast("Node", schema["schema"])


def _holding(keys: tuple[str, ...]) -> CoreSchema:
    """An object's own reading, then the check that it has every one of ``keys``.

    The object is kept as it is, members in their order: the keys are checked by a tagged
    union whose discriminator is ``frozenset(keys).issubset`` (a C call, no Python frame),
    with one choice, ``True``.
    """
    return core_schema.tagged_union_schema(
        {True: core_schema.any_schema()}, discriminator=frozenset(keys).issubset
    )


def _shaped(model: Node, shape: Shape) -> Node | None:
    """``model`` with the members of ``shape`` required or refused, holding its keys."""
    fields_node: Node = model["schema"]
    fields = dict(fields_node["fields"])
    for name, keys in shape.holding:
        field = fields.get(name)
        if field is None or field["schema"].get("type") in ("default", "function-after"):
            return None
        schema = core_schema.chain_schema([field["schema"], _holding(keys)])
        fields[name] = {**field, "schema": schema}
    for name in (*shape.required, *shape.absent):
        field = fields.get(name)
        if field is None or field["schema"].get("type") != "default":
            return None
        default = field["schema"]
        if name in shape.required:
            fields[name] = {**field, "schema": default["schema"]}
        else:
            fields[name] = {
                **field,
                "schema": {"type": "default", "default": default["default"], "schema": _NEVER},
            }
    return {**model, "schema": {**fields_node, "fields": fields}}


_FINITE_EXTRAS: Final = SomOpenModel.__pydantic_decorators__.model_validators["_finite_extras"].func
