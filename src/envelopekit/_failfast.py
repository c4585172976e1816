"""Validators that stop each array at its first failing item, for large messages.

pydantic reports every error it finds, and for an array of 79,000 bad items that is 237,000
errors, built in Rust and then as Python dicts: seconds and hundreds of MiB for 240 KB of input
(``bench/hostile.py``). ``check``, and the message models' ``model_validate_json``, validate a
message over :data:`FULL_REPORT_BYTES` with a copy of the same core schema in which every array
schema has ``fail_fast`` set (:func:`large_validator`), and every map that checks only its keys:
what it accepts is exactly what the model accepts (``fail_fast`` changes only how much is
reported), and a refusal costs one failing item per array or map. Small messages keep the
all-errors validator: their cost is bounded by their size, and the official validators report
every error.

The models' fast paths meet these validators at the bound (:data:`TOO_LARGE`), and their JSON
doors read them through a module global (:func:`first_parse`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from functools import partial
from types import MappingProxyType
from typing import Any, Final, Protocol, TypeVar, cast

from pydantic import BaseModel, ValidationInfo
from pydantic_core import (
    CoreConfig,
    CoreSchema,
    ErrorDetails,
    PydanticKnownError,
    SchemaValidator,
    core_schema,
)

__all__ = [
    "FIRST_FAILURE_READERS",
    "FULL_REPORT_BYTES",
    "NOT_GIVEN",
    "REFUSED_MEMBERS",
    "TOO_LARGE",
    "UNKNOWN_KEYS",
    "Absent",
    "JsonParse",
    "TooLarge",
    "UnknownKeys",
    "fail_fast_schema",
    "fail_fast_validator",
    "first_parse",
    "fresh_validator",
    "large_validator",
    "missed",
    "own_config",
    "passes_absent",
    "restored",
    "schemas_in",
]

FULL_REPORT_BYTES: Final = 16_384
"""Messages up to this size are validated with every error reported."""

_LARGE: dict[tuple[type, bool, bool, bool, bool], SchemaValidator] = {}


class TooLarge:
    """The type of :data:`TOO_LARGE`."""


TOO_LARGE: Final = TooLarge()
"""What a fast path's ``validate_python`` returns for a dict whose JSON is over
:data:`FULL_REPORT_BYTES` (its orjson probe's length): the caller reads it with
:func:`large_validator`, as ``model_validate_json`` reads such a message."""

JsonParse = Callable[[str | bytes | bytearray], Any]
"""A fast path's reading of a JSON message: the model, or ``None`` where it declines."""


class _FastPath(Protocol):
    parse: JsonParse


def first_parse(fast: _FastPath, module: MutableMapping[str, Any], name: str) -> JsonParse:
    """A stand-in for the module global ``name``: ``fast.parse``, which replaces it once called.

    A model's JSON door reads its fast validator from a module global, for less than an
    attribute of its fast path; the fast path's ``parse`` is rebound to the validator's own
    method once that is built, on the first call.
    """

    def first(json_data: str | bytes | bytearray) -> Any:
        try:
            return fast.parse(json_data)
        finally:
            module[name] = fast.parse

    return first


_ARRAYS: Final = frozenset({"list", "tuple", "set", "frozenset", "deque"})
_NONE: Final[Mapping[type, CoreSchema]] = MappingProxyType({})


class Absent:
    """The default a required field has in a validator built with ``absent``.

    pydantic-core reports a missing field with the whole object around it as the error's
    input, and builds that input as Python objects once per missing field: eight fields
    missing around a 240 KB payload built it eight times (22.8x ``orjson.loads``, 43.9 MiB;
    ``bench/hostile.py``). In the validators ``check`` and the models' JSON doors read large
    messages with, a required field whose schema refuses this object defaults to it instead
    (a default factory, validated as a value), so the error is on this object alone;
    :func:`restored` reads such errors back as pydantic's ``missing``.
    """

    __slots__ = ("name", "segment")

    def __init__(self, name: str, segment: str) -> None:
        self.name = name
        """The field's name: the segment its error's location holds for it."""
        self.segment = segment
        """The segment pydantic's ``missing`` error names the field by (its alias, if any)."""

    def __repr__(self) -> str:
        return "<absent>"


class _Missed(threading.local):
    count = 0


_MISSED: Final = _Missed()


def _absent(found: Absent) -> Absent:
    # The default factory: called only for a field the message lacks.
    _MISSED.count += 1
    return found


def missed() -> int:
    """How many required fields the validators built with ``absent`` found missing, so far.

    Counted per thread: a caller compares the count before and after a validation to know
    whether its errors need :func:`restored` at all, without reading them.
    """
    return _MISSED.count


# Core schema types that refuse an `Absent` in Rust, calling no Python function.
_REFUSING: Final = frozenset({"str", "int", "float", "bool", "literal", "dict", *_ARRAYS})
_PASSING: set[Callable[..., Any]] = set()

F = TypeVar("F", bound=Callable[..., Any])


def passes_absent(function: F) -> F:
    """Mark a wrap validator or a callable discriminator as taking an :class:`Absent` in stride.

    A wrap validator so marked hands an :class:`Absent` to its handler; a discriminator returns
    a tag for it. A required field whose schema calls such a function may then default to an
    :class:`Absent` too (:func:`fail_fast_schema`).
    """
    _PASSING.add(getattr(function, "__func__", function))
    return function


def restored(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """``errors`` as the model's own validator reports them: ``missing`` where it was absent.

    A required field a message lacks is one ``missing`` error at the field, however many
    members of its union refused the :class:`Absent` it defaulted to. ``errors`` itself when
    none did.
    """
    if not any(type(error["input"]) is Absent for error in errors):
        return errors
    found: list[ErrorDetails] = []
    last: tuple[Absent, tuple[str | int, ...]] | None = None
    for error in errors:
        absent, loc = error["input"], error["loc"]
        # After the field's own segment come only the tags of its union's members.
        end = -1
        if type(absent) is Absent:
            end = max((at for at, segment in enumerate(loc) if segment == absent.name), default=-1)
        if end < 0:  # no Absent, or not where a field's error stands: kept as reported
            found.append(error)
            last = None
            continue
        field = (absent, (*loc[:end], absent.segment))
        if field != last:
            # The input stays the Absent: the object the field is missing from was not built.
            found.append(
                {"type": "missing", "loc": field[1], "msg": "Field required", "input": absent}
            )
            last = field
    return found


UNKNOWN_KEYS: Final = "envelopekit_unknown_keys"
"""The validation context's entry for the :class:`UnknownKeys` of a validator built with
``counted``."""


class UnknownKeys:
    """Which unknown keys a reading's closed models refuse; the others are counted.

    A closed model refuses each unknown key with an error, and pydantic-core builds each error
    twice (in Rust, then as a Python dict): 29,000 keys in a SOM payload cost 14x
    ``orjson.loads`` to raise and as much again to read (``bench/hostile.py``). In a validator
    built with ``counted`` each closed model is read open, and each unknown key meets this
    object: the first key of each model instance is refused as the closed model refuses it
    (``extra_forbidden``), so every instance that would fail still fails, and so are the next
    keys while fewer than ``limit`` were refused; past that a key is only counted in
    :attr:`left`.

    The errors are then the closed reading's (a key's holding the key as its input, not the
    value), in its order, less :attr:`left` keys that all come after ``limit`` refused ones,
    each with its own pointer: a mapping capped at ``limit`` findings keeps the same ones, and
    :attr:`left` more are left out (``_violations.with_left_out``). An instance is told by the
    dict of the fields pydantic-core validates its keys with (``ValidationInfo.data``).
    """

    __slots__ = ("instance", "left", "limit", "refused")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """How many keys are refused before the next key of an instance is only counted."""
        self.refused = 0
        """How many keys were refused."""
        self.left = 0
        """How many keys were counted, not refused."""
        self.instance: object = None
        """The fields' dict of the instance whose key was read last (held, so that no later
        instance's dict takes its place in memory)."""


def _unknown_key(key: str, info: ValidationInfo) -> str:
    # Called once per unknown key (29,000 in a 240 KB payload): a few reads, no call.
    keys: UnknownKeys = cast("dict[str, Any]", info.context)[UNKNOWN_KEYS]
    instance = info.data
    if instance is keys.instance and keys.refused >= keys.limit:
        keys.left += 1
        return key
    keys.instance = instance
    keys.refused += 1
    raise PydanticKnownError("extra_forbidden")  # as the closed model refuses the key


def _without_extras(fields: tuple[Any, Any, Any]) -> tuple[Any, None, Any]:
    # An accepted instance had no unknown key (its first is always refused): its extras are
    # None, as the closed model's, not the open copy's empty dict.
    return fields[0], None, fields[2]


_UNKNOWN_KEY: Final = core_schema.with_info_plain_validator_function(_unknown_key)


CONTEXT_READERS: Final[dict[Callable[..., Any], Callable[..., Any]]] = {}
"""After-validators of free-form JSON (without the validation context, which costs a
``ValidationInfo`` a call), each to its variant that reads the context: what the copies of
:func:`fail_fast_schema` call, for a reading that gives the context something to say (a
``_json.NumberReading``). Filled by the modules that define them."""

FIRST_FAILURE_READERS: Final[dict[Callable[..., Any], Callable[..., Any]]] = {}
"""Wrap validators that judge a whole array as sent when one of its items fails (a schema's
``uniqueItems``), each to its variant that reads only the items before the first failing one,
as the copies of :func:`fail_fast_schema` stop the array there: the rest, never validated, was
read whole by the judgement (beside an invalid tag, 78,000 numbers in SOM's tags cost 19x
``orjson.loads``). Filled by the modules that define them."""

REFUSED_MEMBERS: Final[
    dict[Callable[..., Any], tuple[Callable[..., Any], Callable[[str], Callable[..., Any] | None]]]
] = {}
"""Field wrap validators that refuse a present member together with its own errors (a schema's
``not: {required: [member]}``), each to its variant for the rest of what it checks, an
after-validator (with the validation info), and a function giving, for a field's name, the
refusal's validator (``None``: never refused).

The wrap validator raises the refusal joined to the errors it caught, which only a copy of
every one of them can raise (``_violations.joined``): 22,772 unknown keys in a refused member
cost ``model_validate_json`` 46x ``orjson.loads``, the join most of it. In the copies of
:func:`fail_fast_schema` the refusal is a field of its own after the member's, which reads
the same key (:func:`_refusing_field`): pydantic-core adds its error after the member's own,
at the member, and keeps the lines as it gave them. The member is read by the variant after
its own schema, so that its errors never cross Python either (a wrap validator's errors are
made a Python ``ValidationError`` and read back: 22,772 of them cost a large reading a
quarter of its time); its schema then reads its default too (a ``MISSING``, which every such
member's takes). Filled by the modules that define them."""

PROBES: Final[set[Callable[..., Any]]] = set()
"""The before-validators that probe a model's Python input at the top of its own schema.

A caller that ran the probe on the very value reads it with the copy without it
(:func:`large_validator`'s ``probed``). Filled by the module that defines them."""

NOT_GIVEN: Final = object()
"""The default of a refusal's field (:data:`REFUSED_MEMBERS`): the message lacks the member."""

SAME_VALUE: Final[set[Callable[..., Any]]] = set()
"""Validators that return the very value they are given (free-form JSON's readers).

The copies of :func:`fail_fast_schema` call them as the second step of a chain, whose errors
hold the value the first step built. An after-validator's (or a plain validator's) error holds
its input, which pydantic-core converts to Python objects again when it raises: for a
validator over 1 MiB of free-form JSON, 11 ms, twice the reading itself. A chain's value is
that input as Python objects (the first step of a plain validator's chain is ``any``), equal
to it as the validator returns it unchanged. Filled by the modules that define them."""


def fail_fast_schema(
    node: Any,
    models: set[type] | None = None,
    open_models: Mapping[type, CoreSchema] = _NONE,
    *,
    absent: bool = False,
    counted: bool = False,
    failing: bool = True,
    inputs: bool = True,
    refusals: bool = True,
) -> Any:
    """A copy of the core schema ``node`` with ``fail_fast`` on every array schema.

    And on every map that checks only its keys (:func:`_checks_keys`).

    Only dicts and lists are copied; functions, classes and other values are shared, but for
    the after-validators in :data:`CONTEXT_READERS` and, where arrays fail fast, the wrap
    validators in :data:`FIRST_FAILURE_READERS`, which the copy calls in their variants.
    The classes of the model schemas met are added to ``models``. A model in ``open_models``
    keeps its unknown keys (``extra="allow"``) instead of refusing each with an error, and
    each key is validated by the schema it maps to (for the caller to note it). With
    ``absent``, a required field whose schema refuses an :class:`Absent` defaults to one, for
    a validator of JSON only whose errors are read through :func:`restored`. With
    ``counted``, a closed model refuses the unknown keys its reading's :class:`UnknownKeys`
    refuses, and counts the rest. Without ``failing``, arrays and maps do not fail fast: the
    copy reports every error, as the schema does. The after-validators in :data:`SAME_VALUE`
    are chained; without ``inputs``, every after-validator is, and an error it raises holds
    the value it was given (a model's validator: the model), not the input: for a caller that
    never reads an error's input (``check``). With ``refusals``, a member a
    :data:`REFUSED_MEMBERS` validator refuses is refused by a field of its own, found by the
    member's alias (a validation by name, ``by_alias=False``, reads the copy without).
    """
    refs = _refs(node) if absent else None
    return _copied(node, models, open_models, refs, counted, failing, inputs, refusals)


def _copied(
    node: Any,
    models: set[type] | None,
    open_models: Mapping[type, CoreSchema],
    refs: dict[str, Any] | None,
    counted: bool,
    failing: bool = True,
    inputs: bool = True,
    refusals: bool = True,
) -> Any:
    if isinstance(node, dict):
        # `metadata` holds JSON Schema hooks and extras, never a validator.
        copy = {
            key: value
            if key == "metadata"
            else _copied(value, models, open_models, refs, counted, failing, inputs, refusals)
            for key, value in node.items()
        }
        kind = copy.get("type")
        if (isinstance(kind, str) and kind in _ARRAYS) or (kind == "dict" and _checks_keys(copy)):
            if failing:
                copy["fail_fast"] = True
        elif kind == "function-after":
            function = copy["function"]
            variant = CONTEXT_READERS.get(function["function"])
            if variant is not None and function.get("type") == "no-info":
                copy["function"] = {"type": "with-info", "function": variant}
            if not inputs or function["function"] in SAME_VALUE:
                return _chained(copy)
        elif kind == "function-wrap" and failing and isinstance(copy["function"], dict):
            # (A serializer's wrap schema holds its function bare.)
            function = copy["function"]
            variant = FIRST_FAILURE_READERS.get(function["function"])
            if variant is not None:
                copy["function"] = {**function, "function": variant}
        elif kind == "function-plain" and copy["function"]["function"] in SAME_VALUE:
            # Given the input as Python objects by a first step, its error holds those.
            return {"type": "chain", "steps": [{"type": "any"}, copy]}
        elif kind == "model" and isinstance(copy.get("cls"), type):
            if models is not None:
                models.add(copy["cls"])
            keys = open_models.get(copy["cls"])
            config, fields = copy.get("config", {}), copy["schema"]
            if fields.get("type") != "model-fields":
                return copy
            if keys is not None:
                copy["config"] = {**config, "extra_fields_behavior": "allow"}
                copy["schema"] = {**fields, "extras_keys_schema": keys}
            elif counted and config.get("extra_fields_behavior") == "forbid":
                copy["config"] = {**config, "extra_fields_behavior": "allow"}
                counting = cast("CoreSchema", {**fields, "extras_keys_schema": _UNKNOWN_KEY})
                copy["schema"] = core_schema.no_info_after_validator_function(
                    _without_extras, counting
                )
        elif kind == "model-fields":
            fields = copy["fields"]
            if refs is not None:
                fields = {name: _defaulted(name, field, refs) for name, field in fields.items()}
            copy["fields"] = _with_refusals(fields) if refusals else fields
        return copy
    if isinstance(node, list):
        return [
            _copied(item, models, open_models, refs, counted, failing, inputs, refusals)
            for item in node
        ]
    return node


def _chained(after: dict[str, Any]) -> dict[str, Any]:
    """The after-validator schema ``after`` as a chain: its schema, then its function.

    The same validation, but for the input an error of the function holds (:data:`SAME_VALUE`).
    """
    step = {"type": "function-plain", "function": after["function"]}
    chain = {"type": "chain", "steps": [after["schema"], step]}
    for key in ("ref", "metadata", "serialization"):
        if key in after:
            chain[key] = after[key]
    return chain


def stops_early(schema: CoreSchema) -> bool:
    """Whether the fail-fast copy of ``schema`` could report less on plain JSON data.

    It holds an array whose items may refuse a JSON value, or a map that checks its keys
    (:func:`_checks_keys`). Free-form items (``Any``, pydantic's ``JsonValue``) refuse none: a
    model holding only those reads a large message as its schema does.
    """
    for node in schemas_in(schema):
        kind = node.get("type")
        if not isinstance(kind, str):
            continue  # a member named "type" (a model's field), no schema's kind
        if kind in _ARRAYS:
            items = node.get("items_schema")
            if kind == "tuple":
                # Only a tuple of any length is an array of items; one of fixed positions
                # reports one error a position at most.
                variadic = node.get("variadic_item_index")
                items = None if variadic is None else node["items_schema"][variadic]
                if variadic is None:
                    continue
            if items is None or items.get("type") == "any":
                continue
            if items.get("type") == "definition-ref" and items["schema_ref"].startswith(
                _JSON_VALUE_REF
            ):
                continue
            return True
        if kind == "dict" and _checks_keys(node):
            return True
    return False


_JSON_VALUE_REF: Final = "pydantic.types.JsonValue:"
"""How pydantic names its ``JsonValue`` schema's definition (the id of the type after it)."""


def _checks_keys(schema: dict[str, Any]) -> bool:
    """Whether a dict schema checks its keys and nothing else (SOM's ``extensions``).

    Such a map stops at its first refused key, as an array at its first failing item: 29,500
    keys that are not namespaced were as many errors from a Python validator (49.5x
    ``orjson.loads``, 24 MiB). Each of its errors is on a key (a location ending ``[key]``),
    which tells :func:`~envelopekit.violations` that later keys may not have been checked.
    """
    keys, values = schema.get("keys_schema"), schema.get("values_schema")
    if keys is None or (values is not None and values.get("type") != "any"):
        return False
    return {key: value for key, value in keys.items() if key != "metadata"} != {"type": "str"}


def _with_refusals(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields``, with a refusal's field after each member a validator may refuse.

    The members' :data:`REFUSED_MEMBERS` validators are called in their variants.
    """
    found: dict[str, Any] = {}
    for name, field in fields.items():
        schema = field["schema"]
        outer = schema if schema.get("type") == "default" else None
        wrap = outer["schema"] if outer is not None else schema
        function: Any = None
        if wrap.get("type") == "function-wrap" and isinstance(wrap["function"], dict):
            function = wrap["function"]["function"]
        entry = REFUSED_MEMBERS.get(getattr(function, "__func__", function))
        alias = field.get("validation_alias", name)
        # A scalar member's errors are a few, joined at no cost; a refusal's field costs a
        # call on every instance (a provenance's in each assertion).
        if entry is None or not isinstance(alias, str) or not _holds_members(wrap["schema"]):
            found[name] = field
            continue
        variant, refusal_of = entry
        # Bound to the model's class, as pydantic binds the validator (a classmethod).
        owner = getattr(function, "__self__", None)
        bound = variant if owner is None else variant.__get__(owner)
        after = {
            **wrap,
            "type": "function-after",
            "function": {**wrap["function"], "function": bound},
        }
        found[name] = {**field, "schema": {**outer, "schema": after} if outer else after}
        refusal = refusal_of(name)
        if refusal is not None:
            found[f"{name}\x00refused"] = _refusing_field(refusal, alias)
    return found


_CONTAINERS: Final = frozenset(
    {"model", "model-fields", "typed-dict", "dataclass", "dict", "definition-ref", *_ARRAYS}
)


def _holds_members(schema: Any) -> bool:
    """Whether ``schema`` validates an object or an array, which may fail in many places."""
    return any(node.get("type") in _CONTAINERS for node in schemas_in(schema))


def _refusing_field(refusal: Callable[..., Any], alias: str) -> dict[str, Any]:
    """A field reading the key ``alias`` again, after the member's own field.

    ``refusal(value, info)`` raises the refusal, or :class:`~pydantic_core.PydanticOmit`,
    which pydantic-core reads as no field at all: an instance holds no such field, accepted or
    not. Its location is the member's, by the alias (``loc_by_alias``); a message lacking the
    member gives it :data:`NOT_GIVEN`, validated as a value.
    """
    return {
        "type": "model-field",
        "schema": {
            "type": "default",
            "schema": core_schema.with_info_plain_validator_function(refusal),
            "default": NOT_GIVEN,
            "validate_default": True,
        },
        "validation_alias": alias,
    }


def _defaulted(name: str, field: dict[str, Any], refs: dict[str, Any]) -> dict[str, Any]:
    """A model field that defaults to an :class:`Absent` where its schema refuses one."""
    schema = field["schema"]
    if schema.get("type") == "default" or not _refuses(schema, refs, set()):
        return field
    alias = field.get("validation_alias", name)
    if not isinstance(alias, str):  # alias paths: left as pydantic reports them
        return field
    defaulted = {
        "type": "default",
        "schema": schema,
        "default_factory": partial(_absent, Absent(name, alias)),
        "validate_default": True,
    }
    return {**field, "schema": defaulted}


def _refuses(schema: Any, refs: dict[str, Any], seen: set[str]) -> bool:
    """Whether ``schema`` refuses an :class:`Absent`: in Rust, or past functions that pass it.

    A function that may choke on it (a plain or before validator, one not marked with
    :func:`passes_absent`) leaves the field required.
    """
    kind = schema.get("type")
    if kind in _REFUSING:
        return True
    if kind in ("function-after", "nullable"):
        return _refuses(schema["schema"], refs, seen)
    if kind == "json-or-python":  # a JSON validator reads the default as JSON too
        return _refuses(schema["json_schema"], refs, seen)
    if kind == "union":
        return all(
            _refuses(choice[0] if isinstance(choice, tuple) else choice, refs, seen)
            for choice in schema["choices"]
        )
    if kind == "function-wrap":
        function = schema["function"]["function"]
        return getattr(function, "__func__", function) in _PASSING and _refuses(
            schema["schema"], refs, seen
        )
    if kind == "tagged-union":
        tag = schema["discriminator"]
        return (not callable(tag) or tag in _PASSING) and all(
            _refuses(choice, refs, seen) for choice in schema["choices"].values()
        )
    if kind == "model":
        if schema.get("custom_init"):
            return False
        inner = schema["schema"]
        if schema.get("root_model"):  # validates the value itself
            return _refuses(inner, refs, seen)
        while inner.get("type") == "function-after":
            inner = inner["schema"]
        return bool(inner.get("type") == "model-fields")
    if kind == "definition-ref":
        ref = schema["schema_ref"]
        if ref in seen or ref not in refs:
            return False
        return _refuses(refs[ref], refs, seen | {ref})
    return False


def _refs(node: Any) -> dict[str, Any]:
    """Every schema in ``node`` that carries a ``ref``, by it."""
    return {
        item["ref"]: item
        for item in schemas_in(node)
        if isinstance(item.get("ref"), str) and item.get("type") != "definition-ref"
    }


def schemas_in(node: Any) -> Iterator[dict[str, Any]]:
    """Every dict in the core schema ``node``, ``metadata`` left out (never a validator)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(value for key, value in item.items() if key != "metadata")
        elif isinstance(item, list):
            stack.extend(item)


def fail_fast_validator(
    schema: CoreSchema,
    config: CoreConfig | None = None,
    open_models: Mapping[type, CoreSchema] = _NONE,
    *,
    absent: bool = False,
    counted: bool = False,
    failing: bool = True,
    inputs: bool = True,
    refusals: bool = True,
) -> SchemaValidator:
    """A validator of ``schema`` (a model's or adapter's core schema) that fails fast.

    Args:
        schema: the core schema to copy.
        config: the validator's config.
        open_models: models whose copies keep unknown keys in ``__pydantic_extra__``
            instead of refusing each with its own error, each to the schema that validates
            its unknown keys (the caller reports them).
        absent: required fields default to an :class:`Absent` (:func:`fail_fast_schema`): for
            a validator of JSON only, whose errors the caller reads through :func:`restored`.
        counted: closed models refuse only the unknown keys the :class:`UnknownKeys` in the
            context (at :data:`UNKNOWN_KEYS`) refuses, and count the rest.
        failing: whether arrays and maps fail fast (else only the :data:`CONTEXT_READERS`
            differ from ``schema``).
        inputs: whether every error holds its validator's input (else an after-validator's
            holds the value it was given: ``check``'s, which never reads them).
        refusals: whether a refused member is refused by a field of its own
            (:func:`fail_fast_schema`), found by its alias.
    """
    models: set[type] = set()
    copy = fail_fast_schema(
        schema,
        models,
        open_models,
        absent=absent,
        counted=counted,
        failing=failing,
        inputs=inputs,
        refusals=refusals,
    )
    return fresh_validator(copy, models, config)


def fresh_validator(
    schema: CoreSchema, models: set[type], config: CoreConfig | None = None
) -> SchemaValidator:
    """A validator of ``schema`` as written, the complete ``models`` in it built anew.

    pydantic-core reuses a complete model's own validator for a nested model schema of that
    class (when the class's validator is a bare model validator, as a message model's
    ``json-or-python`` one is), which would ignore a rewritten copy below it: the models are
    marked incomplete while it is built.
    """
    marked = [model for model in models if model.__dict__.get("__pydantic_complete__")]
    try:
        for model in marked:
            model.__pydantic_complete__ = False  # type: ignore[attr-defined]
        return SchemaValidator(schema, config)
    finally:
        for model in marked:
            model.__pydantic_complete__ = True  # type: ignore[attr-defined]


def large_validator(
    model: type[BaseModel],
    *,
    absent: bool = False,
    inputs: bool = True,
    by_alias: bool = True,
    probed: bool = False,
) -> SchemaValidator:
    """The fail-fast copy of ``model``'s own schema: how a message over the bound is read.

    Built on first use, once per class, and read by the model's ``model_validate_json``. With
    ``absent``, ``check``'s (``Spec.read_large``): its required fields default to an
    :class:`Absent`, and its errors read through :func:`restored` are the same as the door's
    for the same bytes. Without ``inputs``, ``check``'s own: its after-validators' errors hold
    the value they were given (:func:`fail_fast_schema`). Without ``by_alias``, for a
    validation that finds fields by their names only (``by_alias=False``): no refused member
    is refused by a field of its own, which is found by the member's alias. With ``probed``,
    for a caller that ran the model's Python probe (:data:`PROBES`) on the value it reads: the
    copy has none, which would write the message again, or be told its text in the context.
    """
    key = (model, absent, inputs, by_alias, probed)
    found = _LARGE.get(key)
    if found is None:
        # A race builds it twice; either copy is the same validator.
        schema = model.__pydantic_core_schema__
        found = _LARGE[key] = fail_fast_validator(
            _unprobed(schema) if probed else schema,
            own_config(schema, model),
            absent=absent,
            inputs=inputs,
            refusals=by_alias,
        )
    return found


def _unprobed(node: Any) -> Any:
    """``node`` (a model's own schema) without its Python probe (:data:`PROBES`)."""
    kind = node["type"]
    if kind == "function-before" and node["function"]["function"] in PROBES:
        return node["schema"]
    if kind == "json-or-python":
        return {**node, "python_schema": _unprobed(node["python_schema"])}
    if kind in {"definitions", "function-after", "function-before", "function-wrap"}:
        return {**node, "schema": _unprobed(node["schema"])}
    return node


def own_config(schema: Any, model: type) -> CoreConfig | None:
    """The config pydantic builds ``model``'s own validator with: its model schema's.

    It carries the title that a ``ValidationError`` names (without it, the schema's own name:
    ``json-or-python[json=function-after[...], ...]``) and the settings of the schema around
    the model (a wrapping validator, the definitions). ``None`` if ``schema`` has no model
    schema of ``model``.
    """
    for node in schemas_in(schema):
        if node.get("type") == "model" and node.get("cls") is model:
            config: CoreConfig | None = node.get("config")
            return config
    return None
