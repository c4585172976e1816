"""Violations, verdicts, the raise-site helper and the one mapping from pydantic errors.

A validator refuses a value with :func:`rule_error`, naming its rule; :func:`violations` turns a
``ValidationError`` into violations by looking that rule up, or, for an error pydantic-core
raised itself, by a table and the type at the end of the error's location.
"""

from __future__ import annotations

import enum
import inspect
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Generic, Literal, TypeVar, Union

import typing_extensions
from pydantic import BaseModel, Discriminator, GetCoreSchemaHandler, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import CoreSchema, ErrorDetails, InitErrorDetails, PydanticCustomError
from pydantic_core.core_schema import ErrorType
from typing_extensions import LiteralString

from . import rules
from ._compat import MISSING
from ._errors import ProducerError
from ._failfast import restored
from ._formats import Format
from ._model import model_named
from .rules import Keyword, NamedId, RaisedRule, Source

__all__ = [
    "STRING_CONST",
    "ReadAs",
    "TypedConst",
    "Verdict",
    "Violation",
    "as_pydantic_error",
    "cap",
    "context_cap",
    "is_unicode",
    "joined",
    "member_path",
    "not_json",
    "not_json_key",
    "pointer",
    "quote",
    "raised_again",
    "read_in_module",
    "rule_error",
    "shown",
    "truncated",
    "violation",
    "violations",
    "with_left_out",
    "with_unknown_keys",
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
@dataclass(slots=True, init=False)
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

    # Written out, not generated: the generated __init__ tests each list against a sentinel
    # before calling its factory, a fifth of the construction on `check`'s clean path.
    def __init__(
        self,
        spec: str,
        envelope: M | None,
        violations: list[Violation] | None = None,
        warnings: list[Violation] | None = None,
    ) -> None:
        self.spec = spec
        self.envelope = envelope
        self.violations = [] if violations is None else violations
        self.warnings = [] if warnings is None else warnings

    @property
    def ok(self) -> bool:
        """Whether the message is valid (it may still carry warnings)."""
        return not self.violations

    def rules(self) -> list[str]:
        """The rule ids of the violations, in order, without repeats."""
        return list(dict.fromkeys(v.rule for v in self.violations))


def context_cap(context: object) -> int | None:
    """A validation context's ``max_violations`` (an int of at least 1), if it has one.

    ``check`` passes its settings' value this way, so a model's warnings follow the caller's
    cap rather than the environment's.
    """
    if type(context) is dict or isinstance(context, Mapping):
        room = typing.cast("Mapping[str, object]", context).get("max_violations")
        if type(room) is int and room >= 1:
            return room
    return None


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


_POINTER: Final = "pointer"
_ALSO: Final = "also"


def rule_error(
    rule: RaisedRule, message: str, *, pointer: str = "", also: tuple[Keyword, ...] = ()
) -> PydanticCustomError:
    """The error a validator raises to refuse a value: the rule it breaks, named where it is.

    As pydantic names its own (``PydanticCustomError('ip_any_address', ...)``): the rule is
    the error's type, so the mapper looks it up instead of working it out from the location.

    Args:
        rule: a JSON Schema keyword (the mapper adds the schema name of the model that failed:
            ``required`` in a SOM telling event is ``telling-event.required``) or a named rule
            id; both ``Literal`` types of :mod:`envelopekit.rules`, so a type checker refuses
            any other text, and so does this function at run time.
        message: what is wrong, in words (input quoted, never a template).
        pointer: a JSON pointer below the validated value, when the finding is deeper (a model
            validator pointing at one of its fields: ``"/exposure_end"``).
        also: other keywords the same value fails at the same pointer (an ``anyOf`` with what
            its branches refused), each reported as its own violation.

    Raises:
        ValueError: when ``rule`` or a keyword of ``also`` is not catalogued (a bug the type
            checkers catch first).
    """
    if rule not in _RAISABLE or not _RAISABLE_KEYWORDS.issuperset(also):
        raise ValueError(f"{rule!r} (also {also!r}) is not in the rule catalogue")
    context: dict[str, object] = {}
    if pointer:
        context[_POINTER] = pointer
    if also:
        context[_ALSO] = also
    # pydantic renders the message in Rust, which refuses a lone surrogate (a Python string
    # from `json.loads` may hold one): escape it, or reading the error would raise.
    return PydanticCustomError(literal(rule), literal(printable(message)), context or None)


def as_pydantic_error(found: Violation) -> PydanticCustomError:
    """:func:`rule_error` for a finding already made by :func:`violation` (a scan's result)."""
    return PydanticCustomError(
        literal(found.rule),
        literal(printable(found.message)),
        {_POINTER: found.pointer} if found.pointer else None,
    )


_RAISABLE_KEYWORDS: Final[frozenset[str]] = frozenset(typing.get_args(Keyword))
_RAISABLE: Final[frozenset[str]] = _RAISABLE_KEYWORDS | frozenset(typing.get_args(NamedId))


# pydantic-core's own error types; any other is one of ours, a PydanticCustomError.
_PYDANTIC_ERRORS: Final = frozenset(typing.get_args(ErrorType))


def raised_again(error: ErrorDetails, value: Any) -> InitErrorDetails:
    """``error``, as a ``ValidationError`` reported it, to raise again with ``value`` as input.

    Not a new finding: an error pydantic-core or :func:`rule_error` raised, with its type, its
    location, its message and its context.
    """
    kind = error["type"]
    ctx = error.get("ctx")
    details: InitErrorDetails = {
        "type": (
            kind
            if kind in _PYDANTIC_ERRORS
            else PydanticCustomError(literal(kind), literal(error["msg"]), ctx)
        ),
        "loc": tuple(error["loc"]),
        "input": value,
    }
    if ctx is not None:
        details["ctx"] = ctx
    return details


def joined(error: ValidationError, finding: PydanticCustomError, value: Any) -> ValidationError:
    """``error`` with ``finding`` added at the validated ``value``, to raise from a validator.

    For a rule that holds or fails whatever else the value fails (a schema's ``anyOf`` of
    ``required`` branches, a ``not`` on a member's presence): a wrap validator catches its
    handler's error and raises this, which pydantic-core reads as its line errors, each kept
    where it was, with ``finding`` at the validator's own location.
    """
    found = [raised_again(line, line["input"]) for line in error.errors(include_url=False)]
    found.append({"type": finding, "loc": (), "input": value})
    return ValidationError.from_exception_data(error.title, found)


def literal(text: str) -> LiteralString:
    """``text`` as pydantic-core's error constructors are typed to take it.

    They ask for a ``LiteralString`` so that input never becomes a message template by
    accident; our rule ids and messages are built by us (input enters as quoted text).
    """
    return text  # pyright: ignore[reportReturnType]


def printable(text: str) -> str:
    """``text``, any lone surrogate in it (from a ``json.loads`` string) backslash-escaped."""
    if is_unicode(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def is_unicode(text: str) -> bool:
    """Whether ``text`` is Unicode text, so JSON can carry it (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- what pydantic-core raises itself -> JSON Schema keyword ------------------------------------

# The built-in errors name no rule of ours: each is the keyword of the constraint that raised
# it. (Every error an envelopekit validator raises names its rule itself: `rule_error`.)
_KEYWORD_BY_ERROR_TYPE: Final[dict[str, Keyword]] = {
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
    "string_pattern_mismatch": "pattern",  # or the field's `Format` keyword
    "literal_error": "const",  # or `enum`, when the field's `Literal` has several values
    "int_from_float": "type",
    "is_instance_of": "type",
}


def _builtin_keyword(kind: str) -> str:
    keyword = _KEYWORD_BY_ERROR_TYPE.get(kind)
    if keyword is not None:
        return keyword
    if kind.endswith(("_type", "_parsing")):
        return "type"
    return rules.FALLBACK_KEYWORD


# --- loc -> (innermost wire model, pointer, the type at the end) --------------------------------
#
# pydantic reports where an error is as a path through its own schema, not the input: a union
# member's label or tag is a segment, a bad dict key is [key, "[key]"]. The walk below is that
# path through the types, compiled once per type into a `_Node` whose steps are dict lookups.


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


# `typing_extensions`' own, and from Python 3.12 the `type` statement's.
_ALIASES: Final = tuple(
    {
        typing_extensions.TypeAliasType,
        getattr(typing, "TypeAliasType", typing_extensions.TypeAliasType),
    }
)


def _unaliased(tp: Any, module: str | None) -> tuple[Any, tuple[Any, ...], str | None]:
    """``tp`` without ``Annotated``, its metadata, and the module its names are looked up in.

    A type alias (pydantic's ``JsonValue``, a ``type`` statement) is read through to its value,
    whose names (``list['JsonValue']``) are the alias's module's.
    """
    inner, metadata = _strip_annotated(tp)
    while isinstance(inner, _ALIASES):
        module = inner.__module__
        inner, more = _strip_annotated(inner.__value__)
        metadata += more
    return inner, metadata, module


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


def _field_type(info: FieldInfo) -> Any:
    """A field's type as pydantic validates it: its annotation with the field's metadata."""
    annotation: Any = info.annotation
    metadata: tuple[Any, ...] = ()
    for item in info.metadata:
        if isinstance(item, ReadAs):
            annotation = item.reading(annotation)
        else:
            metadata += (item,)
    if isinstance(annotation, TypeVar):
        # An unparametrised generic field (`SomEnvelope.payload`): validated as the type
        # variable's default.
        default = getattr(annotation, "__default__", None)
        annotation = None if default is typing_extensions.NoDefault else default
    if info.discriminator is not None:
        metadata += (info.discriminator,)
    if metadata:
        args = (annotation, *metadata)
        return typing.Annotated[args]
    return annotation


def read_in_module(annotation: str, module: str) -> Any:
    """A string annotation read as ``typing.get_type_hints`` reads it: in ``module``'s names.

    ``None`` where it names what only the type checkers see.
    """
    try:
        return eval(annotation, vars(sys.modules[module]))
    except Exception:
        return None


def _extra_type(model: type[BaseModel] | None) -> Any:
    """The type of the values of ``model``'s extras, else ``None``.

    Where the model declares one, pydantic's way: ``__pydantic_extra__: dict[str, T]``.
    """
    for cls in () if model is None else model.__mro__:
        annotation: Any = inspect.get_annotations(cls).get("__pydantic_extra__")
        if annotation is None:
            continue
        if isinstance(annotation, str):
            annotation = read_in_module(annotation, cls.__module__)
            if annotation is None:
                return None
        args = typing.get_args(annotation)
        return args[1] if typing.get_origin(annotation) is dict and len(args) == 2 else None
    return None


@dataclass(frozen=True, slots=True)
class TypedConst:
    """Marks a one-value string ``Literal`` whose schema writes ``type: string`` beside ``const``.

    Metadata of the ``Annotated`` type only: pydantic ignores it; the violation mapper reports
    a value of another JSON type as ``type`` as well as ``const``, as the schema's validator
    does. A bare ``const`` (no marker) fails alone.
    """


STRING_CONST: Final = TypedConst()
"""The :class:`TypedConst` marker: ``Annotated[Literal["x"], STRING_CONST]``."""


@dataclass(frozen=True, slots=True)
class ReadAs:
    """Field metadata: the field's type is validated as ``reading(type)``.

    The violation mapper walks an error's path through that type too (its union's tags).
    """

    reading: Callable[[Any], Any]

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """The schema of the type ``source`` is read as."""
        return handler(self.reading(source))


_LEAF, _UNION, _MODEL, _ITEMS, _MAPPING = range(5)


class _Node:
    """One type on an error's path: how a location segment steps from it to the next type."""

    __slots__ = (
        "_children",
        "_extra",
        "_fields",
        "format",
        "kind",
        "literal",
        "model",
        "module",
        "schema",
        "step",
        "typed_string",
    )

    def __init__(self, tp: Any, module: str | None = None) -> None:
        inner, metadata, module = _unaliased(tp, module)
        self.module = module
        self.kind = _LEAF
        self.model: type[BaseModel] | None = None
        self.schema = ""
        self.step: Any = None  # a union's (members by segment, the rest), or the item type
        self._fields: dict[str, _Node] | None = None
        self._extra: _Node | None = None  # the extras' values, with `_fields`
        self._children: dict[int, _Node] = {}
        self.format: Format | None = next((m for m in metadata if isinstance(m, Format)), None)
        # A `Literal` of one value is a schema `const`, of several an `enum`; an `enum` of
        # strings sits next to `type: string` in every schema of the three specs, a `const` only
        # where its type carries the `TypedConst` marker.
        self.literal: Keyword = "const"
        self.typed_string = False
        members = _union_members(inner)
        origin = typing.get_origin(inner)
        args = typing.get_args(inner)
        if members is not None:
            self.kind = _UNION
            discriminated = any(isinstance(m, Discriminator) for m in metadata) or any(
                _tag_of(m) is not None for m in members
            )
            by_segment: dict[str, Any] = {}
            for member in members:
                tag = _tag_of(member) if discriminated else None
                if tag is not None:
                    by_segment.setdefault(tag, member)
                by_segment.setdefault(_label(member), member)
            # Any other segment: a plain optional steps into its one member that is not None
            # (or MISSING) without using the segment up.
            rest = [m for m in members if m is not type(None) and m is not MISSING]
            self.step = (by_segment, rest[0] if len(rest) == 1 else None)
        elif isinstance(inner, type) and issubclass(inner, BaseModel):
            self.kind = _MODEL
            self.model = inner
            # A wire model's, or a payload convention's read alone (Matrix's `SuccessPayload`).
            self.schema = getattr(inner, "__schema_name__", "")
        elif origin in (list, tuple, set, frozenset, Sequence) and args:
            self.kind = _ITEMS
            self.step = args[0]
        elif origin is dict and len(args) == 2:
            self.kind = _MAPPING
            self.step = args[1]
        elif origin is Literal:
            self.literal = "enum" if len(args) > 1 else "const"
            self.typed_string = all(isinstance(arg, str) for arg in args) and (
                len(args) > 1 or any(isinstance(m, TypedConst) for m in metadata)
            )
        elif isinstance(inner, type) and issubclass(inner, enum.Enum):
            self.typed_string = all(isinstance(member.value, str) for member in inner)

    def field(self, key: str | int) -> _Node:
        """The node of a model's field ``key`` (wire or Python name).

        For an unknown key, the type the model declares its extras of, else a leaf.
        """
        if self._fields is None:
            # Every field's node under each name pydantic may report it by, once per model
            # (the first field to claim a name keeps it); an unknown key stays a miss.
            self._fields = {}
            fields = {} if self.model is None else self.model.model_fields
            for name, info in fields.items():
                node = _node(_field_type(info))
                for spelling in (name, info.alias, info.validation_alias):
                    if isinstance(spelling, str):
                        self._fields.setdefault(spelling, node)
            extra = _extra_type(self.model)
            self._extra = None if extra is None else _node(extra)
        if type(key) is not str:
            return _UNKNOWN
        found = self._fields.get(key)
        return found if found is not None else self._extra or _UNKNOWN

    def child(self, tp: Any) -> _Node:
        """The node of ``tp``, a type this node steps to (kept here: not every type hashes)."""
        found = self._children.get(id(tp))
        if found is None:
            found = self._children[id(tp)] = _node(self._named(tp), self.module)
        return found

    def _named(self, tp: Any) -> Any:
        # A name in a recursive alias's value (`list['JsonValue']`), looked up where it was
        # written; one not found is a leaf.
        name = tp.__forward_arg__ if isinstance(tp, typing.ForwardRef) else tp
        if type(name) is not str:
            return tp
        return getattr(sys.modules.get(self.module or ""), name, None)


_NODES: dict[Any, _Node] = {}
_MAX_NODES: Final = 4096


def _node(tp: Any, module: str | None = None) -> _Node:
    key = (tp, module)
    try:
        found = _NODES.get(key)
    except TypeError:  # an `Annotated` whose metadata is not hashable: its parent keeps it
        return _Node(tp, module)
    if found is None:
        if len(_NODES) >= _MAX_NODES:
            _NODES.clear()
        found = _NODES[key] = _Node(tp, module)
    return found


_UNKNOWN: Final = _Node(None)


def _walk(root: _Node, loc: tuple[str | int, ...]) -> tuple[_Node | None, list[str | int], _Node]:
    """Walk ``loc`` from ``root``: the innermost wire model, the pointer's segments, the end."""
    innermost = root if root.model is not None else None
    segments: list[str | int] = []
    node = root
    index = 0
    while index < len(loc):
        segment = loc[index]
        kind = node.kind
        if kind == _UNION:
            by_segment, rest = node.step
            chosen = by_segment.get(segment) if type(segment) is str else None
            if chosen is not None:
                index += 1
            node = node.child(chosen if chosen is not None else rest)
            continue
        segments.append(segment)
        index += 1
        if kind == _MODEL:
            if node.schema:
                innermost = node
            node = node.field(segment)
        elif kind == _ITEMS:
            node = node.child(node.step)
        elif kind == _MAPPING:
            # pydantic reports a bad key as [key, "[key]"]: drop the second segment.
            if index < len(loc) and loc[index] == "[key]":
                index += 1
                node = _UNKNOWN
            else:
                node = node.child(node.step)
        else:
            node = _UNKNOWN
    return innermost, segments, node


def member_path(model: Any, loc: tuple[str | int, ...]) -> list[str | int]:
    """The keys and indexes, in the document, of where an error of ``model`` at ``loc`` stands.

    pydantic's location with the tags of the unions it went through left out: the segments of
    the error's JSON pointer.
    """
    return _walk(_node(model), loc)[1]


def _leaf(node: _Node) -> _Node:
    """The type of the value itself: a plain optional's (``DateTimeStr | MISSING``) member."""
    while node.kind == _UNION and node.step[1] is not None:
        node = node.child(node.step[1])
    return node


# Errors repeat their locations across messages (a stream of one producer's mistake): the
# answer per location is kept. A miss costs one walk, a dict step per segment.
@lru_cache(maxsize=4096)
def _where(root: _Node, loc: tuple[str | int, ...], own: bool) -> tuple[str, str, _Node, _Node]:
    """The schema name, pointer, innermost model and the value's own node of an error at ``loc``.

    With ``own`` (an error one of our validators raised), a ``loc`` that ends at a wire model
    belongs to that model, not to the one that declared the field holding it. A union root (a
    classifying ``TypeAdapter``) whose error is on the chosen member itself, e.g. a top-level
    ``model_type``, has that member as its innermost model.
    """
    innermost, segments, end = _walk(root, loc)
    if end.schema and (own or innermost is None or not innermost.schema):
        innermost = end
    if innermost is None:
        innermost = _UNKNOWN
    return innermost.schema or root.schema, pointer(*segments), innermost, _leaf(end)


def not_json(value: object) -> str:
    """Why ``value`` (Python data, in free-form JSON) is refused: no JSON text holds it."""
    return f"A value of type {type(value).__name__} is not JSON: no JSON text holds it."


def not_json_key(key: object) -> str:
    """Why ``key`` (Python data, a key of an object) is refused: JSON keys are strings."""
    return f"A key of type {type(key).__name__} is not a string: no JSON object holds it."


def _one(error: ErrorDetails, root: _Node) -> tuple[Violation, tuple[Keyword, ...]]:
    kind = error["type"]
    if kind == "string_unicode":
        # A str input holding a lone surrogate: not Unicode text, so not JSON either.
        return violation(rules.JSON_INVALID, "", f"Invalid JSON: {error['msg']}."), ()
    if kind == "json_invalid":
        text = str(error.get("ctx", {}).get("error", error["msg"]))
        if "recursion limit" in text:
            return violation(rules.MESSAGE_TOO_DEEP, "", f"The JSON nests too deeply: {text}."), ()
        return violation(rules.JSON_INVALID, "", f"Invalid JSON: {text}."), ()
    loc = tuple(error["loc"])
    message = error["msg"]
    ctx = error.get("ctx") or {}
    own = kind in rules.KEYWORDS or kind in rules.NAMED
    if kind == "string_type" and loc[-1:] == ("[key]",):
        # Python data: a key that is not a string (a string key never fails this way), named
        # at its object as free-form JSON names it everywhere.
        at = _where(root, loc[:-2], False)[1]
        return violation(rules.JSON_INVALID, at, not_json_key(error["input"])), ()
    schema, ptr, innermost, end = _where(root, loc, own)
    if kind == "invalid-json-value":
        # pydantic's `JsonValue` (Matrix's free-form JSON) refusing a value of Python data:
        # named where it is, as BabelQueue's and SOM's free-form JSON name it.
        return violation(rules.JSON_INVALID, ptr, not_json(error["input"])), ()
    also: tuple[Keyword, ...] = ()
    if own:
        # Raised by `rule_error`: the error names its rule, the context its pointer and peers.
        extra = ctx.get(_POINTER)
        if extra:
            ptr += extra
        if kind == rules.JSON_INVALID:
            # A verdict on the whole document wherever it was found, as the JSON parser gives;
            # a value of Python data no JSON text holds is named where it is.
            return violation(kind, ptr if extra else "", message), ()
        if kind in rules.NAMED:
            return violation(kind, ptr, message), ()
        also = ctx.get(_ALSO, ())
        if kind != "enum" or "expected" not in ctx:
            return violation(rules.structural(schema, kind), ptr, message), also
        # pydantic-core's own error for an `Enum` field is called "enum" too.
    key = loc[-1] if loc else None
    model = innermost.model
    field_rules: Mapping[str, str] = getattr(model, "__field_rules__", {})
    if type(key) is str and key in field_rules and kind != "missing":
        rule = field_rules[key]
        return violation(rule, ptr, f"{rules.NAMED[rule].summary} ({message})"), ()
    keyword = _builtin_keyword(kind)
    if kind == "string_pattern_mismatch" and end.format is not None:
        keyword, message = end.format.keyword, end.format.message
    elif kind == "literal_error":
        keyword = end.literal
    if (
        keyword in ("enum", "const")
        and end.typed_string
        and not isinstance(error.get("input"), str)
    ):
        also = ("type",)
    if keyword == "additionalProperties" and key in getattr(model, "__false_schema__", ()):
        keyword = "false_schema"
        message = f"The key {shown(key)} is not allowed in this schema version."
    return violation(rules.structural(schema, keyword), ptr, message), also


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
        partial: the error came from a validation that stopped each array (and each map that
            checks its keys) at its first failing item, as ``check`` reads a message over
            16 KiB; when one may have, ``violations.truncated`` says the rest went unchecked.
            A required member such a validation found absent is reported as missing, as a
            full validation reports it.

    Returns:
        One violation per distinct (rule, pointer), in pydantic's order.

    Raises:
        TypeError: when ``exc`` is not a ``ValidationError``, or did not come from an
            envelopekit model.
    """
    given: object = exc  # a user's mistake the types catch, said plainly at run time too
    if not isinstance(given, ValidationError):
        hint = "; its .violations are the list" if isinstance(given, ProducerError) else ""
        raise TypeError(
            f"violations() maps a pydantic ValidationError, not {type(given).__name__}{hint}"
        )
    root = model if model is not None else model_named(exc.title)
    if root is None or not _is_root(root):
        raise TypeError(f"{exc.title!r} is not an envelopekit wire model; pass model=")
    node = _node(root)
    seen: dict[tuple[str, str], Violation] = {}
    errors = exc.errors(include_url=False)
    if partial:  # only the fail-fast readings default required fields to an Absent
        errors = restored(errors)
    mapped = 0
    stopped = False
    for error in errors:
        if limit is not None and len(seen) >= limit:
            break
        mapped += 1
        if partial and not stopped:
            stopped = _may_have_stopped(error)
        found, also = _one(error, node)
        seen.setdefault((found.rule, found.pointer), found)
        if also:
            schema = found.rule.partition(".")[0]
            for keyword in also:
                other = violation(rules.structural(schema, keyword), found.pointer, found.message)
                seen.setdefault((other.rule, other.pointer), other)
    found_list = list(seen.values())
    if limit is not None and len(found_list) > limit:
        del found_list[limit:]
    left = len(errors) - mapped
    if left:
        found_list.append(truncated(left))
    elif stopped:
        found_list.append(
            violation(
                rules.VIOLATIONS_TRUNCATED,
                "",
                "A large message: validation stopped at the first failing item of each array "
                "(and key of each map), so later items were not checked.",
            )
        )
    return found_list


def _may_have_stopped(error: ErrorDetails) -> bool:
    """Whether ``error`` is on an array item, or on a key of a map that checks its keys.

    In a fail-fast reading (``_failfast``) either may have stopped before later items.
    pydantic-core locates a refused key at ``(..., key, "[key]")``; a closed model's unknown
    key named ``[key]`` is ``extra_forbidden``, and no model field has that name.
    """
    loc = error["loc"]
    if any(type(segment) is int for segment in loc):
        return True
    return bool(loc) and loc[-1] == "[key]" and error["type"] != "extra_forbidden"


def with_unknown_keys(
    found: list[Violation],
    unknown: list[str],
    limit: int,
    *,
    model: Any,
    title: str,
    at: tuple[str, ...] = (),
) -> list[Violation]:
    """What a closed model reports: ``found`` (its other errors), then its unknown keys.

    For a reading that noted a model's unknown keys instead of refusing each with an error
    (``extras_keys_schema``): pydantic-core reports a closed model's unknown keys after every
    error of its fields, one ``extra_forbidden`` per key in input order, and :func:`violations`
    maps errors in order up to ``limit`` findings and counts the rest. ``found`` is that mapping
    of the other errors alone, so the whole is ``found`` with the first keys there is room for,
    and the count. ``model`` and ``title`` are those of the closed reading, ``at`` the location
    of the model in it (a union's tag).
    """
    found, count, tail = _tail(found)
    if count is not None:  # the mapping stopped among the other errors: no key is reached
        return [*found, truncated(count + len(unknown))]
    room = min(max(limit - len(found), 0), len(unknown))
    errors: list[InitErrorDetails] = [
        {"type": "extra_forbidden", "loc": (*at, key), "input": None} for key in unknown[:room]
    ]
    keys = violations(ValidationError.from_exception_data(title, errors, "json"), model=model)
    left = len(unknown) - room
    if left:
        return [*found, *keys, truncated(left)]
    return [*found, *keys] if tail is None else [*found, *keys, tail]


def with_left_out(found: list[Violation], left: int) -> list[Violation]:
    """``found`` (a capped mapping's findings) with ``left`` more findings left out.

    For the errors a reading never built (``_failfast.UnknownKeys``), all after the last
    finding kept: the count joins ``violations.truncated``'s, which replaces the notice that
    arrays (and maps) stopped at their first failing item, as :func:`violations` does.
    """
    if not left:
        return found
    found, count, _ = _tail(found)
    return [*found, truncated(left + (count or 0))]


def _tail(found: list[Violation]) -> tuple[list[Violation], int | None, Violation | None]:
    """``found`` without its ``violations.truncated``, that finding's count and the finding.

    The count is ``None`` when there is no such finding, or when it is the notice that arrays
    (and maps) stopped at their first failing item.
    """
    if not found or found[-1].rule != rules.VIOLATIONS_TRUNCATED:
        return found, None, None
    tail = found[-1]
    count = tail.message.partition(" ")[0]
    return found[:-1], int(count) if count.isdigit() else None, tail


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


def shown(value: object) -> str:
    """``repr(value)`` as a message quotes it: a string's first :data:`MAX_MESSAGE_CHARS` only.

    A message is cut to that length (:func:`violation`), so the rest of a long input is never
    shown; ``repr`` of all of it would cost a pass over, and a copy of, up to 1 MiB.
    """
    if type(value) is str and len(value) > MAX_MESSAGE_CHARS:
        return repr(value[:MAX_MESSAGE_CHARS])
    return repr(value)


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


def sort_violations(found: Iterable[Violation]) -> list[Violation]:
    """Violations in a stable order: by pointer, then rule."""
    return sorted(found, key=lambda v: (v.pointer, v.rule))
