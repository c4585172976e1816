"""Violations and verdicts, and the one mapping from a ``ValidationError`` to rule ids."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Generic, TypeVar, Union

import typing_extensions
from pydantic import BaseModel, Discriminator, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError
from typing_extensions import LiteralString

from . import rules
from ._compat import MISSING
from ._formats import FORMAT_BY_PATTERN
from ._model import WireModel, model_named
from .rules import Source

__all__ = [
    "Verdict",
    "Violation",
    "as_pydantic_error",
    "cap",
    "pointer",
    "quote",
    "truncated",
    "violation",
    "violations",
]

M = TypeVar("M", bound=BaseModel)

MAX_MESSAGE_CHARS: Final = 300
"""A violation's message is cut to this many characters."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One finding about a message.

    Attributes:
        rule: the stable rule id (see :mod:`envelopekit.rules`).
        pointer: RFC 6901 JSON pointer into the input, ``""`` for the whole document.
        message: a readable explanation.
        source: ``"json"``, ``"schema"``, ``"conformance"``, ``"policy"`` or ``"sequence"``.
    """

    rule: str
    pointer: str
    message: str
    source: Source

    def to_dict(self) -> dict[str, str]:
        """The violation as the JSON object the CLI prints."""
        return {
            "rule": self.rule,
            "pointer": self.pointer,
            "message": self.message,
            "source": self.source,
        }


# Not frozen: a verdict is built per message on the hot path, and a frozen dataclass pays
# object.__setattr__ per field (3x the construction, measured in issue 13). Read-only by contract:
# envelopekit builds each verdict once, with its final lists, and never changes it after;
# `tests/test_check.py` holds `check` to that.
@dataclass(slots=True)
class Verdict(Generic[M]):
    """What :func:`envelopekit.check` found: read-only, built once with everything in it.

    Attributes:
        spec: the spec the message was checked against.
        envelope: the parsed model when the message is valid, else ``None``.
        violations: why the message is refused; empty when ``ok``.
        warnings: what was accepted but noted (a dropped forbidden key, an unsafe integer).
    """

    spec: str
    envelope: M | None
    violations: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the message is valid (it may still carry warnings)."""
        return not self.violations

    def rules(self) -> list[str]:
        """The rule ids of the violations, in order, without repeats."""
        return list(dict.fromkeys(v.rule for v in self.violations))


def pointer(*segments: str | int) -> str:
    """Build an RFC 6901 pointer from raw path segments (``~`` and ``/`` are escaped)."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def violation(rule: str, pointer: str, message: str) -> Violation:
    """Make a violation of a catalogued rule, with the source the catalogue gives it.

    Raises:
        ValueError: when ``rule`` is not in :mod:`envelopekit.rules`.
    """
    if not rules.is_rule(rule):
        raise ValueError(f"{rule!r} is not in the rule catalogue")
    if len(message) > MAX_MESSAGE_CHARS:
        # A message quoting the input quotes a short prefix of it, whatever formatted it.
        message = message[: MAX_MESSAGE_CHARS - 3] + "..."
    return Violation(rule, pointer, message, rules.source_of(rule))


def as_pydantic_error(found: Violation) -> PydanticCustomError:
    """The error a validator raises so that the mapper reports ``found`` (rule and pointer)."""
    # pydantic renders the message in Rust, which refuses a lone surrogate (a Python string
    # from `json.loads` may hold one): escape it, or reading the error would raise.
    return PydanticCustomError(
        literal(found.rule), literal(printable(found.message)), {"pointer": found.pointer}
    )


def literal(text: str) -> LiteralString:
    """``text`` as pydantic-core's error constructors are typed to take it.

    They ask for a ``LiteralString`` so that input never becomes a message template by
    accident; our rule ids and messages are built by us (input enters as quoted text).
    """
    return text  # pyright: ignore[reportReturnType]


def printable(text: str) -> str:
    """``text``, any lone surrogate in it (from a ``json.loads`` string) backslash-escaped."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


# --- pydantic error type -> JSON Schema keyword --------------------------------------------------

_KEYWORD_BY_ERROR_TYPE: dict[str, str] = {
    "missing": "required",
    "extra_forbidden": "additionalProperties",
    "enum": "enum",
    "greater_than_equal": "minimum",
    "greater_than": "exclusiveMinimum",
    "less_than_equal": "maximum",
    "less_than": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "string_too_short": "minLength",
    "string_too_long": "maxLength",
    "too_short": "minItems",
    "too_long": "maxItems",
    "union_tag_invalid": "oneOf",
    "union_tag_not_found": "oneOf",
}


_FORMAT_MESSAGES = {
    "format.uuid": "Not a UUID in its 8-4-4-4-12 hexadecimal form.",
    "format.date-time": (
        "Not an RFC 3339 date-time on a real calendar day (YYYY-MM-DDThh:mm:ss[.f](Z|±hh:mm))."
    ),
    "format.uri": "Not an absolute URI (scheme:…, ASCII, % only as a percent-encoding).",
}


def _keyword(error: ErrorDetails) -> str:
    kind = error["type"]
    keyword = _KEYWORD_BY_ERROR_TYPE.get(kind)
    if keyword is not None:
        return keyword
    if kind == "string_pattern_mismatch":
        return FORMAT_BY_PATTERN.get(str(error.get("ctx", {}).get("pattern", "")), "pattern")
    if kind == "literal_error":
        # One expected value is a schema `const`; several are an `enum`.
        expected = str(error.get("ctx", {}).get("expected", ""))
        return "enum" if " or " in expected else "const"
    if kind.endswith(("_type", "_parsing")) or kind in {"int_from_float", "is_instance_of"}:
        return "type"
    return "invalid"


# --- loc -> (innermost wire model, pointer) ----------------------------------------------------


def _union_members(tp: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return typing.get_args(tp)
    return None


def _strip_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    if typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        return args[0], tuple(args[1:])
    return tp, ()


def _tag_of(member: Any) -> str | None:
    _, metadata = _strip_annotated(member)
    for item in metadata:
        tag = getattr(item, "tag", None)
        if isinstance(tag, str) and type(item).__name__ == "Tag":
            return tag
    return None


def _label(member: Any) -> str:
    inner, _ = _strip_annotated(member)
    return getattr(inner, "__name__", str(inner))


def _field_type(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias, info.validation_alias):
            annotation: Any = info.annotation
            if isinstance(annotation, TypeVar):
                # An unparametrised generic field (`SomEnvelope.payload`): validated as the
                # type variable's default.
                default = getattr(annotation, "__default__", None)
                annotation = None if default is typing_extensions.NoDefault else default
            metadata = tuple(info.metadata)
            if info.discriminator is not None:
                metadata += (info.discriminator,)
            if metadata:
                args = (annotation, *metadata)
                return typing.Annotated[args]
            return annotation
    return None


@lru_cache(maxsize=4096)
def _resolve(
    root: Any, loc: tuple[str | int, ...], own: bool = False
) -> tuple[str, str, type | None]:
    """Walk ``loc`` through the types under ``root``.

    Returns the schema name of the innermost wire model on the path, the pointer with the
    union-member segments pydantic inserts removed, and that innermost model. With ``own``
    (an error a model's own validator raised), a ``loc`` that ends at a wire model belongs to
    that model, not to the one that declared the field holding it.
    """
    schema = getattr(root, "__schema_name__", "")
    innermost: type | None = root if isinstance(root, type) else None
    segments: list[str | int] = []
    current: Any = root
    index = 0
    while index < len(loc):
        segment = loc[index]
        current, metadata = _strip_annotated(current)
        members = _union_members(current)
        if members is not None:
            discriminated = any(isinstance(m, Discriminator) for m in metadata) or any(
                _tag_of(m) is not None for m in members
            )
            chosen = None
            if isinstance(segment, str):
                for member in members:
                    if (discriminated and _tag_of(member) == segment) or _label(member) == segment:
                        chosen = member
                        break
            if chosen is not None:
                current = chosen
                index += 1
                continue
            # A plain optional: descend into the one member that is not None (or MISSING).
            non_none = [m for m in members if m is not type(None) and m is not MISSING]
            current = non_none[0] if len(non_none) == 1 else None
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            if issubclass(current, WireModel) and current.__schema_name__:
                schema = current.__schema_name__
                innermost = current
            segments.append(segment)
            current = _field_type(current, str(segment))
            index += 1
            continue
        origin = typing.get_origin(current)
        args = typing.get_args(current)
        segments.append(segment)
        index += 1
        if origin in (list, tuple, set, frozenset, Sequence) and args:
            current = args[0]
        elif origin is dict and len(args) == 2:
            # pydantic reports a bad key as [key, "[key]"]: drop the second segment.
            if index < len(loc) and loc[index] == "[key]":
                index += 1
                current = None
            else:
                current = args[1]
        else:
            current = None
    terminal, _ = _strip_annotated(current)
    if (
        own
        and isinstance(terminal, type)
        and issubclass(terminal, WireModel)
        and terminal.__schema_name__
    ):
        return terminal.__schema_name__, pointer(*segments), terminal
    if not schema:
        # A union root (a classifying TypeAdapter) whose error is on the chosen member itself,
        # e.g. a top-level `model_type`: the member is the innermost model.
        current, _ = _strip_annotated(current)
        if isinstance(current, type) and issubclass(current, WireModel):
            schema = current.__schema_name__
            innermost = current
    return schema, pointer(*segments), innermost


def _one(error: ErrorDetails, root: Any) -> Violation:
    kind = error["type"]
    loc = tuple(error["loc"])
    message = error["msg"]
    if kind == "string_unicode":
        # A str input holding a lone surrogate: not Unicode text, so not JSON either.
        return violation(rules.JSON_INVALID, "", f"Invalid JSON: {message}.")
    if kind == "json_invalid":
        text = str(error.get("ctx", {}).get("error", message))
        if "recursion limit" in text:
            return violation(rules.MESSAGE_TOO_DEEP, "", f"The JSON nests too deeply: {text}.")
        return violation(rules.JSON_INVALID, "", f"Invalid JSON: {text}.")
    schema, ptr, innermost = _resolve(root, loc, kind in rules.KEYWORDS or kind in rules.NAMED)
    extra = error.get("ctx", {}).get("pointer")
    if isinstance(extra, str):
        ptr += extra
    if kind in rules.NAMED:
        return violation(kind, ptr, message)
    field_rules = getattr(innermost, "__field_rules__", {})
    if loc and isinstance(loc[-1], str) and loc[-1] in field_rules and kind != "missing":
        rule = field_rules[loc[-1]]
        return violation(rule, ptr, f"{rules.NAMED[rule].summary} ({message})")
    keyword = kind if kind in rules.KEYWORDS else _keyword(error)
    if keyword in _FORMAT_MESSAGES and kind == "string_pattern_mismatch":
        message = _FORMAT_MESSAGES[keyword]
    false_keys: frozenset[str] = getattr(innermost, "__false_schema__", frozenset())
    if keyword == "additionalProperties" and loc and loc[-1] in false_keys:
        keyword = "false_schema"
        message = f"The key {loc[-1]!r} is not allowed in this schema version."
    return violation(rules.structural(schema, keyword), ptr, message)


def _is_root(root: Any) -> bool:
    """A wire model, or a union of them (the type of a ``TypeAdapter`` that classifies)."""
    inner = _strip_annotated(root)[0]
    if getattr(inner, "__schema_name__", ""):
        return True
    members = _union_members(inner)
    return members is not None and all(_is_root(member) for member in members)


def violations(
    exc: ValidationError, *, model: Any = None, limit: int | None = None, partial: bool = False
) -> list[Violation]:
    """Map a pydantic ``ValidationError`` to violations with stable rule ids and pointers.

    Args:
        exc: the error raised by ``model_validate_json`` (or any validation of our models).
        model: the model that was validated, or the union of models a ``TypeAdapter``
            validated (discriminated by ``Tag``s); found from ``exc.title`` when not given.
        limit: at most this many violations; past it, one ``violations.truncated`` says how
            many of pydantic's errors were left out, and those are never mapped.
        partial: the error came from a validation that stopped each array at its first
            failing item; when one did, ``violations.truncated`` says the rest went unchecked.

    Returns:
        One violation per distinct (rule, pointer), in pydantic's order.

    Raises:
        TypeError: when the error did not come from an envelopekit model.
    """
    root = model if model is not None else model_named(exc.title)
    if root is None or not _is_root(root):
        raise TypeError(f"{exc.title!r} is not an envelopekit wire model; pass model=")
    seen: dict[tuple[str, str], Violation] = {}
    errors = exc.errors(include_url=False)
    mapped = 0
    in_array = False
    for error in errors:
        if limit is not None and len(seen) >= limit:
            break
        mapped += 1
        if partial and not in_array:
            in_array = any(type(segment) is int for segment in error["loc"])
        found = _one(error, root)
        seen.setdefault((found.rule, found.pointer), found)
        schema, dot, _ = found.rule.partition(".")
        if dot and schema in rules.SCHEMAS:
            for keyword in _also(error, found):
                other = violation(rules.structural(schema, keyword), found.pointer, found.message)
                seen.setdefault((other.rule, other.pointer), other)
    found_list = list(seen.values())
    if limit is not None and len(found_list) > limit:
        del found_list[limit:]
    left = len(errors) - mapped
    if left:
        found_list.append(truncated(left))
    elif in_array:
        found_list.append(
            violation(
                rules.VIOLATIONS_TRUNCATED,
                "",
                "A large message: validation stopped at the first failing item of each array, "
                "so later items were not checked.",
            )
        )
    return found_list


def truncated(left: int) -> Violation:
    """The ``violations.truncated`` finding for ``left`` findings left out."""
    return violation(
        rules.VIOLATIONS_TRUNCATED,
        "",
        f"{left} more finding{'s' if left != 1 else ''} left out (the max_violations setting).",
    )


def cap(found: list[Violation], limit: int) -> list[Violation]:
    """``found`` cut to ``limit`` findings and one ``violations.truncated`` counting the rest.

    A ``violations.truncated`` already in ``found`` (a scan that stopped building its own
    findings) adds its count to the one kept.
    """
    if len(found) <= limit:
        return found
    kept: list[Violation] = []
    left = 0
    for finding in found:
        if finding.rule == rules.VIOLATIONS_TRUNCATED:
            count = finding.message.partition(" ")[0]
            left += int(count) if count.isdigit() else 0
        elif len(kept) < limit:
            kept.append(finding)
        else:
            left += 1
    return [*kept, truncated(left)] if left else kept


def quote(value: object, limit: int = 40) -> str:
    """``repr(value)`` (``str`` for an int), cut to a short prefix for a long input.

    A huge integer is described by its size: writing out its digits costs quadratic time, and
    past 4,300 digits Python refuses to.
    """
    if type(value) is int:
        if value.bit_length() > 128:
            magnitude = abs(value)
            digits = int((magnitude.bit_length() - 1) * 0.30102999566398) + 1  # a lower bound
            if magnitude >= 10**digits:
                digits += 1
            return f"an integer of {digits} digits"
        return str(value)
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def _also(error: ErrorDetails, found: Violation) -> list[str]:
    """The other keywords an all-errors validator reports with ``found``, at the same pointer.

    * A custom error may stand for several keywords at once, as a failed ``anyOf`` with what its
      branches failed: ``ctx["also"]`` lists them, space-separated.
    * A failed string ``enum`` given no string at all is ``type`` too: every string ``enum`` of
      the three specs' schemas sits next to ``type: string``.
    """
    ctx = error.get("ctx", {})
    also = ctx.get("also")
    keywords = also.split() if isinstance(also, str) else []
    if (
        error["type"] in ("literal_error", "enum")
        and found.rule.endswith(".enum")
        and not isinstance(error.get("input"), str)
        and str(ctx.get("expected", "")).startswith("'")
    ):
        keywords.append("type")
    return keywords


def sort_violations(found: Iterable[Violation]) -> list[Violation]:
    """Violations in a stable order: by pointer, then rule."""
    return sorted(found, key=lambda v: (v.pointer, v.rule))
