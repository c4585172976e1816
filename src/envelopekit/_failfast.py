"""Validators that stop each array at its first failing item, for large messages.

pydantic reports every error it finds, and for an array of 79,000 bad items that is 237,000
errors, built in Rust and then as Python dicts: seconds and hundreds of MiB for 240 KB of input
(``bench/hostile.py``). ``check``, and the message models' ``model_validate_json``, validate a
message over :data:`FULL_REPORT_BYTES` with a copy of the same core schema in which every array
schema has ``fail_fast`` set (:func:`large_validator`): what it accepts is exactly what the model
accepts (``fail_fast`` changes only how much is reported), and a refusal costs one failing
item per array. Small messages keep the all-errors validator: their cost is bounded by their
size, and the official validators report every error.

The models' fast paths meet these validators at the bound (:data:`TOO_LARGE`), and their JSON
doors read them through a module global (:func:`first_parse`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any, Final, Protocol

from pydantic import BaseModel
from pydantic_core import CoreConfig, CoreSchema, SchemaValidator

__all__ = [
    "FULL_REPORT_BYTES",
    "TOO_LARGE",
    "JsonParse",
    "TooLarge",
    "fail_fast_schema",
    "fail_fast_validator",
    "first_parse",
    "fresh_validator",
    "large_validator",
    "own_config",
]

FULL_REPORT_BYTES: Final = 16_384
"""Messages up to this size are validated with every error reported."""

_LARGE: dict[type, SchemaValidator] = {}


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


def fail_fast_schema(
    node: Any, models: set[type] | None = None, open_models: Mapping[type, CoreSchema] = _NONE
) -> Any:
    """A copy of the core schema ``node`` with ``fail_fast`` on every array schema.

    Only dicts and lists are copied; functions, classes and other values are shared. The
    classes of the model schemas met are added to ``models``. A model in ``open_models`` keeps
    its unknown keys (``extra="allow"``) instead of refusing each with an error, and each key
    is validated by the schema it maps to (for the caller to note it).
    """
    if isinstance(node, dict):
        # `metadata` holds JSON Schema hooks and extras, never a validator.
        copy = {
            key: value if key == "metadata" else fail_fast_schema(value, models, open_models)
            for key, value in node.items()
        }
        kind = copy.get("type")
        if isinstance(kind, str) and kind in _ARRAYS:
            copy["fail_fast"] = True
        elif kind == "model" and isinstance(copy.get("cls"), type):
            if models is not None:
                models.add(copy["cls"])
            keys = open_models.get(copy["cls"])
            if keys is not None and copy["schema"].get("type") == "model-fields":
                copy["config"] = {**copy.get("config", {}), "extra_fields_behavior": "allow"}
                copy["schema"] = {**copy["schema"], "extras_keys_schema": keys}
        return copy
    if isinstance(node, list):
        return [fail_fast_schema(item, models, open_models) for item in node]
    return node


def fail_fast_validator(
    schema: CoreSchema,
    config: CoreConfig | None = None,
    open_models: Mapping[type, CoreSchema] = _NONE,
) -> SchemaValidator:
    """A validator of ``schema`` (a model's or adapter's core schema) that fails fast.

    Args:
        schema: the core schema to copy.
        config: the validator's config.
        open_models: models whose copies keep unknown keys in ``__pydantic_extra__``
            instead of refusing each with its own error, each to the schema that validates
            its unknown keys (the caller reports them).
    """
    models: set[type] = set()
    copy = fail_fast_schema(schema, models, open_models)
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


def large_validator(model: type[BaseModel]) -> SchemaValidator:
    """The fail-fast copy of ``model``'s own schema: how a message over the bound is read.

    Built on first use, once per class, and shared by ``check`` (``Spec.read_large``) and the
    model's ``model_validate_json``, so that both report the same errors for the same bytes.
    """
    found = _LARGE.get(model)
    if found is None:
        # A race builds it twice; either copy is the same validator.
        schema = model.__pydantic_core_schema__
        found = _LARGE[model] = fail_fast_validator(schema, own_config(schema, model))
    return found


def own_config(schema: Any, model: type) -> CoreConfig | None:
    """The config pydantic builds ``model``'s own validator with: its model schema's.

    It carries the title that a ``ValidationError`` names (without it, the schema's own name:
    ``json-or-python[json=function-after[...], ...]``) and the settings of the schema around
    the model (a wrapping validator, the definitions). ``None`` if ``schema`` has no model
    schema of ``model``.
    """
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "model" and node.get("cls") is model:
                config: CoreConfig | None = node.get("config")
                return config
            stack.extend(value for key, value in node.items() if key != "metadata")
        elif isinstance(node, list):
            stack.extend(node)
    return None
