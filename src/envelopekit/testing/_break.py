"""Breaking one rule of a valid message: the sites a rule applies to, and the change at each.

A valid document is walked beside its generated schema (references, branches and conditionals
resolved as they apply to this document), each node remembering the schema file it belongs to
(the innermost model with a ``__schema_name__``, as rule ids name it). A structural rule
``<schema>.<keyword>`` can be broken wherever a node of ``<schema>`` carries ``<keyword>``;
the change is the smallest one that fails that keyword alone.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from ._generate import Generator, matches, merge, refused_members, resolve

__all__ = ["DELETE", "Change", "Fill", "Site", "changes", "schema_names", "sites"]

Path = tuple[str | int, ...]
DELETE: Final = object()
"""A :class:`Change` value that removes the member instead of setting it."""


@dataclass(frozen=True)
class Fill:
    """A :class:`Change` value still to be drawn: any value ``schema`` accepts."""

    schema: Any


@dataclass(frozen=True)
class Site:
    """One value of a document and the schema node that judges it."""

    path: Path
    schema: Mapping[str, Any]
    scope: str
    value: Any
    guards: tuple[tuple[Path, Any], ...] = ()
    """The ``if`` clauses (with the path they judge) that chose this node's branch."""
    outer: str = ""
    """Where a model of another schema file starts here: the referrer's schema file, which
    reports the value's type (the envelope checks that `payload` is an object)."""


@dataclass(frozen=True)
class Change:
    """Set (or, with :data:`DELETE`, remove) the value at ``path``."""

    path: Path
    value: Any

    def apply(self, document: Any) -> Any:
        """A copy of ``document`` with the change made."""
        if not self.path:
            return self.value
        head, *rest = self.path
        copy: Any = list(document) if isinstance(document, list) else dict(document)
        if rest:
            copy[head] = Change(tuple(rest), self.value).apply(copy[head])
        elif self.value is DELETE:
            del copy[head]
        else:
            copy[head] = self.value
        return copy


@cache
def schema_names(spec: str) -> dict[str, str]:
    """``$defs`` name -> the schema file its model reports in rule ids, for one spec."""
    package = importlib.import_module(f"envelopekit.{spec}")
    found: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        # sys.modules may hold None for a module whose import was blocked.
        if not name.startswith(package.__name__ + ".") or module is None:  # pyright: ignore[reportUnnecessaryComparison]
            continue
        for attribute, value in vars(module).items():
            own = getattr(value, "__schema_name__", "")
            if isinstance(value, type) and isinstance(own, str) and own:
                found.setdefault(attribute, own)
    return found


def _enter(generator: Generator, node: Any, scope: str, spec: str) -> tuple[Any, str]:
    """``node`` with references followed, and the schema file it then belongs to."""
    if not isinstance(node, Mapping):
        return node, scope
    node = dict(node)
    while "$ref" in node:
        ref = node.pop("$ref")
        scope = schema_names(spec).get(ref.rpartition("/")[2], scope)
        node = merge(resolve(ref, generator.root), node)
    return generator.flatten(node), scope


def sites(
    generator: Generator,
    document: Any,
    scope: str,
    spec: str,
    guards: tuple[tuple[Path, Any], ...] = (),
) -> Iterator[Site]:
    """Every value of ``document`` with the schema node (resolved for it) that judges it."""
    yield from _walk(generator, generator.root, document, (), scope, spec, guards)


def _walk(
    generator: Generator,
    node: Any,
    value: Any,
    path: Path,
    scope: str,
    spec: str,
    guards: tuple[tuple[Path, Any], ...],
    outer: str = "",
) -> Iterator[Site]:
    before = scope
    node, scope = _enter(generator, node, scope, spec)
    if before != scope:
        outer = before
    if not isinstance(node, Mapping):
        return
    for keyword in ("anyOf", "oneOf"):
        if keyword in node:
            yield Site(path, node, scope, value, guards, outer)
            fitting = [b for b in node[keyword] if matches(b, value, generator.root)]
            rest = {k: v for k, v in node.items() if k != keyword}
            if len(fitting) == 1:
                # A change that moves the value to another branch breaks nothing.
                held = (*guards, (path, fitting[0]))
                chosen = merge(rest, fitting[0])
                yield from _walk(generator, chosen, value, path, scope, spec, held, outer)
            elif fitting:
                # Several fit: the union is a constraint beside the node's own schema.
                held = (*guards, (path, {keyword: node[keyword]}))
                yield from _walk(generator, rest, value, path, scope, spec, held, outer)
            return
    if "if" in node:
        taken = matches(node["if"], value, generator.root)
        condition = node["if"] if taken else {"not": node["if"]}
        rest = {k: v for k, v in node.items() if k not in ("if", "then", "else")}
        chosen = merge(rest, node.get("then" if taken else "else", {}))
        held = (*guards, (path, condition))
        yield from _walk(generator, chosen, value, path, scope, spec, held, outer)
        return
    own: list[tuple[Path, Any]] = []
    # A conditional guards the members its branch constrains (and the object's own
    # required/refused members): a change that flips its `if` selects other rules there.
    by_member: dict[str, list[tuple[Path, Any]]] = {}
    if isinstance(value, dict):
        for member in node.get("allOf", []):
            taken = matches(member["if"], value, generator.root)
            branch = member.get("then" if taken else "else")
            guard = (path, member["if"] if taken else {"not": member["if"]})
            own.append(guard)
            if branch:
                constrained = generator.flatten(branch).get("properties", {})
                node = merge(node, {"properties": constrained})
                for name in constrained:
                    by_member.setdefault(name, []).append(guard)
    yield Site(path, node, scope, value, (*guards, *own), outer)
    if isinstance(value, dict):
        declared = node.get("properties", {})
        for name, item in value.items():
            sub = declared.get(name)
            if sub is None:
                for pattern, candidate in node.get("patternProperties", {}).items():
                    if re.search(pattern, name):
                        sub = candidate
            if sub is None:
                sub = node.get("additionalProperties", True)
            if isinstance(sub, Mapping):
                held = (*guards, *by_member.get(name, ()))
                yield from _walk(generator, sub, item, (*path, name), scope, spec, held)
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _walk(generator, node["items"], item, (*path, index), scope, spec, guards)


# --- the change that fails one keyword at one site ----------------------------------------------

_JSON_TYPES: Final = ("string", "integer", "number", "boolean", "array", "object", "null")
# A value of each JSON type, tried in this order for a type mismatch.
_OF_TYPE: Final[dict[str, Any]] = {
    "array": [],
    "string": "not of this type",
    "integer": 12345,
    "object": {"unexpected": True},
    "boolean": True,
    "null": None,
}
_BAD_FORMAT: Final[dict[str, str]] = {
    "uuid": "not-a-uuid",
    "date-time": "2026-02-30T25:61:00Z",
    "uri": "no scheme at all",
}
_OFF_PATTERN: Final = ("", "!", " ", "NOT VALID \u00e9", "0", "-")
UNDECLARED: Final = "zz_undeclared_member"


def _allowed(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    kinds: set[str] = {str(k) for k in (kind if isinstance(kind, list) else [kind])}
    if "number" in kinds:
        kinds.add("integer")
    return kinds


def _fits(value: Any, kind: str) -> bool:
    return matches({"type": kind}, value, {})


def _required(site: Site) -> Iterator[Change]:
    if isinstance(site.value, dict):
        for name in site.schema.get("required", ()):
            if name in site.value:
                yield Change((*site.path, name), DELETE)


def _additional(site: Site) -> Iterator[Change]:
    closed = isinstance(site.value, dict) and site.schema.get("additionalProperties") is False
    patterns = site.schema.get("patternProperties", {})
    if closed and not any(re.search(p, UNDECLARED) for p in patterns):
        yield Change((*site.path, UNDECLARED), "x")


def _false_schema(site: Site) -> Iterator[Change]:
    if isinstance(site.value, dict):
        for name, sub in site.schema.get("properties", {}).items():
            if sub is False:
                yield Change((*site.path, name), "retired")


def _type(site: Site) -> Iterator[Change]:
    if "type" not in site.schema or "const" in site.schema or not site.path:
        return  # (a constant of the wrong type is reported as the const)
    allowed = _allowed(site.schema)
    for kind, value in _OF_TYPE.items():
        if kind not in allowed and not any(_fits(value, k) for k in allowed):
            yield Change(site.path, value)
            return


def _enum(site: Site) -> Iterator[Change]:
    values = site.schema.get("enum")
    if values and site.path:
        if all(isinstance(v, str) for v in values):
            yield Change(site.path, "NOT_IN_ENUM")
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            yield Change(site.path, max(values) + 1)


def _const(site: Site) -> Iterator[Change]:
    if "const" not in site.schema or "enum" in site.schema or not site.path:
        return  # (with an enum beside it, a miss is reported as the enum)
    expected = site.schema["const"]
    if isinstance(expected, bool):
        yield Change(site.path, not expected)
    elif isinstance(expected, str):
        yield Change(site.path, expected + "-other")
    elif isinstance(expected, int):
        yield Change(site.path, expected + 1)


def _pattern(site: Site) -> Iterator[Change]:
    pattern = site.schema.get("pattern")
    if pattern is None or not isinstance(site.value, str) or not site.path:
        return
    if "format" in site.schema:
        return  # the format's own spelling: a miss is reported as the format
    compiled = re.compile(pattern)
    low = site.schema.get("minLength", 0)
    for candidate in _OFF_PATTERN:
        if compiled.search(candidate) is None and len(candidate) >= low:
            yield Change(site.path, candidate)
            return


def _format(name: str) -> Callable[[Site], Iterator[Change]]:
    def broken(site: Site) -> Iterator[Change]:
        if site.schema.get("format") == name and isinstance(site.value, str) and site.path:
            yield Change(site.path, _BAD_FORMAT[name])

    return broken


def _bound(keyword: str) -> Callable[[Site], Iterator[Change]]:
    def broken(site: Site) -> Iterator[Change]:
        bound = site.schema.get(keyword)
        if bound is None or isinstance(site.value, bool) or not site.path:
            return
        if not isinstance(site.value, int | float):
            return
        step = {"minimum": -1, "maximum": 1, "exclusiveMinimum": 0, "exclusiveMaximum": 0}
        value = bound + step[keyword]
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            return  # beyond signed 64-bit the number itself is refused (number.out_of_range)
        yield Change(site.path, value)

    return broken


def _min_length(site: Site) -> Iterator[Change]:
    low = site.schema.get("minLength", 0)
    if low >= 1 and isinstance(site.value, str) and site.path:
        yield Change(site.path, site.value[: low - 1])


def _max_length(site: Site) -> Iterator[Change]:
    high = site.schema.get("maxLength")
    if high is not None and isinstance(site.value, str) and site.path:
        yield Change(site.path, "x" * (high + 1))


def _min_items(site: Site) -> Iterator[Change]:
    low = site.schema.get("minItems", 0)
    if low >= 1 and isinstance(site.value, list) and site.path:
        yield Change(site.path, site.value[: low - 1])


def _max_items(site: Site) -> Iterator[Change]:
    high = site.schema.get("maxItems")
    if high is not None and isinstance(site.value, list) and site.value and site.path:
        yield Change(site.path, [site.value[0]] * (high + 1))


def _unique_items(site: Site) -> Iterator[Change]:
    if site.schema.get("uniqueItems") and isinstance(site.value, list) and site.value:
        yield Change(site.path, [*site.value, site.value[0]])


def _branches(keyword: str) -> Callable[[Site], Iterator[Change]]:
    def broken(site: Site) -> Iterator[Change]:
        branches = site.schema.get(keyword)
        if not branches:
            return
        if isinstance(site.value, dict) and all(set(b) == {"required"} for b in branches):
            # "one of these members at least": take them all away.
            names = {name for b in branches for name in b["required"]}
            kept = {k: v for k, v in site.value.items() if k not in names}
            yield Change(site.path, kept)
            return
        if not site.path or any("$ref" in b for b in branches):
            return
        for value in _OF_TYPE.values():
            if not any(matches(b, value, {}) for b in branches):
                yield Change(site.path, value)
                return

    return broken


def _branch(site: Site, member: Mapping[str, Any]) -> Mapping[str, Any]:
    taken = matches(member["if"], site.value, {})
    found = member.get("then" if taken else "else", {})
    return found if isinstance(found, Mapping) else {}


def _conditional_required(site: Site) -> Iterator[Change]:
    """Take away a member the applying branch of a conditional requires."""
    if isinstance(site.value, dict):
        for member in site.schema.get("allOf", []):
            for name in _branch(site, member).get("required", ()):
                if name in site.value:
                    yield Change((*site.path, name), DELETE)


def _not(site: Site) -> Iterator[Change]:
    """Add a member the applying branch of a conditional refuses (``not: {required}``)."""
    if isinstance(site.value, dict):
        for member in site.schema.get("allOf", []):
            for name in sorted(refused_members(_branch(site, member))):
                if name not in site.value:
                    # A valid value, so the refusal is the conditional's alone.
                    declared = site.schema.get("properties", {}).get(name, True)
                    yield Change((*site.path, name), Fill(declared))


BREAKERS: Final[dict[str, Callable[[Site], Iterator[Change]]]] = {
    "required": lambda site: iter((*_required(site), *_conditional_required(site))),
    "additionalProperties": _additional,
    "false_schema": _false_schema,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "pattern": _pattern,
    "format.uuid": _format("uuid"),
    "format.date-time": _format("date-time"),
    "format.uri": _format("uri"),
    "minimum": _bound("minimum"),
    "maximum": _bound("maximum"),
    "exclusiveMinimum": _bound("exclusiveMinimum"),
    "exclusiveMaximum": _bound("exclusiveMaximum"),
    "minLength": _min_length,
    "maxLength": _max_length,
    "minItems": _min_items,
    "maxItems": _max_items,
    "uniqueItems": _unique_items,
    "anyOf": _branches("anyOf"),
    "oneOf": _branches("oneOf"),
    "not": _not,
}
"""Structural keyword -> the changes that fail it at a site."""


def value_at(document: Any, path: Path) -> Any:
    """The value at ``path``, or :data:`DELETE` when there is none."""
    node = document
    try:
        for part in path:
            node = node[part]
    except (KeyError, IndexError, TypeError):
        return DELETE
    return node


def changes(
    document: Any,
    found: list[Site],
    schema: str,
    keyword: str,
    root: Mapping[str, Any],
    claimed: frozenset[Path] = frozenset(),
) -> list[Change]:
    """Every change that fails ``keyword`` of ``schema`` somewhere among ``found``.

    A change is left out when it moves a value to another branch of a conditional or union
    (it breaks nothing there, it selects other rules), or when it lands on a ``claimed`` path:
    one whose failure the model reports under a named rule instead.
    """
    breaker = BREAKERS.get(keyword)
    if breaker is None:
        return []
    kept = []
    for site in found:
        scope = site.outer if keyword == "type" and site.outer else site.scope
        if scope != schema:
            continue
        for change in breaker(site):
            if change.path in claimed:
                continue
            after = change.apply(document)
            if all(
                (here := value_at(after, where)) is not DELETE and matches(guard, here, root)
                for where, guard in site.guards
            ):
                kept.append(change)
    return kept
