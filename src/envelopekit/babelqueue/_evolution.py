"""Payload-schema evolution: the registry's ``compat`` rules, with rule ids and schema pointers.

A change to a URN's ``data`` schema is *breaking* when data valid under the old schema can be
refused by the new one; then the URN must be versioned (``...:created.v2``) rather than changed
("consumers upgrade before producers"). The rules are babelqueue-registry's ``compat``:

* a ``type`` that changes (and everything beneath it is not compared further);
* an ``enum`` added where any value was allowed, or an ``enum`` value removed (a ``const`` is
  an ``enum`` of its one value, as JSON Schema defines it and pydantic writes a one-value
  ``Literal``);
* ``minLength`` or ``minimum`` added or raised;
* a property newly ``required``;
* ``additionalProperties`` closed (``false``) on an object that was open;
* a property removed (a rename is a removal), whatever ``additionalProperties`` says;
* nested ``properties`` and array ``items`` are compared the same way.

Adding an optional property, widening an ``enum``, relaxing a constraint or dropping a
``required`` entry is compatible; ``x-gdpr-sensitive`` marks and every keyword outside the
registry's subset are neutral. Two additions over the registry's reader, both the same
definition applied where it cannot look: a ``type`` added where none was, and, for a pydantic
``X | None`` (``anyOf`` with ``null``), a field that stops accepting ``null`` or whose ``X``
changes type. A property or ``items`` schema of ``false`` is a ``type`` that no value has (a
change to it is reported, a change from it is compatible, as adding an optional property is),
although :class:`PayloadSchemas`, as every SDK, checks nothing under a subschema that is no
JSON object; ``true``, like any value that is no schema, allows any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .. import rules
from .._violations import Violation, pointer, printable, violation
from ._payload_schema import SchemaRegistryError
from ._sensitive import payload_schema

__all__ = ["breaking_changes"]

SchemaSource = Mapping[str, Any] | type[BaseModel]

MAX_SCHEMA_DEPTH = 128
"""Nesting of ``properties`` / ``items`` compared at most (deeper is a schema no SDK reads)."""


def breaking_changes(old: SchemaSource, new: SchemaSource) -> list[Violation]:
    """What in ``new`` can refuse ``data`` that ``old`` accepted: empty when compatible.

    Args:
        old: the schema in use (a JSON Schema object, or a ``data`` model, whose
            :func:`payload_schema` is compared).
        new: the proposed schema or model.

    Returns:
        One ``compat.*`` violation per breaking change, ordered by pointer. The pointer is the
        schema location in ``new`` (``/properties/order_id/type``, ``/required/2``), or in
        ``old`` for a removed property; the message is the registry's wording, prefixed by its
        dotted path (``lines[].qty: property removed``).

    Raises:
        SchemaRegistryError: for schemas (or ``enum`` values) nesting deeper than
            :data:`MAX_SCHEMA_DEPTH`.
        TypeError: for a recursive model (see :func:`payload_schema`), or a schema that is
            neither a JSON object nor a model.
    """
    old_schema, new_schema = _schema(old), _schema(new)
    for schema in (old_schema, new_schema):
        if not isinstance(schema, Mapping):
            raise TypeError(f"a schema is a JSON object or a model, not {type(schema).__name__}")
    found: list[Violation] = []
    _compare(old_schema, new_schema, "", (), (), found)
    return sorted(found, key=lambda v: (v.pointer, v.rule, v.message))


def _schema(source: SchemaSource) -> Mapping[str, Any]:
    return payload_schema(source) if isinstance(source, type) else source


def _view(
    node: Any, at: tuple[str | int, ...]
) -> tuple[dict[str, Any], dict[str, tuple[str | int, ...]], bool]:
    """A node as the comparison reads it: its keywords, where each came from, and nullability.

    ``anyOf`` with ``null`` and one other branch (pydantic's ``X | None``) reads as that branch
    plus "null allowed"; the node's own keywords win over the branch's.
    """
    if not isinstance(node, Mapping):
        return {}, {}, False
    keys = dict(node)
    where = dict.fromkeys(keys, at)
    nullable = keys.get("type") == "null"
    branches = keys.get("anyOf")
    if "type" not in keys and isinstance(branches, list):
        others = [(i, b) for i, b in enumerate(branches) if isinstance(b, Mapping)]
        nulls = [i for i, b in others if b.get("type") == "null"]
        rest = [(i, b) for i, b in others if b.get("type") != "null"]
        if nulls and len(rest) == 1 and len(others) == len(branches):
            index, branch = rest[0]
            for key, value in branch.items():
                if key not in keys:
                    keys[key] = value
                    where[key] = (*at, "anyOf", index)
            nullable = True
    return keys, where, nullable


def _compare(
    old_node: Any,
    new_node: Any,
    path: str,
    old_at: tuple[str | int, ...],
    new_at: tuple[str | int, ...],
    found: list[Violation],
) -> None:
    if len(new_at) > 2 * MAX_SCHEMA_DEPTH:
        raise SchemaRegistryError(
            f"the schemas nest deeper than {MAX_SCHEMA_DEPTH} levels at {pointer(*new_at)}"
        )
    if old_node is False:
        return  # as a property added: compatible, as adding an optional one is
    if new_node is False:
        text = "no value allowed (schema false)"
        found.append(_found(rules.COMPAT_TYPE_CHANGED, pointer(*new_at), f"{path}: {text}"))
        return
    # `true`, or what is no schema at all (PayloadSchemas checks nothing there), allows any value.
    old_node = old_node if isinstance(old_node, Mapping) else {}
    new_node = new_node if isinstance(new_node, Mapping) else {}
    old, _, old_null = _view(old_node, old_at)
    new, where, new_null = _view(new_node, new_at)

    def add(rule: str, keyword: str, message: str, *extra: str | int) -> None:
        at = where.get(keyword, new_at)
        text = f"{path}: {message}" if path else message
        found.append(_found(rule, pointer(*at, keyword, *extra), text))

    old_type, new_type = old.get("type"), new.get("type")
    if isinstance(old_type, str) and isinstance(new_type, str) and old_type != new_type:
        add(rules.COMPAT_TYPE_CHANGED, "type", f'type changed "{old_type}" → "{new_type}"')
        return
    if old_type is None and isinstance(new_type, str):
        add(
            rules.COMPAT_TYPE_CHANGED, "type", f'type "{new_type}" added where any type was allowed'
        )
        return
    if old_null and not new_null and "type" in new:
        add(rules.COMPAT_TYPE_CHANGED, "type", "null no longer allowed")

    old_allowed, new_allowed = _allowed(old), _allowed(new)
    if new_allowed is not None:
        keyword, values = new_allowed
        if old_allowed is None:
            add(
                rules.COMPAT_ENUM_ADDED,
                keyword,
                f"{keyword} constraint added where any value was allowed",
            )
        else:
            kept = {_strict(value) for value in values}  # one pass each: bounded for any size
            held = f" (const {_show(new['const'])})" if keyword == "const" else ""
            for value in old_allowed[1]:
                if _strict(value) not in kept:
                    add(
                        rules.COMPAT_ENUM_VALUE_REMOVED,
                        keyword,
                        f"enum value {_show(value)} removed{held}",
                    )
    if _tightened(old.get("minLength"), new.get("minLength")):
        add(rules.COMPAT_MIN_LENGTH_TIGHTENED, "minLength", "minLength tightened")
    if _tightened(old.get("minimum"), new.get("minimum")):
        add(rules.COMPAT_MINIMUM_TIGHTENED, "minimum", "minimum tightened")

    old_required = old.get("required")
    was = {n for n in old_required if isinstance(n, str)} if isinstance(old_required, list) else ()
    new_required = new.get("required")
    for index, name in enumerate(new_required if isinstance(new_required, list) else []):
        if isinstance(name, str) and name not in was:
            add(
                rules.COMPAT_REQUIRED_ADDED, "required", f'property "{name}" is now required', index
            )
    if old.get("additionalProperties") is not False and new.get("additionalProperties") is False:
        add(
            rules.COMPAT_ADDITIONAL_PROPERTIES_TIGHTENED,
            "additionalProperties",
            "additionalProperties tightened to false",
        )

    old_props, new_props = old.get("properties"), new.get("properties")
    if isinstance(old_props, Mapping):
        _, old_where, _ = _view(old_node, old_at)
        old_base = old_where.get("properties", old_at)
        new_base = where.get("properties", new_at)
        current = new_props if isinstance(new_props, Mapping) else {}
        for name, old_sub in old_props.items():
            child = f"{path}.{name}" if path else str(name)
            if name not in current:
                found.append(
                    _found(
                        rules.COMPAT_PROPERTY_REMOVED,
                        pointer(*old_base, "properties", name),
                        f"{child}: property removed",
                    )
                )
                continue
            _compare(
                old_sub,
                current[name],
                child,
                (*old_base, "properties", name),
                (*new_base, "properties", name),
                found,
            )

    old_items, new_items = old.get("items"), new.get("items")
    closed = new_items is False and old_items is not False  # no item allowed, where some were
    if closed or (isinstance(old_items, Mapping) and isinstance(new_items, Mapping)):
        _, old_where, _ = _view(old_node, old_at)
        _compare(
            old_items,
            new_items,
            path + "[]",
            (*old_where.get("items", old_at), "items"),
            (*where.get("items", new_at), "items"),
            found,
        )


def _found(rule: str, at: str, message: str) -> Violation:
    # Names from a schema `json.loads` read may hold lone surrogates, which no output can write.
    return violation(rule, printable(at), printable(message))


def _allowed(node: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """The values ``enum`` and ``const`` leave a node, and the keyword that says so last.

    ``None`` when any value is allowed. A ``const`` is an ``enum`` of one value (narrowed by an
    ``enum`` beside it, which leaves it or nothing).
    """
    values = node.get("enum")
    if "const" in node:
        const = node["const"]
        if isinstance(values, list) and _strict(const) not in {_strict(v) for v in values}:
            return "const", []
        return "const", [const]
    return ("enum", values) if isinstance(values, list) else None


def _strict(value: Any, depth: int = 0) -> Any:
    """A hashable key equal for two JSON values exactly when they are the same JSON value.

    Type-strict, as the validators compare ``enum``: ``true`` is not ``1``, ``1`` is not
    ``1.0``; object member order does not matter.

    Raises:
        SchemaRegistryError: for a value nesting deeper than :data:`MAX_SCHEMA_DEPTH`.
    """
    if isinstance(value, (dict, list)) and depth >= MAX_SCHEMA_DEPTH:
        raise SchemaRegistryError(f"an enum value nests deeper than {MAX_SCHEMA_DEPTH} levels")
    if isinstance(value, dict):
        return ("object", frozenset((k, _strict(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_strict(v, depth + 1) for v in value))
    return (type(value).__name__, value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _tightened(old: Any, new: Any) -> bool:
    """A bound added, or raised (as floats, or exactly where one is past any float).

    As the registry's readers and :class:`PayloadSchemas` compare a value with the bound.
    """
    if not _is_number(new):
        return False
    if not _is_number(old):
        return True
    try:
        return float(new) > float(old)
    except OverflowError:
        return bool(new > old)


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."
