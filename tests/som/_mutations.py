"""Schema-guided mutations of valid SOM messages, for the differential test.

Every value of a valid envelope is reached by a JSON path; the official schemas say what the
value is (type, enum, const, pattern, format, via ``$ref`` and ``anyOf`` branches), and each
mutation changes one thing: a member removed, a wrong type, an enum value changed, a pattern
or format broken, a ``null`` inserted, an unknown key added.

Mutations whose kind starts with ``quirk.`` probe the documented places where the official
Python toolchain (jsonschema + rfc3339-validator) is looser than the strict intersection of the
reference validators that envelopekit implements (som.md §1.3); the test lists them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.som._corpus import SCHEMA_BY_MESSAGE_TYPE, schema

Path = tuple[str | int, ...]

SCHEMAS: dict[str, dict[str, Any]] = {
    name: schema(name) for name in ("envelope", *sorted(set(SCHEMA_BY_MESSAGE_TYPE.values())))
}

ARABIC_INDIC = "٠١٢٣٤٥٦٧٨٩"


@dataclass(frozen=True)
class Mutation:
    """One change to a valid document."""

    kind: str
    path: Path
    document: dict[str, Any]

    @property
    def where(self) -> str:
        return "/" + "/".join(str(p) for p in self.path)


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/")
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
    return node


def _expand(node: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    """A subschema and its ``anyOf`` branches, references resolved."""
    if not isinstance(node, dict):
        return []
    node = _resolve(node, root)
    found = [node]
    for branch in node.get("anyOf", []):
        found.extend(_expand(branch, root))
    return found


@dataclass
class Facts:
    """What the schemas say about the value at one path."""

    enum: list[Any]
    const: list[Any]
    patterns: list[str]
    formats: list[str]
    closed_object: bool
    extensions: bool


def facts_at(document: dict[str, Any], path: Path) -> Facts:
    """Collect the schema facts that apply to ``document`` at ``path``."""
    root = SCHEMAS["envelope"]
    nodes = [root]
    for depth, step in enumerate(path):
        if depth == 0 and step == "payload":
            family = SCHEMA_BY_MESSAGE_TYPE.get(document.get("message_type", ""))
            if family is None:
                return Facts([], [], [], [], False, False)
            root = SCHEMAS[family]
            nodes = [root]
            continue
        following: list[dict[str, Any]] = []
        for node in nodes:
            for option in _expand(node, root):
                if isinstance(step, int):
                    following.extend(_expand(option.get("items"), root))
                else:
                    following.extend(_expand(option.get("properties", {}).get(step), root))
        nodes = following
    expanded = [option for node in nodes for option in _expand(node, root)]
    return Facts(
        enum=[v for n in expanded for v in n.get("enum", [])],
        const=[n["const"] for n in expanded if "const" in n],
        patterns=[n["pattern"] for n in expanded if "pattern" in n],
        formats=[n["format"] for n in expanded if "format" in n],
        closed_object=any(n.get("additionalProperties") is False for n in expanded),
        extensions=bool(path) and path[-1] == "extensions",
    )


def walk(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every (path, value) under ``value``, the root excluded."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), item
            yield from walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index), item
            yield from walk(item, (*path, index))


def _set(document: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    target: Any = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


def _remove(document: dict[str, Any], path: Path) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    target: Any = changed
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return changed


_SAMPLES: tuple[Any, ...] = (0, 2.5, "x", True, [], {"k": 1})


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _unicode_digit(text: str) -> str | None:
    found = re.search(r"[0-9]", text)
    if found is None:
        return None
    i = found.start()
    return text[:i] + ARABIC_INDIC[int(text[i])] + text[i + 1 :]


def mutations(document: dict[str, Any]) -> Iterator[Mutation]:
    """Every single-change mutation of ``document`` this module knows."""
    for path, value in list(walk(document)):
        facts = facts_at(document, path)
        parent_is_object = isinstance(path[-1], str)

        def make(kind: str, new: Any, path: Path = path) -> Mutation:
            return Mutation(kind, path, _set(document, path, new))

        if parent_is_object:
            yield Mutation("remove", path, _remove(document, path))
        yield make("null", None)
        for sample in _SAMPLES:
            if _json_kind(sample) != _json_kind(value):
                yield make("wrong_type", sample)
        if isinstance(value, int) and not isinstance(value, bool):
            yield make("integer_as_float", float(value))
            yield make("negative_number", -1 - value)
        if isinstance(value, float):
            yield make("number_above_one", value + 1.0)
        if isinstance(value, dict):
            yield make("unknown_key", {**value, "zz_unknown": 1})
            if facts.extensions:
                yield make("extension_key_valid", {**value, "com.acme.x": {"a": None}})
                yield make("extension_key_bad", {**value, "org.acme.x": 1})
                yield make("extension_key_upper", {**value, "com.ACME.x": 1})
        if isinstance(value, list) and value:
            yield make("array_duplicated_item", [*value, copy.deepcopy(value[0])])
            yield make("array_emptied", [])
        if not isinstance(value, str):
            continue
        # The official Python toolchain asserts no `uri` format: any string passes it there.
        yield make("quirk.uri_not_asserted" if "uri" in facts.formats else "string_empty", "")
        for other in facts.enum:
            if other != value:
                yield make("enum_changed", other)
        if facts.enum:
            yield make(
                "enum_lowercased", value.lower() if value.lower() != value else value.upper()
            )
            yield make("enum_unknown", value + "_X")
        for _ in facts.const:
            yield make("const_changed", value + "x")
        if facts.patterns:
            yield make("pattern_prefixed", "!" + value)
            yield make("pattern_suffixed", value + " x")
            yield make("pattern_uppercased", value.upper())
            yield make("quirk.pattern_trailing_newline", value + "\n")
            digit = _unicode_digit(value)
            if digit is not None:
                yield make("quirk.pattern_unicode_digit", digit)
        if "uuid" in facts.formats:
            yield make("uuid_no_hyphens", value.replace("-", ""))
            yield make("uuid_braces", "{" + value + "}")
            yield make("uuid_urn", "urn:uuid:" + value)
            yield make("uuid_upper", value.upper())
            yield make("uuid_short", value[:-1])
            yield make("quirk.uuid_trailing_hyphen", value + "-")
            digit = _unicode_digit(value)
            if digit is not None:
                yield make("quirk.uuid_unicode_digit", digit)
        if "date-time" in facts.formats:
            yield make("date_time_space", value.replace("T", " ", 1))
            yield make("date_time_lower", value.lower())
            yield make("date_time_no_zone", re.sub(r"(Z|[+-][0-9]{2}:[0-9]{2})$", "", value))
            yield make("date_time_offset", re.sub(r"Z$", "+02:00", value))
            yield make("date_time_offset_no_colon", re.sub(r"Z$", "+0000", value))
            yield make("date_time_feb_30", "2026-02-30T10:00:00Z")
            yield make("date_time_leap_day", "2028-02-29T10:00:00Z")
            yield make("date_time_hour_24", "2026-09-11T24:00:00Z")
            yield make("date_time_leap_second", "2026-12-31T23:59:60Z")
            yield make("date_time_date_only", value[:10])
            yield make("quirk.date_time_trailing_newline", value + "\n")
            digit = _unicode_digit(value)
            if digit is not None:
                yield make("date_time_unicode_digit", digit)
        if "uri" in facts.formats:
            yield make("uri_other_scheme", "urn:example:story-1")
            yield make("quirk.uri_not_asserted", "not a uri")
            yield make("quirk.uri_not_asserted", "/stories/relative.json")
            # Every character allowed, the structure not: a port of letters, `[` outside a host.
            yield make("quirk.uri_not_asserted", "https://wire.ap.org:http/x")
            yield make("quirk.uri_not_asserted", "urn:story[1]")
