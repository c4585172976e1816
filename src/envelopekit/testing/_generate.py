"""Hypothesis strategies read off envelopekit's generated JSON Schemas (Draft 2020-12).

The schemas are the models' own description of themselves (:mod:`envelopekit._schema`), so a
strategy built from them follows the models without a hand-kept copy of any field. Only the
subset of JSON Schema that pydantic and our generator emit is read: ``$ref``/``$defs``,
``type``, ``const``, ``enum``, ``anyOf``/``oneOf``, ``allOf``, ``if``/``then``/``else``,
``properties``/``required``/``additionalProperties``/``patternProperties``, string
``pattern``/``format``/lengths, numeric bounds and array sizes. (hypothesis-jsonschema, the
general tool, does not run on current hypothesis and reads Draft 7, not our 2020-12 documents.)

Values stay away from what the models refuse but JSON Schema cannot say (README, "JSON
Schema"): no NaN, no integer beyond 2^53, no lone surrogate, no string ending in a newline
where a pattern applies.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from hypothesis import strategies as st

__all__ = ["Generator", "json_values", "matches", "merge", "refused_members"]

SAFE_INTEGER: Final = 2**53 - 1
# Recursion through `$ref` (free JSON values, nested blocks) stops growing past this depth.
MAX_DEPTH: Final = 6
# Optional arrays and open objects stay small: a test wants many messages, not large ones.
MAX_EXTRA_ITEMS: Final = 3

_SLUG: Final = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)

json_scalars: Final = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE_INTEGER, max_value=SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | st.text(max_size=20)
)
json_values: Final = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=MAX_EXTRA_ITEMS)
        | st.dictionaries(st.text(max_size=10), inner, max_size=MAX_EXTRA_ITEMS)
    ),
    max_leaves=8,
)
"""Any JSON value (within the models' limits)."""

_UTC_INSTANTS: Final = st.datetimes(
    min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2099, 12, 31)
)


def _date_time(moment: dt.datetime, micros: bool) -> str:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{moment.microsecond:06d}Z" if micros else f"{text}Z"


_FORMATS: Final[dict[str, st.SearchStrategy[str]]] = {
    "uuid": st.uuids().map(str),
    "date-time": st.builds(_date_time, _UTC_INSTANTS, st.booleans()),
    "uri": st.builds(lambda host, path: f"https://{host}.example/{path}", _SLUG, _SLUG),
}


def merge(left: Mapping[str, Any], right: Mapping[str, Any]) -> dict[str, Any]:
    """Both schemas at once (their ``allOf``), for the subset the generated schemas use."""
    merged = dict(left)
    for key, value in right.items():
        if key == "properties" and isinstance(merged.get(key), dict):
            properties = dict(merged[key])
            for name, sub in value.items():
                previous = properties.get(name)
                if isinstance(previous, dict) and isinstance(sub, dict):
                    properties[name] = merge(previous, sub)
                else:
                    properties[name] = sub
            merged[key] = properties
        elif key == "required" and key in merged:
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        elif key == "allOf" and key in merged:
            merged[key] = [*merged[key], *value]
        else:
            merged[key] = value
    return merged


_TYPES: Final[dict[str, type | tuple[type, ...]]] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
    "number": (int, float),
    "integer": int,
}


def matches(schema: Any, value: Any, root: Mapping[str, Any]) -> bool:
    """Whether ``value`` fits ``schema``, for the keywords an ``if`` clause uses."""
    if schema is True or schema == {}:
        return True
    if schema is False:
        return False
    if "$ref" in schema and not matches(resolve(schema["$ref"], root), value, root):
        return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        return False
    if "not" in schema and matches(schema["not"], value, root):
        return False
    if "anyOf" in schema and not any(matches(b, value, root) for b in schema["anyOf"]):
        return False
    if "oneOf" in schema and sum(matches(b, value, root) for b in schema["oneOf"]) != 1:
        return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is(value, k) for k in kinds):
            return False
    if isinstance(value, dict):
        if any(name not in value for name in schema.get("required", ())):
            return False
        for name, sub in schema.get("properties", {}).items():
            if name in value and not matches(sub, value[name], root):
                return False
    return True


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, _TYPES[kind])


def _same(left: Any, right: Any) -> bool:
    return type(left) is type(right) and left == right


def resolve(ref: str, root: Mapping[str, Any]) -> Any:
    """The subschema a local ``$ref`` (``#/$defs/Name``) points at."""
    if not ref.startswith("#/"):
        raise ValueError(f"only local references are read, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


class Generator:
    """Strategies for the values one JSON Schema document accepts."""

    def __init__(self, root: Mapping[str, Any], *, complete: bool = False) -> None:
        self.root = root
        self.complete = complete
        """Draw every optional member and at least one item of every array (above
        :data:`MAX_DEPTH`), so that each rule finds a place to be broken."""

    def strategy(self, schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
        """The values ``schema`` (a node of :attr:`root`) accepts."""
        return st.deferred(lambda: self._strategy(schema, depth))

    def _strategy(self, schema: Any, depth: int) -> st.SearchStrategy[Any]:
        if schema is True or schema == {}:
            return json_values if depth < MAX_DEPTH else json_scalars
        if schema is False:
            raise ValueError("no value fits the false schema")
        schema = self.flatten(schema)
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                rest = {k: v for k, v in schema.items() if k != keyword}
                branches = [self.flatten(merge(rest, branch)) for branch in schema[keyword]]
                # A member the object must have (a conditional's `required`) rules out the
                # branches that cannot carry it.
                able = [b for b in branches if _can_carry(b)]
                branches = able or branches
                # A deep value takes the plainest branch, so recursion ends.
                if depth >= MAX_DEPTH:
                    branches = branches[:1]
                found = st.one_of([self.strategy(b, depth + 1) for b in branches])
                if "not" in schema:
                    found = found.filter(self._refusal(schema["not"]))
                return found
        if "if" in schema:
            return self._conditional(schema, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self.strategy({**schema, "type": k}, depth) for k in kind])
        if kind is None:
            kind = "object" if "properties" in schema else None
        if kind is None:
            return json_values if depth < MAX_DEPTH else json_scalars
        typed: st.SearchStrategy[Any] = getattr(self, f"_{kind}")(schema, depth)
        return typed

    def flatten(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """``schema`` with its ``$ref`` and plain ``allOf`` members merged in."""
        node = dict(schema)
        while "$ref" in node:
            target = resolve(node.pop("$ref"), self.root)
            node = merge(target, node)
        conditions = []
        for member in node.pop("allOf", []):
            if "if" in member:
                conditions.append(member)
            else:
                node = merge(node, self.flatten(member))
        if conditions:
            node["allOf"] = conditions
        return node

    def _refusal(self, refused: Any) -> Callable[[Any], bool]:
        """A filter keeping the values ``refused`` (a ``not``) does not match."""
        return lambda value: not matches(refused, value, self.root)

    def _conditional(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
        base = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        condition = schema["if"]
        then = self.flatten(merge(merge(base, condition), schema.get("then", {})))
        otherwise = self.flatten(merge(base, schema.get("else", {})))
        return st.one_of(
            self.strategy(then, depth),
            self.strategy(otherwise, depth).filter(
                lambda value: not matches(condition, value, self.root)
            ),
        )

    # --- one strategy per type -----------------------------------------------------------

    def _string(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[str]:
        low = schema.get("minLength", 0)
        high = schema.get("maxLength")
        pattern = schema.get("pattern")
        found = _FORMATS.get(schema.get("format", ""))
        if found is None and pattern is not None:
            found = st.from_regex(pattern, fullmatch=True)
        if found is None:
            found = st.text(min_size=low, max_size=high if high is not None else 24)
        if pattern is not None:
            compiled = re.compile(pattern)
            found = found.filter(lambda s: compiled.search(s) is not None and "\n" not in s)
        return found.filter(lambda s: len(s) >= low and (high is None or len(s) <= high))

    def _integer(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[int]:
        low = max(schema.get("minimum", -SAFE_INTEGER), -SAFE_INTEGER)
        high = min(schema.get("maximum", SAFE_INTEGER), SAFE_INTEGER)
        if "exclusiveMinimum" in schema:
            low = max(low, int(schema["exclusiveMinimum"]) + 1)
        if "exclusiveMaximum" in schema:
            high = min(high, int(schema["exclusiveMaximum"]) - 1)
        return st.integers(min_value=int(low), max_value=int(high))

    def _number(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[float | int]:
        low = schema.get("minimum")
        high = schema.get("maximum")
        return self._integer(schema, depth) | st.floats(
            min_value=low,
            max_value=high,
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
            allow_infinity=False,
        )

    def _boolean(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[bool]:
        return st.booleans()

    def _null(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[None]:
        return st.none()

    def _array(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[list[Any]]:
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", low + MAX_EXTRA_ITEMS)
        if depth >= MAX_DEPTH:
            high = low
        elif self.complete:
            low = min(max(low, 1), high)
        items = self.strategy(schema.get("items", True), depth + 1)
        if schema.get("uniqueItems"):
            return st.lists(items, min_size=low, max_size=high, unique_by=_identity)
        return st.lists(items, min_size=low, max_size=high)

    def _object(self, schema: dict[str, Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
        return _objects(self, schema, depth)


def refused_members(schema: Mapping[str, Any]) -> set[str]:
    """The members ``not: {required}`` (or ``not: {anyOf: [{required}, ...]}``) refuses."""
    refused = schema.get("not", {})
    if not isinstance(refused, Mapping):
        return set()
    found = set(refused.get("required", ()))
    for branch in refused.get("anyOf", ()):
        found.update(branch.get("required", ()))
    return found


def _can_carry(schema: Mapping[str, Any]) -> bool:
    declared = schema.get("properties", {})
    open_ = schema.get("additionalProperties", True) is not False
    return all(name in declared or open_ for name in schema.get("required", ()))


def _identity(value: Any) -> str:
    import orjson

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


@st.composite
def _objects(draw: st.DrawFn, generator: Generator, schema: dict[str, Any], depth: int) -> Any:
    properties: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", ()))
    value: dict[str, Any] = {}
    # `not: {required: [...]}` (a conditional's branch): members the object must not have.
    refused = refused_members(schema)
    for name, sub in properties.items():
        if sub is False or name in refused:
            continue
        # Deep in a recursive structure only what is required is drawn, so it ends.
        wanted = name in required or (
            depth < MAX_DEPTH and (generator.complete or draw(st.booleans()))
        )
        if wanted:
            value[name] = draw(generator.strategy(sub, depth + 1))
    for pattern, sub in schema.get("patternProperties", {}).items():
        if depth < MAX_DEPTH and draw(st.booleans()):
            key = draw(st.from_regex(pattern).filter(lambda k: k not in properties))
            value[key] = draw(generator.strategy(sub, depth + 1))
    extra = schema.get("additionalProperties", True)
    for name in required:
        if name not in value:
            if extra is False:
                raise ValueError(f"required {name!r} has no schema to draw it from")
            # An open object may require a member it does not declare (a conditional's).
            value[name] = draw(generator.strategy(extra, depth + 1))
    for member in schema.get("allOf", []):
        _apply_condition(draw, generator, value, properties, member, depth)
    for name, needs in schema.get("dependentRequired", {}).items():
        if name in value:
            for other in needs:
                if other not in value:
                    value[other] = draw(generator.strategy(properties[other], depth + 1))
    return value


def _apply_condition(
    draw: st.DrawFn,
    generator: Generator,
    value: dict[str, Any],
    declared: dict[str, Any],
    member: Any,
    depth: int,
) -> None:
    """Make ``value`` satisfy one ``{if, then, else}`` of its object schema.

    The branch's properties apply on top of the object's own (both hold), and a property the
    branch constrains is drawn again from the two together.
    """
    branch = member.get("then" if matches(member["if"], value, generator.root) else "else")
    if not branch:
        return
    branch = generator.flatten(branch)
    constrained = branch.get("properties", {})

    def both(name: str) -> Any:
        own = declared.get(name, True)
        extra = constrained.get(name)
        if extra is None:
            return own
        return merge(own if isinstance(own, dict) else {}, extra)

    for name in constrained:
        if name in value:
            value[name] = draw(generator.strategy(both(name), depth + 1))
    for name in branch.get("required", ()):
        if name not in value:
            value[name] = draw(generator.strategy(both(name), depth + 1))
    for name in refused_members(branch):
        value.pop(name, None)
