"""Validators that stop each array at its first failing item, for large messages.

pydantic reports every error it finds, and for an array of 79,000 bad items that is 237,000
errors, built in Rust and then as Python dicts: seconds and hundreds of MiB for 240 KB of input
(``bench/hostile.py``). ``check`` validates a large message with a copy of the same core schema
in which every array schema has ``fail_fast`` set: what it accepts is exactly what the model
accepts (``fail_fast`` changes only how much is reported), and a refusal costs one failing
item per array. Small messages keep the all-errors validator: their cost is bounded by their
size, and the official validators report every error.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic_core import CoreConfig, CoreSchema, SchemaValidator

__all__ = ["FULL_REPORT_BYTES", "fail_fast_schema", "fail_fast_validator", "fresh_validator"]

FULL_REPORT_BYTES: Final = 16_384
"""Messages up to this size are validated with every error reported."""

_ARRAYS: Final = frozenset({"list", "tuple", "set", "frozenset", "deque"})


def fail_fast_schema(node: Any, models: set[type] | None = None) -> Any:
    """A copy of the core schema ``node`` with ``fail_fast`` on every array schema.

    Only dicts and lists are copied; functions, classes and other values are shared. The
    classes of the model schemas met are added to ``models``.
    """
    if isinstance(node, dict):
        # `metadata` holds JSON Schema hooks and extras, never a validator.
        copy = {
            key: value if key == "metadata" else fail_fast_schema(value, models)
            for key, value in node.items()
        }
        kind = copy.get("type")
        if isinstance(kind, str) and kind in _ARRAYS:
            copy["fail_fast"] = True
        elif kind == "model" and models is not None and isinstance(copy.get("cls"), type):
            models.add(copy["cls"])
        return copy
    if isinstance(node, list):
        return [fail_fast_schema(item, models) for item in node]
    return node


def fail_fast_validator(schema: CoreSchema, config: CoreConfig | None = None) -> SchemaValidator:
    """A validator of ``schema`` (a model's or adapter's core schema) that fails fast."""
    models: set[type] = set()
    copy = fail_fast_schema(schema, models)
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
