"""JSON encoding and the cross-language number rules, shared by every spec.

Output is compact UTF-8 with unicode and slashes unescaped, byte for byte what Python's
``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))`` writes (the BabelQueue Python
reference encoder). orjson writes the same bytes for everything except floats below 1e-4, which
it spells ``1e-7`` / ``0.00001`` where Python writes ``1e-07`` / ``1e-05``; those floats are
spelt again in orjson's text, so the result is always the reference's.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
import threading
from array import array
from collections.abc import Callable, Generator, Hashable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from contextvars import ContextVar
from enum import Enum
from itertools import accumulate, chain, compress, count, repeat
from math import isfinite
from operator import and_, not_, sub, xor
from types import MappingProxyType
from typing import Any, Final, cast
from uuid import UUID

import orjson
from pydantic import BaseModel, ValidationError, ValidationInfo
from pydantic_core import PydanticSerializationError, SchemaValidator, core_schema
from typing_extensions import Never

from . import rules
from ._errors import ProducerError
from ._failfast import FULL_REPORT_BYTES, TOO_LARGE, TooLarge
from ._violations import (
    Violation,
    as_pydantic_error,
    is_unicode,
    not_json,
    not_json_key,
    quote,
    shown,
    truncated,
    violation,
)

__all__ = [
    "BYTES_A_STEP",
    "BY_TEXT",
    "FAST_LEVELS",
    "FAST_PYTHON",
    "ORJSON_MAX_DEPTH",
    "OUTLINE_ONLY",
    "PARSER_MAX_DEPTH",
    "PLAIN_DATA",
    "NumberReading",
    "dumps",
    "exceeds_depth",
    "finite_json",
    "finite_numbers",
    "json_identity",
    "json_kind",
    "keep_warnings",
    "keeps_warnings",
    "kept_warnings",
    "loads",
    "long_integer_digits",
    "more_brackets_than",
    "needs_scan",
    "neutral",
    "note_numbers",
    "number_refusal",
    "numbers_clean",
    "numbers_spared",
    "one_reading",
    "outside",
    "outside_strings",
    "plain_copy",
    "plain_json",
    "plain_json_nesting",
    "plain_text",
    "plain_within",
    "pointer_of",
    "reading_context",
    "reference_dumps",
    "refuse_non_finite",
    "refuse_non_json",
    "refuse_unwritable",
    "release_reading",
    "respelled",
    "scan_numbers",
    "segment",
    "stand_in_for",
    "unquoted",
    "without_long_integers",
    "without_refused_integers",
    "written_field",
    "written_fields",
    "written_plain",
]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
JS_SAFE_MAX: Final = 2**53 - 1
_JS_SAFE_MIN: Final = -JS_SAFE_MAX
PARSER_MAX_DEPTH: Final = 200
"""The most levels of arrays and objects pydantic-core's JSON parser reads (a test holds it).

Deeper text is ``json_invalid`` ("recursion limit exceeded"), ``message.too_deep`` to
:func:`envelopekit.violations`; Python data is refused alike, at the pointer of the first
container past it."""
ORJSON_MAX_DEPTH: Final = 254
"""The most levels of arrays and objects orjson writes (a test holds it): past the parser's."""
PARSER_MAX_DIGITS: Final = 4300
"""The most digits pydantic-core's JSON parser reads in an integer.

Its own limit, not Python's int-str limit (``sys.get_int_max_str_digits()``), which it ignores
either way (a test holds both).
"""
_PARSER_MAX_DIGITS: Final = PARSER_MAX_DIGITS


def _as_orjson_writes(value: Any) -> Any:
    """What orjson writes for a value the standard library's encoder has no spelling for.

    An enum member is its value, a UUID its canonical string: the dict doors accept them (as
    orjson, their probe, writes them), and the encoder's slower path writes them the same.

    Raises:
        TypeError: for anything else, as the encoder's own default does.
    """
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, UUID):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_stdlib_encoder = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_as_orjson_writes
)
# A one-digit negative exponent ending a number; "e-" alone is common in UUIDs ("2e-9b4c").
_SHORT_NEGATIVE_EXPONENT = re.compile(rb"e-[0-9](?:[,\]}]|\Z)")


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` exactly as the Python reference encoder does, as UTF-8 bytes.

    Models validate their numbers on the way in (:func:`scan_numbers`), so NaN and Infinity
    never reach this function from a model; orjson would write them as ``null``, never as the
    invalid tokens.

    Raises:
        TypeError: for a value that is not JSON.
        UnicodeEncodeError: for a string that is not valid Unicode (a lone surrogate).
    """
    try:
        out = orjson.dumps(obj)
    except orjson.JSONEncodeError:
        # Integers beyond 64 bits, lone surrogates, non-JSON types: the reference decides.
        return reference_dumps(obj)
    # `respelled(out)`, inline: a call costs 5% of writing a small message.
    if out.find(b"0.0000") != -1 or _SHORT_NEGATIVE_EXPONENT.search(out):
        spelt = _as_reference_spells(out)
        return reference_dumps(obj) if spelt is None else spelt
    return out


_DIGITS: Final = re.compile(rb"[0-9]*")
_DIGIT_BYTES: Final = frozenset(b"0123456789")
_ZERO: Final = ord("0")
_BYTES_A_RESPELLING: Final = 256


def _as_reference_spells(written: bytes) -> bytes | None:
    """The text orjson wrote, ``written``, with each float the reference spells otherwise respelt.

    Each ``0.0000`` and each one-digit negative exponent (what :func:`respelled` finds) that
    lies outside the strings (quotes counted in the escape-neutral copy, C passes between
    them) is respelt: a one-digit exponent takes a ``0`` (``1e-07``), and a float below 1e-4
    that orjson writes as a fraction (``0.0000125``) takes an exponent (``1.25e-05``). orjson
    writes the same shortest digits that read back as the float as ``repr`` does, which the
    standard library writes (``float.__repr__``): the text is then the reference's. The same
    bytes in a string (a SOM timestamp's ``00.000000Z``) are left as they are: a text holding
    only those is ``written`` itself, with no encoder run again (the standard library's
    writing of SOM's beat-6 was 26 µs, orjson's 2 µs). ``None`` where they are dense (a Python
    step each: past one a :data:`_BYTES_A_RESPELLING` bytes, the standard library writes the
    whole text sooner), told as soon as one more is found than that allows.
    """
    size = len(written)
    found: list[int] = []
    at = written.find(b"0.0000")
    while at != -1:
        if (len(found) + 1) * _BYTES_A_RESPELLING > size:
            return None
        found.append(at)
        at = written.find(b"0.0000", at + 6)
    for match in _SHORT_NEGATIVE_EXPONENT.finditer(written):
        if (len(found) + 1) * _BYTES_A_RESPELLING > size:
            return None
        found.append(match.start())
    found.sort()
    plain = written if written.find(b"\\") == -1 else _neutral_copy(written)
    pieces: list[bytes] = []
    kept = counted = 0  # written[:kept] is in `pieces`; the quotes before `counted` are counted
    inside = False
    for at in found:
        if plain.count(b'"', counted, at) % 2:
            inside = not inside
        counted = at
        if inside or at < kept:  # in a string, or in the token just spelt (never)
            continue
        if written[at] != _ZERO:  # `e-7`, which the reference writes `e-07`
            pieces += (written[kept : at + 2], b"0")
            kept = at + 2
            continue
        if at and written[at - 1] in _DIGIT_BYTES:  # `10.00001`: 10 or more, spelt alike
            continue
        run = _DIGITS.match(written, at + 6)  # (always a match, if empty)
        end = at + 6 if run is None else run.end()
        digits = written[at + 6 : end]
        if not digits or digits[0] == _ZERO or written[end : end + 1] == b"e":
            return None  # never from orjson, which writes below 1e-5 with an exponent
        # 0.0000125 is 1.25e-05
        pieces += (written[kept:at], digits[:1], b"." if len(digits) > 1 else b"")
        pieces += (digits[1:], b"e-05")
        kept = end
    if not pieces:
        return written
    pieces.append(written[kept:])
    return b"".join(pieces)


def reference_dumps(obj: Any) -> bytes:
    """The Python reference encoder's own text of ``obj``, which :func:`dumps` writes faster.

    Raises:
        TypeError: for a value that is not JSON.
        ValueError: for NaN or an infinity (which :func:`dumps` writes ``null`` by orjson), and
            a string that is not valid Unicode (``UnicodeEncodeError``).
    """
    return _stdlib_encoder.encode(obj).encode("utf-8")


def respelled(written: bytes) -> bool:
    """Whether the reference encoder may spell a number of orjson's text ``written`` otherwise.

    Only a float below 1e-4 is spelt otherwise (``1e-7`` is ``1e-07``, a byte longer;
    ``0.00001`` is ``1e-05``); a string holding the same bytes merely says so too. False: the
    reference's text of the same data is ``written`` itself, byte for byte.
    """
    # `find`, not `in`: `bytes in bytes` first tries the needle as an int and clears a TypeError.
    return written.find(b"0.0000") != -1 or _SHORT_NEGATIVE_EXPONENT.search(written) is not None


def plain_json(value: Any, at: str = "") -> Any:
    """``value`` as plain JSON data for a producer: models replaced by their wire dumps.

    Producers check what they are given before building a message, so that a value no JSON text
    can hold is a :class:`ProducerError` naming where it is, not a ``TypeError`` from the encoder
    later (or, worse, orjson's own spelling of a ``datetime`` or ``UUID``, which the reference
    encoders refuse). The Python mode of a model dump keeps NaN and Infinity as floats, for
    validation to refuse (the JSON mode would turn them into ``null``). Copied with an explicit
    stack, in document order, so that data nested however deep is read (validation then
    refuses what nests deeper than JSON text may), and a pointer is built only for a refusal.

    Args:
        value: the data: mappings, lists and tuples, strings, numbers, booleans, ``None``, models.
        at: the JSON pointer of ``value`` in the message, for the error.

    Raises:
        ProducerError: for what no JSON text can hold: a value of another type, a key that is
            not a string, a string that is not valid Unicode (a lone surrogate).
    """
    return plain_json_nesting(value, at)[0]


def plain_json_nesting(value: Any, at: str = "") -> tuple[Any, int]:
    """:func:`plain_json` of ``value``, and the levels of arrays and objects it nests.

    The walk that copies it reads them off its nodes (``value`` itself is a level where it is
    one, 0 where it is none): a producer's bounds read its depth so (``envelopekit._bounds``),
    not from its text (two C loops over the brackets, about 0.8 ns a byte, 3 µs of SOM's
    beat-6; the depth scan where there are more brackets than levels allowed, 10 µs for 40
    line items).

    Raises:
        ProducerError: as :func:`plain_json`.
    """
    root: list[Any] = [None]
    deepest = 0
    copied_deep: set[int] | None = None
    # (the value, the container its copy goes into, its key there, the node of that container)
    stack: list[tuple[Any, Any, Any, _CopyNode | None]] = [(value, root, 0, None)]
    while stack:
        item, into, slot, parent = stack.pop()
        kind = type(item)
        if kind is not dict and kind is not list:  # (the common containers: no test to take)
            if isinstance(item, BaseModel):
                item = item.model_dump(by_alias=True, warnings=False)
            if isinstance(item, str):
                if not is_unicode(item):
                    _refuse(_at(at, parent, slot), f"{shown(item)} is not valid Unicode")
                into[slot] = item
                continue
            if item is None or isinstance(item, (bool, int, float)):
                into[slot] = item
                continue
            if isinstance(item, Mapping):
                kind = dict
            elif isinstance(item, (list, tuple)):
                kind = list
            else:
                _refuse(_at(at, parent, slot), f"a value of type {type(item).__name__} is not JSON")
        node: _CopyNode = (1, None, None) if parent is None else (parent[0] + 1, parent, slot)
        if node[0] > deepest:
            deepest = node[0]
            if deepest > PARSER_MAX_DEPTH and copied_deep is None:
                copied_deep = set()
        if copied_deep is not None:
            # Past the parser's depth, the message is refused whatever it holds, at a container
            # copied before this one (the first past the limit, in document order): each is
            # copied once from then on, so that one holding itself (a cycle) is not copied
            # without end, nor one held twice copied again.
            if id(item) in copied_deep:
                into[slot] = {} if kind is dict else []
                continue
            copied_deep.add(id(item))
        if kind is dict:
            members: dict[str, Any] = {}
            into[slot] = members
            pending: list[tuple[Any, Any, Any, _CopyNode | None]] = []
            for key, member in cast("Mapping[object, Any]", item).items():
                if not isinstance(key, str):
                    _refuse(_copy_pointer(node, at), f"the key {key!r} is not a string")
                if not key.isascii() and not is_unicode(key):
                    _refuse(_copy_pointer(node, at), f"{shown(key)} is not valid Unicode")
                member_kind = type(member)
                if member_kind in _AS_IS or (member_kind is str and member.isascii()):
                    members[key] = member
                else:
                    members[key] = None  # its place, in order
                    pending.append((member, members, key, node))
        else:
            copied: list[Any] = list(cast("list[Any]", item))
            into[slot] = copied
            pending = [
                (member, copied, index, node)
                for index, member in enumerate(copied)
                if not (type(member) in _AS_IS or (type(member) is str and member.isascii()))
            ]
        stack.extend(reversed(pending))
    return root[0], deepest


# What `plain_json` copies as it is where it copies its container, with no step of its own: a
# value of an exact JSON scalar type, or an ASCII string, which it never refuses (so that what
# it refuses is still refused in document order). A step on its stack a value was two thirds of
# SOM's beat-6 `create`.
_AS_IS: Final = frozenset((int, float, bool, type(None)))


def refuse_unwritable(model: BaseModel, at: str, field: str | None = None) -> bytes:
    """Refuse a model its JSON serializer cannot write, as a message's ``to_json`` would fail.

    With ``field``, only that field of ``model`` is written (its value's text returned): a
    parametrised field, written by its type's serializer.

    A producer given a model that validated itself takes its values as they are, so what its
    serializer cannot write (an ``object()`` in an ``Any`` field, bytes that are not UTF-8) is
    refused here, before a message holding it is made. Written once by pydantic-core's JSON
    serializer (no Python objects built), which the JSON-mode dumps of ``to_json`` share.

    Returns:
        The text written (wire names; numbers spelt as orjson spells them), for the
        producer's bounds (``envelopekit._bounds``).

    Raises:
        ProducerError: ``json.invalid`` at ``at``, with the serializer's reason.
    """
    serializer = model.__pydantic_serializer__
    try:
        if field is None:
            return serializer.to_json(model, by_alias=True)
        # `{"<field>":<value>}`: the field's name is a Python identifier, written as is.
        text = serializer.to_json(model, by_alias=True, include={field})
        return text[len(field) + 4 : -1]
    except (PydanticSerializationError, ValueError) as exc:  # UnicodeDecodeError: bytes
        what = type(model).__name__ if field is None else f"{type(model).__name__}.{field}"
        _refuse(at, f"the {what} model cannot be written as JSON: {exc}")


# A container `plain_json` copies: its level (the root's is 1), its container's node, its key or
# index there (the root's: None), made a pointer's segment only for a refusal (a segment a
# container was a tenth of the copy of 40 line items).
_CopyNode = tuple[int, Any, "str | int | None"]


def _copy_pointer(node: _CopyNode | None, base: str) -> str:
    """The pointer of a container :func:`plain_json` copies (the root's is ``base``)."""
    segments: list[str] = []
    while node is not None:
        segments.append(segment(node[2]))
        node = node[1]
    return base + "".join(reversed(segments))


def _at(base: str, parent: _CopyNode | None, slot: Any) -> str:
    """The pointer of a value :func:`plain_json` copies (the root's is ``base``)."""
    return base if parent is None else _copy_pointer(parent, base) + segment(slot)


PLAIN_DATA: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
"""orjson's options to refuse, instead of encoding, anything but the JSON types themselves (and
enum members, UUIDs and tuples, which it writes as their JSON values): a text written with them
is of plain JSON data, as the models' fast paths take it."""


def plain_text(value: Any) -> bytes | None:
    """``value``'s JSON as orjson writes it with :data:`PLAIN_DATA`, or ``None``.

    ``None`` where ``value`` is not plain JSON data: orjson refuses it, or it nests past
    orjson's 254 levels.
    """
    try:
        return orjson.dumps(value, option=PLAIN_DATA)
    except (orjson.JSONEncodeError, RecursionError):
        return None


def plain_copy(
    container: dict[str, Any] | list[Any],
    levels: int = PARSER_MAX_DEPTH,
    *,
    refuse_numbers: bool = False,
) -> Any:
    """A copy of ``container`` of the exact JSON types, or ``None``, read with no Python call.

    What pydantic's ``JsonValue`` returns for it (a copy of each list and dict), where orjson
    writes it (:data:`PLAIN_DATA`: no subclass of a JSON type, integer beyond 64 bits, key not
    a string, lone surrogate, cycle, or ``orjson.Fragment`` of no JSON) within ``levels``
    levels (itself one): orjson's text read back, where equal to ``container``; else (a NaN
    or an infinity, written ``null``; a tuple, a UUID or an enum member, written as their
    values) by :data:`_EXACT_JSON`, which refuses what ``JsonValue`` refuses and reads an
    ``int`` or ``str`` enum's member as its value, as it does. ``None`` where either
    refuses: the caller's ``JsonValue`` reads it, and reports why.

    With ``refuse_numbers`` (the caller refuses the copy's :func:`number_refusal`), a container
    read back unequal is first scanned for that refusal, which is raised, with no copy made,
    where :data:`_EXACT_JSON` takes the container (``JsonValue``'s refusal comes first).

    Raises:
        PydanticCustomError: with ``refuse_numbers``, the first number the rules refuse.
    """
    try:
        written = orjson.dumps(container, option=PLAIN_DATA)
        text: bytes | memoryview = written
        if len(written) > 2 * levels and more_brackets_than(written, levels):
            # Brackets enough to nest past `levels`: written again inside arrays that make
            # orjson's own limit the bound, as `written_plain` bounds it (a short text's
            # length bounds it, a text of few brackets their count: no second writing).
            wrap = ORJSON_MAX_DEPTH - levels
            text = memoryview(_written_within(container, levels, PLAIN_DATA))
            text = text[wrap:-wrap]  # the wrapping arrays' brackets, one byte each
        copy = orjson.loads(text)
    except (orjson.JSONEncodeError, RecursionError, orjson.JSONDecodeError):
        # (Decoding fails on an orjson.Fragment's text that is no JSON, written as it is.)
        return None
    if copy == container:
        return copy
    del copy  # no longer held while the container is read again
    if refuse_numbers:
        # Unequal: a NaN or an infinity (written null), or a value JsonValue refuses (a tuple, a
        # UUID, an enum member of no JSON type). A message holding the first is refused: the
        # refusal is found in the container (a few C passes), not in a copy made to refuse.
        refusal = number_refusal(container, "", unproven=True)
        if refusal is not None:
            if _EXACT_JSON.isinstance_python(container):
                raise as_pydantic_error(refusal)
            return None
    try:
        return _EXACT_JSON.validate_python(container)
    except ValidationError:
        return None


def _exact_json() -> SchemaValidator:
    """The JSON types in strict mode, the first to take a value reading it, all in Rust.

    Given only what orjson writes, each takes what ``JsonValue``'s tag for it names: ``int``
    takes no ``bool`` (``float`` would take an ``int``), ``str`` no UUID, ``list`` no tuple.
    The scalars are choices of each container's item union, and only the containers a
    definition: a reference a value cost a third of the reading (1 MiB of small integers).
    """
    ref = "envelopekit.ExactJson"
    containers = core_schema.definition_reference_schema(ref)
    value = core_schema.union_schema(
        [
            core_schema.int_schema(strict=True),
            core_schema.str_schema(strict=True),
            core_schema.float_schema(strict=True),
            core_schema.bool_schema(strict=True),
            core_schema.none_schema(),
            containers,
        ],
        mode="left_to_right",
    )
    union = core_schema.union_schema(
        [
            core_schema.list_schema(value, strict=True, fail_fast=True),
            core_schema.dict_schema(core_schema.str_schema(strict=True), value, strict=True),
        ],
        mode="left_to_right",
        ref=ref,
    )
    return SchemaValidator(core_schema.definitions_schema(value, [union]))


_EXACT_JSON: Final = _exact_json()


def plain_within(value: Any, encoded: bytes | None = None) -> bytes | TooLarge | None:
    """What a fast path's ``validate_python`` may take of ``value``: its :func:`plain_text`.

    ``encoded`` is that text where the caller wrote it already (a producer,
    ``envelopekit._bounds``). ``None`` where ``value`` is not plain JSON data, which the fast
    path declines: orjson must encode it as it is, which refuses a lone surrogate (the model's
    own Python-mode probe, ``_text``), a subclass of a JSON type, a model instance, a date, an
    integer beyond 64 bits or a key that is not a string.
    :data:`~envelopekit._failfast.TOO_LARGE` where its text is over ``FULL_REPORT_BYTES``
    (free-form values cost the fast path more there).
    """
    if encoded is None:
        encoded = plain_text(value)
        if encoded is None:
            return None
    return TOO_LARGE if len(encoded) > FULL_REPORT_BYTES else encoded


def refuse_non_json(value: Any, base: str = "") -> None:
    """Refuse a value or key under ``value`` (Python data, free-form) that no JSON text holds.

    What every encoder writes as JSON passes: the JSON types and their subclasses (an
    ``IntEnum`` member, whose numbers the number rules read as their base type's), tuples
    (arrays), enum members of such values and UUIDs (strings), as orjson writes them; anything
    else (a ``Decimal``, a ``datetime`` or ``date``, bytes, a set, a model, an object) is
    refused, as is a key that is not a string. One orjson encode clears the common value; only
    what it refuses is walked, with an explicit stack, for the pointer.

    Args:
        value: the free-form value, validated from Python data.
        base: the pointer of ``value``, for the error.

    Raises:
        PydanticCustomError: ``json.invalid``, at the pointer of the first such value.
    """
    if plain_text(value) is None:
        found = _not_json_at(value, base)
        if found is not None:
            raise as_pydantic_error(found) from None


def _not_json_at(value: Any, base: str) -> Violation | None:
    """:func:`refuse_non_json`'s finding under ``value``, the first in document order."""
    # (the value, its parent's node, its key there); the root has neither.
    stack: list[tuple[Any, _Node | None, Any]] = [(value, None, None)]
    while stack:
        item, parent, key = stack.pop()
        kind = type(item)
        if kind is str or kind is int or kind is float or kind is bool or item is None:
            continue
        while isinstance(item, Enum):
            item = item.value
        if item is None or isinstance(item, (str, int, float, UUID)):
            continue
        # A container of the JSON scalars alone, told by their exact types in C, holds nothing
        # to refuse: walked, 50,000 integers beyond 2^64 (which orjson does not write) cost
        # BabelQueue's dict door 5.9x orjson.loads of its 10.2x.
        if kind is list and _JSON_SCALARS.issuperset(map(type, item)):
            continue
        if (
            kind is dict
            and _STRINGS.issuperset(map(type, item))
            and _JSON_SCALARS.issuperset(map(type, item.values()))
        ):
            continue
        at = pointer_of(parent, base) + ("" if parent is None else segment(key))
        if isinstance(item, dict):
            node: _Node = (None, parent, "" if parent is None else segment(key))
            pending: list[tuple[Any, _Node | None, Any]] = []
            for name, member in item.items():
                if not isinstance(name, str):
                    return violation(rules.JSON_INVALID, at, not_json_key(name))
                pending.append((member, node, name))
            stack.extend(reversed(pending))
        elif isinstance(item, (list, tuple)):
            node = (None, parent, "" if parent is None else segment(key))
            members = list(enumerate(cast("list[Any]", item)))
            stack.extend((member, node, index) for index, member in reversed(members))
        else:
            return violation(rules.JSON_INVALID, at, not_json(item))
    return None


def _refuse(at: str, problem: str) -> Never:
    message = f"{at or '/'}: {problem}"
    raise ProducerError(message, [violation(rules.JSON_INVALID, at, message)]) from None


def loads(raw: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text with orjson (raises ``orjson.JSONDecodeError``, a ``ValueError``)."""
    return orjson.loads(raw)


def unquoted(skeleton: bytes) -> bytes:
    """``skeleton`` outside its strings, where every quote opens or closes one (no escapes).

    A text with few quotes is split on them. Past that, a skeleton keeps only a few kinds of
    byte, so most strings are two adjacent quotes: those pairs go in one C pass. Dropping two
    adjacent quotes keeps every other byte on its side (the empty piece between them goes, the
    pieces around it join), so the even pieces of what is left are the outside: all of it when
    no quote is left, else what a split of the (much shorter) rest gives.
    """
    head = skeleton.split(b'"', _FEW_QUOTES)
    if len(head) <= _FEW_QUOTES:  # few quotes (a long string's brackets): all split already
        return b"".join(head[::2])
    paired = skeleton.replace(b'""', b"")
    if paired.find(b'"') == -1:
        return paired
    return b"".join(paired.split(b'"')[::2])


_FEW_QUOTES: Final = 64


PLAIN_NUMBERS: Final = "envelopekit:plain-numbers"
"""A validation context key: whether :func:`plain_numbers` holds for the text validated (when
``True``, a validator of free-form JSON read from it need not walk it for numbers), or its
:class:`NumberReading`."""

# A number of a JSON text, outside its strings, is one to note only if it is NaN or Infinity (no
# other token holds an N or an I), has a run of 16 digits (2^53 has 16), or has an exponent of
# three digits or more (a number with an exponent is a float, noted only when infinite: with
# fewer than 16 digits and an exponent of two, it is below 1e115). Each digit is read as 0, so
# that a run is one `find`; the digits of two numbers are never adjacent, a comma stands between
# them and is kept, and so is a fraction's point; an exponent's sign is dropped, and the only
# other e is true's or false's, never followed by a digit.
_NUMBER_SKELETON: Final = bytes.maketrans(b"123456789", b"000000000")
_NOT_NUMBER_SKELETON: Final = bytes(range(256)).translate(None, b'0123456789.eENI",\\')
_SIXTEEN_DIGITS: Final = b"0" * 16


def plain_numbers(raw: bytes) -> bool:
    """Whether no number of the JSON text ``raw`` is one to note, as written.

    Every integer within ±(2^53-1), every float finite. Read by C passes over the text (strings
    cut out as :func:`outside_strings` cuts them), never a step per value: where it holds,
    :func:`needs_scan` is false for every value parsed from ``raw``. A number of 16 digits or
    more, or with an exponent of three digits or more, makes it false even when the value
    would pass (a cheap test that only ever errs towards the walk), as does a text the C passes
    do not read as the byte loop does (a backslash outside strings: not JSON).
    """
    shared = _READING.get()
    if shared is not None and shared.proved is raw:
        if shared.plain is None:
            shared.plain = _plain_numbers(raw, shared)
        return shared.plain
    return _plain_numbers(raw, shared)


def _plain_numbers(raw: bytes, shared: _Reading | None) -> bool:
    # A text with numbers to note mostly shows one early: its head is read first, alone.
    if _head_first(raw, shared) and not _plain(raw[:_HEAD_BYTES]):
        return False
    return _plain(raw)


def finite_numbers(raw: bytes) -> bool:
    """Whether every number of the JSON text ``raw`` is finite, as written.

    :func:`plain_numbers` for a reader to whom only NaN and Infinity are to note (SOM's
    free-form JSON): integers of any size pass. A run of 200 digits or more, or an exponent of
    three digits or more, makes it false even when the value would pass: a number of fewer
    digits with a two-digit exponent is under 10^299, finite as a double. False, unread, for a
    copy with stand-ins for too-long integers (:func:`one_reading`): its validator walks its
    free-form JSON instead, as for any text whose proof fails (SOM's 240 KB of escaped
    strings: the walk of a list of strings is a pass over its kinds, the reading 1.2 ms).
    """
    shared = _READING.get()
    if shared is not None and shared.proved is raw and shared.stood_in:
        return False
    if _head_first(raw, shared) and not _plain(raw[:_HEAD_BYTES], _FINITE_DIGITS):
        return False
    return _plain(raw, _FINITE_DIGITS)


_HEAD_BYTES: Final = 65_536


def _head_first(raw: bytes, shared: _Reading | None) -> bool:
    """Whether the number proof reads ``raw``'s head alone before the whole text.

    Only a text past the head that no reading has cut out already: within :func:`one_reading`,
    once the depth scan has cut the strings out, the whole text's proof is a translate of
    that copy, where the head alone is a reading of its own (0.6 ms in a MiB dense with
    strings).
    """
    if len(raw) <= _HEAD_BYTES:
        return False
    return shared is None or not shared.has_outside(raw, _NOT_NUMBER_SKELETON)


_FINITE_DIGITS: Final = b"0" * 200


def _plain(raw: bytes, digits: bytes = _SIXTEEN_DIGITS) -> bool:
    """:func:`plain_numbers` of ``raw``, which may be a text's head.

    A run of ``digits`` makes it false (:func:`finite_numbers` gives 200 of them).
    A head's last string may be cut off; :func:`unquoted` reads what is left of it as inside,
    so what a head shows outside its strings is outside the text's too.
    """
    outside = _outside(raw, _NUMBER_SKELETON, _NOT_NUMBER_SKELETON)
    return (
        outside.find(b"\\") == -1
        and outside.find(b"N") == -1
        and outside.find(b"I") == -1
        and outside.find(digits) == -1
        and (outside.find(b"e") == -1 or _LONG_EXPONENT(outside) is None)
        and (outside.find(b"E") == -1 or _LONG_UPPER_EXPONENT(outside) is None)
    )


# `bytes.find` steps a byte at a time where the text repeats a needle's bytes: "e000" cost 0.6
# to 2.3 ms in a MiB of skeleton (each `0` and `e` is one), a compiled literal 0.2 to 0.9 ms;
# a text with no `e` at all (no exponent, no `true` or `false`) needs neither.
_LONG_EXPONENT: Final = re.compile(rb"e000").search
_LONG_UPPER_EXPONENT: Final = re.compile(rb"E000").search


def _outside(raw: bytes, table: bytes | None, delete: bytes) -> bytes:
    """``raw.translate(table, delete)`` of what is outside its strings, read by C passes.

    A text without a backslash has every quote a string's; one with few strings is split at
    its quotes (:func:`_few_strings_outside`); one with many has its escape pairs neutralised
    first (:func:`_paired`). A head cut inside a string reads what is left of it as inside. A
    backslash outside the strings (never JSON) is kept, for the caller to see. Within
    :func:`one_reading` of ``raw``, a reader it knows shares the reading's work.
    """
    shared = _READING.get()
    if shared is not None and shared.raw is raw and delete in shared.readers:
        return shared.outside(raw).translate(table, delete)
    return _cut_out(raw, table, delete)


def _cut_out(raw: bytes, table: bytes | None, delete: bytes) -> bytes:
    if raw.find(b"\\") == -1:
        return unquoted(raw.translate(table, delete))
    few = _few_strings_outside(raw)
    if few is not None:
        return few.translate(table, delete)
    return unquoted(_paired(raw).translate(table, delete))


def outside(raw: bytes, delete: bytes) -> bytes:
    """What of ``raw`` is outside its strings, less the bytes in ``delete`` (which keeps ``"``).

    Read by C passes as :func:`outside_strings` reads a text; within :func:`one_reading` of
    ``raw``, with the reading's other readers when it knows ``delete``.
    """
    return _outside(raw, None, delete)


class _Reading:
    """One large text as several readers read it outside its strings (:func:`one_reading`).

    Each reader keeps a few kinds of byte, and a string that holds none of them is two adjacent
    quotes, dropped in one pass (:func:`unquoted`); a string that holds some (a digit, a
    bracket, an escape) is cut out at its quotes, the dear part, and most strings of a text
    hold some byte one reader or another keeps. So the strings are cut out once, of the bytes
    any of the readers keeps, and each reader translates that: one split at the quotes where
    each reader would split the text again. Until :meth:`release`, it holds that copy and the
    text's neutral one.
    """

    __slots__ = ("_neutral", "_outside", "delete", "plain", "proved", "raw", "readers", "stood_in")

    def __init__(self, raw: bytes, readers: tuple[bytes, ...], stood_in: bool) -> None:
        self.raw: bytes | None = raw
        self.readers = readers
        # plain_numbers(raw), once known (False at once for a copy with stand-ins): kept when
        # the copies are let go, as validation may ask for it after (Matrix's reading, past
        # its budget).
        self.proved = raw
        self.stood_in = stood_in
        self.plain: bool | None = False if stood_in else None
        self.delete = _kept_by_none(readers)
        self._neutral: bytes | None = None
        self._outside: bytes | None = None

    def neutral(self, raw: bytes) -> bytes:
        """The text's escape pairs neutralised (:func:`_paired`), once."""
        if self._neutral is None:
            self._neutral = _neutral_copy(raw)
        return self._neutral

    def has_outside(self, raw: bytes, delete: bytes) -> bool:
        """Whether the reader of ``delete`` reads ``raw`` from a copy already made."""
        return self.raw is raw and self._outside is not None and delete in self.readers

    def outside(self, raw: bytes) -> bytes:
        """What of the text is outside its strings, of the bytes its readers keep."""
        if self._outside is None:
            self._outside = _cut_out(raw, None, self.delete)
        return self._outside

    def release(self) -> None:
        """Let the copies go: validation builds its tree next.

        1 MiB of 60-deep arrays, whose outside is all of it, peaks at 31.7 MiB without them
        held, 32.7 with.
        """
        self.raw = self._neutral = self._outside = None


@functools.cache
def _kept_by_none(readers: tuple[bytes, ...]) -> bytes:
    """The bytes each of ``readers`` (``delete`` arguments) deletes: what no reader keeps.

    Cached: a reading of each kind (four) is made once, where each reading cost 20 µs, a tenth
    of a 17 KB message's ``check``.
    """
    kept = set().union(*(bytes(range(256)).translate(None, delete) for delete in readers))
    return bytes(byte for byte in range(256) if byte not in kept)


# The reading of the check under way: a context variable, so that threads and tasks each have
# their own.
_READING: Final[ContextVar[_Reading | None]] = ContextVar("envelopekit_reading", default=None)


def _paired(raw: bytes) -> bytes:
    r"""``raw`` with each escape pair ``\\`` and ``\"`` neutralised (``\x``), left to right.

    Within :func:`one_reading` of ``raw``, made once for all its readers.
    """
    shared = _READING.get()
    if shared is not None and shared.raw is raw:
        return shared.neutral(raw)
    return _neutral_copy(raw)


def _neutral_copy(raw: bytes) -> bytes:
    return raw.replace(b"\\\\", b"\\x").replace(b'\\"', b"\\x")


def neutral(text: bytes) -> bytes:
    r"""``text`` with each escaped backslash or quote made ``\x``: every quote left delimits.

    The copy has the text's length, and differs from it only inside strings; ``text`` itself
    when it holds no backslash.
    """
    if text.find(b"\\") == -1:
        return text
    return _paired(text)


@contextmanager
def one_reading(
    raw: bytes, *, numbers: bool = False, outline: bool = False, stood_in: bool = False
) -> Generator[None, None, None]:
    """Within it, the readers of ``raw`` outside its strings share their work (:class:`_Reading`).

    A large text's depth scan, and its number proof when ``numbers``, and its duplicate scan's
    outline when ``outline``, each read it outside its strings: its escape pairs are
    neutralised once (two passes over the text, about 2 ms a MiB dense with escapes), and its
    strings cut out once. The number proof (:func:`proven_context`) is the last of them: it
    lets the copies go (:func:`release_reading`). :func:`plain_numbers` of the text is read
    once. ``stood_in`` where the text is a copy holding stand-ins for integers too long to
    parse (:func:`without_long_integers`): both proofs are false without a reading, and its
    validators walk its numbers instead (:func:`finite_numbers`).
    """
    readers: tuple[bytes, ...] = (_STRUCTURE_ONLY,)
    if numbers:
        readers += (_NOT_NUMBER_SKELETON,)
    if outline:
        readers += (OUTLINE_ONLY,)
    if len(readers) == 1:  # one reader: the neutral copy is all there is to share
        readers = ()
    token = _READING.set(_Reading(raw, readers, stood_in))
    try:
        yield
    finally:
        _READING.reset(token)


def release_reading(raw: bytes) -> None:
    """Let go what the reading of ``raw`` holds (:func:`one_reading`), if there is one.

    Its readers after this read ``raw`` on their own.
    """
    shared = _READING.get()
    if shared is not None and shared.raw is raw:
        shared.release()


def _few_strings_outside(raw: bytes) -> bytes | None:
    r"""What of ``raw`` is outside its strings, joined; ``None`` when it holds many strings.

    A quote is escaped when an odd run of backslashes ends just before it. With up to
    :data:`_FEW_STRINGS` quotes the text is split at them and each piece's run is read (C
    passes over the pieces: 1 MiB of ``\u0001`` in one string, 0.3 ms). With more (or a head
    of 64 KiB holding more than their rate), :func:`_outside` replaces the pairs ``\\`` and
    ``\"`` first, in two searches whose cost is the text's: about 1 ms a MiB when backslashes
    are dense, when orjson pays for as many strings. A backslash outside the strings (never
    JSON) is kept in what is returned.
    """
    # A text whose head holds many quotes holds many: not split only to find out.
    if raw.count(b'"', 0, _HEAD_BYTES) > _FEW_STRINGS * _HEAD_BYTES // 1_048_576:
        return None
    pieces = raw.split(b'"', _FEW_STRINGS)
    if len(pieces) > _FEW_STRINGS:
        return None
    kept: Any = pieces[::2]
    if any(map(bytes.endswith, pieces, repeat(b"\\"))):
        runs = map(sub, map(len, pieces), map(len, map(bytes.rstrip, pieces, repeat(b"\\"))))
        real = map(not_, map(and_, runs, repeat(1)))  # the quote after the piece ends a string
        kept = compress(pieces, map(not_, accumulate(real, xor, initial=False)))
    return b"".join(kept)


_FEW_STRINGS: Final = 8192


def proven_context(raw: str | bytes | bytearray, context: Any) -> Any:
    """``context`` with :func:`plain_numbers` of ``raw`` (:data:`PLAIN_NUMBERS`).

    ``True`` spares every walk for numbers; ``False`` tells a validator of free-form JSON to
    scan it (:func:`scan_numbers`) without walking it first (:func:`numbers_spared`). A copy
    of a dict, or a new one for ``None``; any other context is returned as it is.
    """
    if context is not None and type(context) is not dict:
        return context
    text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    plain = plain_numbers(text)
    release_reading(text)  # the last reader before validation builds its tree
    return {PLAIN_NUMBERS: plain} if context is None else {**context, PLAIN_NUMBERS: plain}


def needs_scan(
    value: Any,
    reading: NumberReading | None = None,
    by_text: bool = True,
    levels: int = sys.maxsize,
) -> bool:
    """Whether any number under ``value`` is non-finite or beyond 2^53-1 (a fast yes/no).

    The common case, a payload of safe numbers, costs one pass without building pointers;
    :func:`scan_numbers` then runs only for the rare payload that needs reporting. With a
    ``reading``, each container's members are steps spent from its budget
    (:attr:`NumberReading.left`); past it, :class:`_Spent` is raised. Without one, a container
    of :data:`BY_TEXT` members or more is first read as orjson writes it (:func:`written_plain`),
    and walked only when that does not show it plain; ``by_text`` is false below such a one, so
    that no value is written twice. True too where ``value`` nests more than ``levels`` levels
    of arrays and objects (itself one): a fast path given Python data, which orjson writes up
    to 254 levels deep, leaves what the parser would refuse (:data:`PARSER_MAX_DEPTH`) to the
    model's own validator.
    """
    # The bounds as locals: an array of small integers is the walk's dearest input against the
    # parse (orjson reads one in about 6 ns), and a global read and a negation an item doubled
    # its cost. Integers are tested first for the same reason.
    high, low = JS_SAFE_MAX, _JS_SAFE_MIN
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list:
        items = value
    elif kind is int:
        return not high >= value >= low
    elif kind is float:
        return bool(value - value != 0.0)
    elif kind is str or kind is bool or value is None:
        return False
    else:
        # Python data only: a subclass of a JSON type (an IntEnum member, numpy.float64)
        # holds a number as its base type does.
        return _subclass_needs_scan(value, levels)
    if levels < 1:
        return True
    if reading is not None:
        reading.left -= len(items)
        if reading.left < 0:
            raise _Spent
    elif by_text and len(items) >= BY_TEXT:
        # Within a depth bound, a wide container is written inside arrays that make orjson's
        # own limit the bound (:func:`written_plain`); a narrow one's short text is bounded
        # by its length (2n bytes nest n levels at most), only a long one read for its depth.
        wrapped = levels < ORJSON_MAX_DEPTH and len(items) >= _WRAPPED
        text = written_plain(value, levels=levels if wrapped else ORJSON_MAX_DEPTH)
        if text is not None and (
            wrapped or len(text) <= 2 * levels or not exceeds_depth(text, levels)
        ):
            return False
        # Not shown plain: the walk decides, and reads no container below as text again, so
        # that no value is written twice.
        by_text = False
    levels -= 1
    # The C passes clear a few levels below the items at once: only where they may.
    if len(items) >= _BULK and levels > _LEVELS:
        notable = _notable_items(items if kind is list else list(items), True, reading)
        if notable is not None:
            for _, item in notable:
                # An integer or a float it yields is one to note; anything else may hold one.
                if (
                    type(item) is int
                    or type(item) is float
                    or needs_scan(item, reading, by_text, levels)
                ):
                    return True
            return False
    for item in items:
        kind_of_item = type(item)
        if kind_of_item is int:
            if high >= item >= low:
                continue
            return True
        if kind_of_item is str or kind_of_item is bool or item is None:
            continue
        if kind_of_item is float:
            # inf - inf and nan - nan are both nan.
            if item - item != 0.0:
                return True
        elif item and needs_scan(item, reading, by_text, levels):  # an empty one holds no number
            return True
        elif not levels and (kind_of_item is dict or kind_of_item is list):
            return True  # an empty one is a level too
    return False


def _subclass_needs_scan(value: Any, levels: int) -> bool:
    """:func:`needs_scan` of a value not exactly of a JSON type (Python data only)."""
    plain = json_kind(value)
    return plain is not None and needs_scan(plain, by_text=False, levels=levels)


def json_kind(value: Any) -> Any:
    """The JSON value a value of no exact JSON type stands for, or ``None`` for none.

    A subclass of ``int`` or ``float`` (an ``IntEnum`` member, ``numpy.float64``) is its
    number, of ``dict`` a dict, of ``list`` or a tuple a list, an enum member its value's:
    what the encoders write for it, for the number rules to read. ``None`` for anything else
    (a ``str`` subclass too: no number); whether that is JSON at all is for
    :func:`refuse_non_json` to say. Never called for the exact JSON types.
    """
    # An enum's value may itself be an enum member (a chain ends: values are created first).
    while isinstance(value, Enum):
        value = value.value
    kind = type(value)
    if kind is int or kind is float or kind is dict or kind is list:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(cast("list[Any]", value))
    return None


_BULK: Final = 64  # an array or object this long is read by `_notable_items`
# A container this wide is written within its depth bound at once (0.5 µs more), rather than
# written and then, where its text is long, read for its depth (0.8 ns a byte).
_WRAPPED: Final = 32
BY_TEXT: Final = 8
"""A container of this many members or more is first read as orjson writes it (a Python step
a value, about 90 ns, against about 14 ns for the writing; below it, the writing's own call
costs more than the walk)."""


# The JSON scalars' types, and whether each is the boolean.
_IS_BOOLEAN: Final = {int: False, float: False, str: False, type(None): False, bool: True}
_JSON_SCALARS: Final = frozenset(_IS_BOOLEAN)


def json_identity(value: Any) -> Hashable:
    """A key equal for two Python readings of JSON exactly when the JSON values are equal.

    JSON Schema's equality (``uniqueItems``, ``const``): numbers by value (``1`` and ``1.0``
    are equal), a boolean never a number, arrays item by item, objects member by member in
    any order. Any other Python value (from ``model_validate`` of a dict) is itself, or only
    its own identity when it cannot be hashed: never an error.
    """
    kind = type(value)
    if kind is bool:
        return (bool, value)
    if kind is int or kind is float:
        return (float, value)
    # A container of scalars is its items themselves, read by C passes (a call an item: a tag
    # of 4,000 numbers in a 16 KB story cost check 26x orjson.loads): Python's equality of
    # scalars is JSON Schema's but for a boolean, an int to Python (True == 1), so where a
    # container holds one, which of its items are booleans is part of its key.
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if not kinds.issubset(_IS_BOOLEAN):
            return (list, tuple(map(json_identity, value)))
        if bool not in kinds:
            return (list, tuple(value))
        booleans = compress(count(), map(_IS_BOOLEAN.__getitem__, map(type, value)))
        return (list, tuple(value), tuple(booleans))
    if kind is dict:
        kinds = set(map(type, value.values()))
        if not kinds.issubset(_IS_BOOLEAN):
            return (dict, frozenset(zip(value, map(json_identity, value.values()), strict=True)))
        if bool not in kinds:
            return (dict, frozenset(value.items()))
        booleans = compress(value, map(_IS_BOOLEAN.__getitem__, map(type, value.values())))
        return (dict, frozenset(value.items()), frozenset(booleans))
    try:
        hash(value)
    except TypeError:  # not a JSON value (a set from Python input): equal only to itself
        return (kind, id(value))
    return (kind, value)


def written_plain(
    container: Any,
    integers: bool = True,
    safe_floats: bool = False,
    levels: int = ORJSON_MAX_DEPTH,
) -> bytes | None:
    """The text orjson writes of ``container`` where it shows no number to note, or ``None``.

    ``OPT_STRICT_INTEGER`` refuses an integer beyond ±(2^53-1) (without ``integers``, only
    NaN and the infinities are to note, and orjson refuses only what is beyond 64 bits), and
    NaN and the infinities are written ``null``: a text without ``null`` holds neither
    (``None`` is written so too, and gives ``None`` here, as does anything orjson refuses to
    write). With ``safe_floats`` a finite float beyond ±2^53 is to note too: it is written with
    an exponent (``1e+16``) or with 16 digits before its point, and a text with neither holds
    none (a string holding one gives ``None`` as well). Exact when not ``None``:
    :func:`needs_scan` is false for ``container`` (a dict or a list) then, or without
    ``integers`` every float under it is finite. One whose first
    member is an object or array holding null (a null in one row of a table is in the others),
    or, where that member is a scalar, that holds null among its own members, is not written:
    its text would only be set aside (a list of 40 objects each holding a null was read 23%
    slower with the writing first, 3% with this test). ``None`` too where ``container`` nests
    more than ``levels`` levels (itself one; :func:`_wrapped`), and the text is then the
    container's inside the arrays that wrap it.
    """
    items = container.values() if type(container) is dict else container
    first: Any = next(iter(items), None)
    kind = type(first)
    # A table's rows are alike: its first row tells; scalars are looked at all.
    if (
        (None in first.values())
        if kind is dict
        else (None in first)
        if kind is list
        else (None in items)
    ):
        return None
    option = orjson.OPT_STRICT_INTEGER if integers else None
    try:
        if levels >= ORJSON_MAX_DEPTH:
            text = orjson.dumps(container, option=option)
        else:
            text = _written_within(container, levels, option)
    except orjson.JSONEncodeError:  # beyond 53 bits, a key not a string, too deep, not JSON
        return None
    if text.find(b"null") != -1 or (
        safe_floats
        and (text.find(b"e+") != -1 or text.translate(_NUMBER_SKELETON).find(_SIXTEEN_DIGITS) != -1)
    ):
        return None
    return text


class _Chains(threading.local):
    """Per thread: arrays nested in one another, the innermost holding one item.

    A container written inside ``k`` of them (:func:`written_plain` with ``levels``) is refused
    by orjson's own depth limit where it nests more than ``ORJSON_MAX_DEPTH - k`` levels: the
    depth bound costs orjson's step down ``k`` one-item arrays (0.5 µs), where the depth scan
    of the text costs two counts of its brackets (1.4 µs for 40 line items, 60% of the
    writing).
    """

    def __init__(self) -> None:
        # chain[i] nests i + 1 levels; chain[0] is the innermost, its one item the container.
        # Tuples above it: orjson steps down a tuple in 10 ns, a list in 13.
        self.slot: list[Any] = [None]
        chain: list[Any] = [self.slot]
        for _ in range(ORJSON_MAX_DEPTH - 1):
            chain.append((chain[-1],))
        self.chain = chain


_CHAINS: Final = _Chains()


def _written_within(container: Any, levels: int, option: int | None) -> bytes:
    """The text orjson writes of ``container`` within :class:`_Chains`' wrapping arrays.

    ``ORJSON_MAX_DEPTH - levels`` of them, one byte of brackets each side per array.

    Raises:
        orjson.JSONEncodeError: where ``container`` nests more than ``levels`` levels (itself
            one), or orjson refuses it otherwise.
    """
    chains = _CHAINS
    slot = chains.slot
    slot[0] = container
    try:
        return orjson.dumps(chains.chain[ORJSON_MAX_DEPTH - levels - 1], option=option)
    finally:
        slot[0] = None


def _notable_items(
    seq: list[Any], integers: bool = True, reading: NumberReading | None = None
) -> Iterator[tuple[int, Any]] | None:
    """``(index, item)`` of the items of ``seq`` that may be, or hold, a number to note.

    Read a chunk at a time, as the caller asks (a first refusal, or the cap, stops it early),
    by C passes where they can tell: a chunk of integers by their bit lengths
    (:func:`_bit_lengths`: an array of small integers, read in about 6 ns each by orjson,
    took 30 ns each to walk and 88 to scan), any other chunk a part at a time by its values,
    a level of containers at a time (:func:`_plain_values`: an array of small objects took
    about 400 ns an object to scan). What they cannot clear is read item by item, as
    :func:`needs_scan` reads it. ``None`` where the first part is too deep for the passes:
    the caller reads the list item by item, as a generator would only slow that down.

    Without ``integers`` (only NaN and Infinity are to note), a chunk of integers yields
    nothing. With a ``reading``, the values cleared below the items are steps spent from its
    budget, as the walk would spend them (:class:`_Spent` past it).
    """
    first = _UNTESTED if type(seq[0]) is int else _plain_values(seq[:_PART], integers)
    if first == _TOO_DEEP:
        return None
    return _chunks_notable(seq, first, integers, reading)


def _chunks_notable(
    seq: list[Any], first: int | None, integers: bool, reading: NumberReading | None
) -> Iterator[tuple[int, Any]]:
    """:func:`_notable_items` of ``seq``, its first part read to ``first``.

    ``first`` is what :func:`_plain_values` said of it (:data:`_UNTESTED` where ``seq`` starts
    with an integer).
    """
    high, low = JS_SAFE_MAX, _JS_SAFE_MIN
    testing = True  # until a part is too deep for the C passes
    # Chunks that begin and end with an integer are read from orjson's text until one shows an
    # integer to note, or is not integers alone; from then on each one's integers are measured.
    written = True
    # Chunks that begin and end with a string are read by their kinds alone (one C pass) until
    # one holds another kind: strings alone hold nothing to note.
    by_kinds = True
    for start in range(0, len(seq), _CHUNK):
        chunk = seq[start : start + _CHUNK]
        if written and type(chunk[0]) is int and type(chunk[-1]) is int:
            if _plain_integers(chunk, integers):
                continue
            written = False
        elif by_kinds and type(chunk[0]) is str and type(chunk[-1]) is str:
            if set(map(type, chunk)) <= _STRINGS:
                first = _UNTESTED  # the first part, if it was this chunk's, is read with it
                continue
            by_kinds = False
        found = _bit_lengths(chunk)
        if found is not None:
            if not integers:
                continue
            for match in _BEYOND_SAFE.finditer(found):
                yield start + match.start(), chunk[match.start()]
            continue
        for part in range(0, len(chunk), _PART):
            items = chunk[part : part + _PART]
            if testing:
                cleared = first if first != _UNTESTED else _plain_values(items, integers)
                first = _UNTESTED
                if cleared is not None and cleared >= 0:
                    if reading is not None:
                        reading.left -= cleared
                        if reading.left < 0:
                            raise _Spent
                    continue
                testing = cleared is None
            for at, item in enumerate(items, start + part):
                kind = type(item)
                if kind is int:
                    if high >= item >= low:
                        continue
                elif kind is str or kind is bool or item is None:
                    continue
                elif kind is float:
                    if item - item == 0.0:
                        continue
                elif not item:
                    continue
                yield at, item


_CHUNK: Final = 4096
_STRINGS: Final = frozenset({str})


def _plain_integers(items: list[Any], integers: bool) -> bool:
    """Whether ``items`` are integers (not ``bool``), none of them to note, by orjson's text.

    ``OPT_STRICT_INTEGER`` refuses an integer beyond ±(2^53-1) (without ``integers`` only one
    beyond 64 bits is refused: a wider one is not to note, and is measured); a text of digits,
    minus signs and commas between its brackets holds integers alone. orjson writes a small
    integer in about 5 ns, where :func:`_bit_lengths` calls ``int.bit_length`` on each (19 ns):
    a chunk of them that holds none to note is told at a quarter of the cost.
    """
    # written_plain's writing, kept inline there: a frame more on that path (every container of
    # the fast paths, counted by a test) costs more than these lines written twice.
    try:
        text = orjson.dumps(items, option=orjson.OPT_STRICT_INTEGER if integers else None)
    except orjson.JSONEncodeError:
        return False
    return not text[1:-1].translate(None, b"0123456789-,")


def _bit_lengths(items: list[Any]) -> bytes | None:
    """Each item's bit length, a byte an item, where ``items`` are all integers (``bool`` too).

    54 or more is beyond ±(2^53-1) (:data:`_BEYOND_SAFE`). ``None`` for any other items:
    ``int.bit_length`` refuses other types without calling into them, and a bit length over
    255 has no byte. Floats are read one by one: the C passes that would tell a NaN or an
    infinity (a float less itself) build a float an item, and cost more than the loop.
    """
    if type(items[0]) is not int or type(items[-1]) is not int:
        return None  # floats too: read one by one (a float less itself is a new float)
    try:
        return bytes(map(int.bit_length, items))
    except (TypeError, ValueError):
        return None


_BEYOND_SAFE: Final = re.compile(rb"[\x36-\xff]")  # a bit length of 54 or more

_PART: Final = 256  # the items of a chunk `_plain_values` clears at once: a part it cannot
# clear is read item by item (256 small objects: 0.1 ms).
_LEVELS: Final = 3  # the levels of containers `_plain_values` reads before it gives up
_JSON_KINDS: Final = frozenset({str, int, float, bool, type(None), dict, list})
_NUMBER_KINDS: Final = frozenset({int, float})
_FLOAT_KIND: Final = frozenset({float})
_CONTAINER_KINDS: Final = frozenset({dict, list})
_SAMPLE: Final = 16
_TOO_DEEP: Final = -1
_UNTESTED: Final = -2


def _plain_values(items: list[Any], integers: bool) -> int | None:
    """How many values are under ``items`` when no number there is to note.

    ``None`` when one may be; :data:`_TOO_DEEP` when it cannot tell: containers deeper than
    :data:`_LEVELS`, or a type JSON does not parse to. Read a level at a time, and then the
    values of its containers, flattened, are the next level. A level of numbers alone, or of
    one kind of container among strings and literals, is read by C passes: the values' types,
    the integers' bit lengths, the floats' sum (a NaN or an infinity makes it one, and only
    then, or on an overflow, is each float asked), the containers picked out by a
    comprehension: about 20 ns a value and a pass, against about 50 ns a value and 250 ns a
    container for the walk. A level that mixes more is read by one loop
    (:func:`_mixed_level`), as a comprehension a kind would cost more than the walk.
    """
    level = items
    below = 0
    for depth in range(_LEVELS):
        # The last level's containers are only asked whether they hold anything (then too deep).
        last = depth == _LEVELS - 1
        # The first values tell a mixed level most of the time, without a pass over them all.
        if _mixed(set(map(type, level[:_SAMPLE])), integers) or _mixed(
            kinds := set(map(type, level)), integers
        ):
            found = _mixed_level(level, integers, collect=not last)
            if not isinstance(found, list):
                return found
            level = found
        elif not kinds <= _JSON_KINDS:
            return _TOO_DEEP
        elif float in kinds:  # alone: mixed with others, the loop reads them
            total = sum(level)  # a NaN or an infinity makes it one
            if total - total != 0.0 and not all(map(isfinite, level)):  # or an overflow
                return None
            return below
        elif int in kinds and integers:  # alone too
            return None if max(map(int.bit_length, level)) > _SAFE_BITS else below
        elif dict in kinds:
            dicts = level if len(kinds) == 1 else [item for item in level if type(item) is dict]
            if last:
                return _TOO_DEEP if any(dicts) else below
            level = list(chain.from_iterable(map(dict.values, dicts)))
        elif list in kinds:
            lists = level if len(kinds) == 1 else [item for item in level if type(item) is list]
            if last:
                return _TOO_DEEP if any(lists) else below
            level = list(chain.from_iterable(lists))
        else:
            return below  # strings and literals (and integers, where they are not to note)
        if not level:
            return below
        below += len(level)
    return _TOO_DEEP  # not reached: the last level returns


def _mixed(kinds: set[type], integers: bool) -> bool:
    """Whether a level of these kinds is read by a loop (:func:`_mixed_level`).

    So it is where numbers mix with other kinds (a comprehension, then a C pass, cost more
    than the loop's step), or objects with arrays.
    """
    if len(kinds) < 2:
        return False
    return bool(kinds & (_NUMBER_KINDS if integers else _FLOAT_KIND)) or kinds >= _CONTAINER_KINDS


def _mixed_level(level: list[Any], integers: bool, collect: bool) -> list[Any] | int | None:
    """The values of the containers of ``level``, read by one loop, as the walk reads them.

    ``None`` where a number of ``level`` is to note, :data:`_TOO_DEEP` for a type JSON does not
    parse to. Without ``collect`` (the last level read), no value is gathered: a container
    that holds any makes it :data:`_TOO_DEEP`, once the level's numbers are read.
    """
    high, low = JS_SAFE_MAX, _JS_SAFE_MIN
    values: list[Any] = []
    deeper = False
    for item in level:
        kind = type(item)
        if kind is int:
            if integers and not high >= item >= low:
                return None
        elif kind is str or kind is bool or item is None:
            continue
        elif kind is float:
            if item - item != 0.0:
                return None
        elif kind is dict or kind is list:
            if not collect:
                deeper = deeper or bool(item)
            elif kind is dict:
                values += item.values()
            else:
                values += item
        else:
            return _TOO_DEEP
    return _TOO_DEEP if deeper else values


class _Spent(Exception):
    """A walk of :func:`needs_scan` spent its reading's budget."""


class NumberReading:
    """How one message's free-form JSON is read for numbers to note, across its validators.

    Where free-form JSON is the bulk of a message (a Matrix payload), a walk costs a Python
    step a value, about 5x ``orjson.loads`` on 1 MiB of small integers, and C passes proving
    the text's numbers plain (:func:`plain_numbers`) about 1x. Where it is a small part (a SOM
    story's ``extensions``), the proof costs more than the walks: 0.67 ms for a 200 KB story,
    15% of its ``check``, against a few µs. So the walks of :func:`numbers_spared` spend a step
    a value from a budget of one every :data:`BYTES_A_STEP` bytes of the text (a step costs
    what the proof does for about 12 bytes), and past it the text is proven, once.

    Attributes:
        integers: whether integers beyond 2^53-1 are to note (else only NaN and Infinity, and
            the text's proof is :func:`finite_numbers`).
        left: the steps the walks may still take before the text is proven.
        plain: the proof, ``None`` until taken.
        noted: whether a walk found a number to note (non-finite, or beyond 2^53-1).
        kept: by ``id``, each value a validator scanned and the warnings its scan found, with
            pointers from the value (:func:`keep_warnings`), or ``None``.
    """

    __slots__ = ("integers", "kept", "left", "noted", "plain", "raw")

    def __init__(self, raw: str | bytes | bytearray, *, integers: bool = True) -> None:
        """Read the numbers of the text ``raw``."""
        self.raw = raw
        self.integers = integers
        self.left = len(raw) // BYTES_A_STEP
        self.plain: bool | None = None
        self.noted = False
        self.kept: dict[int, tuple[Any, list[Violation]]] | None = None

    def proven(self) -> bool:
        """The proof (:func:`plain_numbers` of the text), taken on first asking."""
        if self.plain is None:
            raw = self.raw
            text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
            self.plain = plain_numbers(text) if self.integers else finite_numbers(text)
        return self.plain


BYTES_A_STEP: Final = 16
"""A :class:`NumberReading` walks at most one value for this many bytes of its text."""


def reading_context(raw: str | bytes | bytearray, context: Any, *, integers: bool = True) -> Any:
    """``context`` with a :class:`NumberReading` of ``raw`` (:data:`PLAIN_NUMBERS`).

    A copy of a dict, or a new one for ``None``; any other context is returned as it is.
    Without ``integers``, for validators to whom only NaN and Infinity are to note.
    """
    if context is not None and type(context) is not dict:
        return context
    reading = NumberReading(raw, integers=integers)
    return {PLAIN_NUMBERS: reading} if context is None else {**context, PLAIN_NUMBERS: reading}


def numbers_spared(value: Any, context: object) -> bool:
    """Whether ``value`` is known, the cheapest way, to hold no number to note.

    True by the context's proof (:func:`proven_context`); by its :class:`NumberReading`, a walk
    within the budget, or past it the proof; without one, by a walk (:func:`needs_scan`).
    False when the caller must scan ``value`` (:func:`scan_numbers`): a walk found a number to
    note, or the reading's proof failed, when a walk would only tell the scan where to look
    (and, where nothing is, cost as much again); the caller tells the reading what its scan
    found (:func:`note_numbers`).
    """
    reading = context.get(PLAIN_NUMBERS) if type(context) is dict else None
    if type(reading) is bool:
        return reading
    if type(reading) is not NumberReading:
        return not needs_scan(value)
    if reading.plain is None:
        try:
            found = needs_scan(value, reading)
        except _Spent:
            pass
        else:
            reading.noted = reading.noted or found
            return not found
    return reading.proven()


def note_numbers(context: object) -> None:
    """Tell ``context``'s :class:`NumberReading` (if any) that a scan found a number to note."""
    reading = context.get(PLAIN_NUMBERS) if type(context) is dict else None
    if type(reading) is NumberReading:
        reading.noted = True


def keep_warnings(context: object, value: Any, warnings: list[Violation]) -> None:
    """Keep the warnings a scan of ``value`` found in ``context``'s :class:`NumberReading`.

    Their pointers are from ``value``. For the model's warnings, built later without scanning
    it again (:func:`kept_warnings`); nothing is kept without a reading.
    """
    reading = context.get(PLAIN_NUMBERS) if type(context) is dict else None
    if type(reading) is NumberReading:
        if reading.kept is None:
            reading.kept = {}
        # The value itself is kept with them: its id is not reused while they are.
        reading.kept[id(value)] = (value, warnings)


def keeps_warnings(context: object) -> bool:
    """Whether ``context`` has a :class:`NumberReading` to keep warnings in."""
    return type(context) is dict and type(context.get(PLAIN_NUMBERS)) is NumberReading


def kept_warnings(context: object) -> dict[int, tuple[Any, list[Violation]]] | None:
    """What :func:`keep_warnings` kept in ``context``'s reading, or ``None``."""
    reading = context.get(PLAIN_NUMBERS) if type(context) is dict else None
    return reading.kept if type(reading) is NumberReading else None


def numbers_clean(context: object) -> bool | None:
    """Whether the values validated so far with ``context`` hold no number to note.

    True when the text's numbers are proven plain, or when its :class:`NumberReading` was
    told of none (by its walks, or a scan through :func:`note_numbers`) in any value
    :func:`numbers_spared` was asked about; False when it was told of one; ``None`` when the
    context has no reading and no proof that holds.
    """
    reading = context.get(PLAIN_NUMBERS) if type(context) is dict else None
    if reading is True:
        return True
    return not reading.noted if type(reading) is NumberReading else None


def refuse_non_finite(value: Any) -> Any:
    """An after-validator for free-form JSON: refuse NaN and Infinity anywhere under ``value``.

    pydantic's JSON parser accepts the ``NaN`` and ``Infinity`` tokens (and reads ``1e400`` as
    infinity); none of them is JSON, and no encoder can write them back. Integers of any size
    are left alone here: a spec that bounds them says so itself.

    Raises:
        PydanticCustomError: ``number.non_finite``, pointing below the validated value.
    """
    if needs_scan(value):
        for found in scan_numbers(value, "", first_refusal=True, integers=False)[0]:
            raise as_pydantic_error(found)
    return value


def finite_json(value: Any, info: ValidationInfo) -> Any:
    """:func:`refuse_non_finite` as an after-validator, walking only where the context needs.

    A text whose numbers C passes prove plain has no NaN or Infinity (:func:`numbers_spared`):
    a large SOM message's free-form JSON is walked within a budget, then the text is proven.
    """
    context = info.context
    if context is FAST_PYTHON:
        # Python data on a fast path: only what the walk clears, and what nests no deeper than
        # FAST_LEVELS below it (orjson, its probe, writes 254 levels; the parser reads 200);
        # anything else is for the model's own validator, which then decides.
        if needs_scan(value, levels=FAST_LEVELS):
            # Only ever dropped: the fast path hands a refusal back as not taken.
            raise ValueError("not within the fast path's bounds")
        return value
    if info.mode == "python":
        refuse_non_json(value)
    if numbers_spared(value, context):
        return value
    for found in scan_numbers(value, "", first_refusal=True, integers=False)[0]:
        raise as_pydantic_error(found)
    return value


FAST_PYTHON: Final[Mapping[str, Any]] = MappingProxyType({})
"""The context a fast path validates Python data with, for :func:`finite_json` to know it.

Empty, and read only: any other reader of the context finds what it finds in no context."""
FAST_LEVELS: Final = PARSER_MAX_DEPTH - 16
"""How many levels a free-form value may nest, itself included, on a fast path given Python
data: within the parser's limit wherever the value stands in a SOM message (held by an object
four levels deep at most, a transform's ``params``; ``tests/som/test_fast_path.py`` holds it to
16)."""


# A node of the scan: the value, and how to build its pointer (parent node, segment) only
# when something under it is reported.
_Node = tuple[Any, "Any | None", str]


def pointer_of(node: _Node | None, base: str) -> str:
    """The pointer of a walk's node (value, parent node, segment): ``base`` and its segments."""
    segments: list[str] = []
    while node is not None:
        segments.append(node[2])
        node = node[1]
    return base + "".join(reversed(segments))


def scan_numbers(
    value: Any,
    base: str,
    *,
    wide_integers: bool = False,
    first_refusal: bool = False,
    integers: bool = True,
    max_warnings: int | None = None,
) -> tuple[list[Violation], list[Violation]]:
    """Check every number under ``value`` against the cross-language data rules.

    Returns the refusals (NaN, Infinity, integers outside signed 64-bit) and the warnings
    (integers beyond 2^53-1, which JavaScript consumers cannot hold exactly), with pointers
    prefixed by ``base``. The walk builds a pointer only for what it reports.

    Args:
        value: the parsed JSON.
        base: the pointer of ``value`` in the message.
        wide_integers: an integer beyond signed 64-bit is a ``number.beyond_int64`` warning
            instead, up to the most digits JSON can carry here.
        first_refusal: stop at the first refusal (a validator raises only that one).
        integers: check integers too (else only NaN and Infinity).
        max_warnings: stop collecting warnings past this many.
    """
    errors: list[Violation] = []
    warnings: list[Violation] = []
    dropped = 0
    safe_high, safe_low = JS_SAFE_MAX, _JS_SAFE_MIN
    if wide_integers:
        wide, low, high = _wide_bounds(_int_max_str_digits())
    else:
        wide, low, high = 0, INT64_MIN, INT64_MAX
    # Three stacks: a container's parent node, its key, the container. Its own node (parent,
    # segment) is built only when it is taken, so that a long array of containers waiting
    # their turn holds a key each, not a node and a segment each (116,000 objects: 15 MiB).
    stack: list[_Node | None] = [None]
    keys: list[Any] = [_TAKEN]
    values: list[Any] = [value]
    if type(value) is not dict and type(value) is not list:
        # A bare number: the one item of a node whose key has no segment, so that what is
        # found points at `base` itself.
        values = [_Rest(iter(((None, value),)))]
    full = False  # the warnings reached max_warnings: past it, one is only counted
    while stack:
        parent = stack.pop()
        taken = keys.pop()
        if taken is not _TAKEN:
            parent = (None, parent, segment(taken))
        node = values.pop()
        if type(node) is dict:
            items: Any = iter(node.items())
        elif type(node) is _Rest:
            items = node.items
        else:
            # A long array yields only what may be or hold a number to note, found a chunk at a
            # time as the loop asks (it may stop at the first refusal, or at the cap).
            notable = _notable_items(node, integers) if len(node) >= _BULK and not full else None
            items = enumerate(node) if notable is None else notable
        if full:
            seq: list[Any] | None = None
            if type(node) is list:
                seq = node
            elif isinstance(node, _Rest) and node.seq is not None:
                seq = node.seq[node.start :]
                items = enumerate(seq, node.start)
            if seq is not None and integers:
                # A list of integers within the bounds is counted by C passes, no Python
                # step per item (50,000 integers: 8 ms of the loop below).
                counted = _counted_integers(seq, low, high)
                if counted is not None:
                    dropped += counted
                    continue
            # The lean loop: an integer within the bounds is counted, never built.
            for key, item in items:
                kind = type(item)
                if kind is not int and kind is not float and kind is not dict and kind is not list:
                    if kind is str or kind is bool or item is None:
                        continue
                    item = json_kind(item)  # Python data only, as in the loop below
                    kind = type(item)
                if kind is int:
                    if not integers or JS_SAFE_MAX >= item >= -JS_SAFE_MAX:
                        continue
                    if high >= item >= low:
                        dropped += 1
                        continue
                    at = pointer_of(parent, base) + segment(key)
                    errors.append(_too_long(at, item) if wide else _out_of_range(at, item))
                    if first_refusal:
                        return errors, warnings
                elif kind is float:
                    if item - item != 0.0:
                        at = pointer_of(parent, base) + segment(key)
                        errors.append(_non_finite(at, item))
                        if first_refusal:
                            return errors, warnings
                elif (kind is dict or kind is list) and item:
                    stack.append(parent)
                    keys.append(key)
                    values.append(item)
            continue
        for key, item in items:
            kind = type(item)
            if kind is int:
                # Integers first, the bounds as locals: the dearest input is an array of them.
                if safe_high >= item >= safe_low or not integers:
                    continue
            elif kind is str or kind is bool or item is None:
                continue
            else:
                if kind is not float and kind is not dict and kind is not list:
                    # Python data only: not exactly a JSON type. A subclass is read as its
                    # base type (never as a container it is not: an IntEnum member has no
                    # len()); anything else as None.
                    item = json_kind(item)
                    kind = type(item)
                if kind is int:
                    if safe_high >= item >= safe_low or not integers:
                        continue
                elif kind is float:
                    if item - item == 0.0:
                        continue
                    errors.append(_non_finite(pointer_of(parent, base) + segment(key), item))
                    if first_refusal:
                        return errors, warnings
                    continue
                else:
                    if item:  # an empty container (or None) holds no number
                        stack.append(parent)
                        keys.append(key)
                        values.append(item)
                    continue
            # An integer beyond 2^53-1: refused, or a warning.
            beyond = not INT64_MAX >= item >= INT64_MIN
            if beyond and not (wide_integers and abs(item) < wide):
                at = pointer_of(parent, base) + segment(key)
                errors.append(_too_long(at, item) if wide else _out_of_range(at, item))
                if first_refusal:
                    return errors, warnings
            elif max_warnings is not None and len(warnings) >= max_warnings:
                dropped += 1  # counted, never built (nor its pointer)
            elif beyond:
                warnings.append(
                    violation(
                        rules.NUMBER_BEYOND_INT64,
                        pointer_of(parent, base) + segment(key),
                        f"{quote(item)} is beyond signed 64-bit: kept exact and re-emitted "
                        "unchanged; Go, Node and PHP read it as a double.",
                    )
                )
            else:
                warnings.append(
                    violation(
                        rules.NUMBER_UNSAFE_INTEGER,
                        pointer_of(parent, base) + segment(key),
                        f"{item} is beyond 2^53-1: JavaScript consumers lose its exact value.",
                    )
                )
            if max_warnings is not None and len(warnings) >= max_warnings:
                # The rest of this node, then every node after it, takes the lean loop.
                full = True
                stack.append(parent)
                keys.append(_TAKEN)
                values.append(_Rest(items, node, key + 1) if type(node) is list else _Rest(items))
                break
    if dropped:
        warnings.append(truncated(dropped))
    return errors, warnings


def number_refusal(value: Any, base: str, *, unproven: bool = False) -> Violation | None:
    """The first number under ``value`` that no reader takes, or ``None``.

    NaN, Infinity, an integer outside signed 64-bit (:func:`scan_numbers`'s refusals), its
    pointer prefixed by ``base``. One pointer-free pass (:func:`needs_scan`) where there is no
    number to note; the scan builds no warning. ``unproven``: the message's text failed its
    proof (:func:`proven_context`), so ``value`` is scanned without that pass first (it would
    only tell the scan where to look, at its cost: 1 MiB of numbers written out as text).
    """
    if not unproven and not needs_scan(value):
        return None
    refused, _ = scan_numbers(value, base, first_refusal=True, max_warnings=0)
    return refused[0] if refused else None


def written_field(owner: BaseModel, name: str) -> Any:
    """``owner``'s field ``name`` as plain data, as the field's type writes it.

    A typed field (a model, a dataclass, a ``dict[str, Item]``) holds its values as its
    validation made them: its numbers are read as a consumer of its JSON reads them, under
    their wire names (the pointers point into that JSON). Python mode: NaN and Infinity stay
    floats, for the number rules to refuse (the JSON mode writes them as ``null``).
    """
    value = owner.__dict__[name]
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True)
    written = owner.__pydantic_serializer__.to_python(
        owner, by_alias=True, include={name}, warnings=False
    )
    return next(iter(written.values()))


def written_fields(owner: BaseModel, names: AbstractSet[str]) -> dict[str, Any]:
    """``owner``'s fields ``names`` as plain data, as their types write them, by wire name.

    As :func:`written_field` reads one: Python mode, NaN and Infinity stay floats for the
    number rules; the keys are the aliases the pointers name.
    """
    written: dict[str, Any] = owner.__pydantic_serializer__.to_python(
        owner, by_alias=True, include=set(names), warnings=False
    )
    return written


_TAKEN: Final = object()
"""The key of a node on the scan's stack whose parent is its own node already (the root, a
:class:`_Rest`)."""


class _Rest:
    """What a node has left to scan (its live iterator) when the warnings reach their cap.

    For a list, also the list and the index of its next item.
    """

    __slots__ = ("items", "seq", "start")

    def __init__(self, items: Any, seq: list[Any] | None = None, start: int = 0) -> None:
        self.items = items
        self.seq = seq
        self.start = start


_ONLY_INT: Final = frozenset({int})
_SAFE_BITS: Final = JS_SAFE_MAX.bit_length()  # 53: a magnitude of 54 bits is beyond 2^53-1


def _counted_integers(seq: list[Any], low: int, high: int) -> int | None:
    """How many items of ``seq`` are beyond 2^53-1, when all are integers within the bounds.

    ``None`` when some item is not an integer (``bool`` is not) or may fall outside
    ``low..high`` (``-high - 1`` or ``-high``): the caller's loop then reads the list item by
    item and points at any refusal. Every pass is in C, over the types, then the bit lengths,
    a byte each where they fit one, counted by deleting the lengths within a bound (50,000
    integers beyond 2^64: 1.3 ms less than their `max`, `min` and a list).
    """
    if not seq or type(seq[0]) is not int or frozenset(map(type, seq)) != _ONLY_INT:
        return None
    within = _bits_within(high)
    try:
        bits = bytes(map(int.bit_length, seq))  # of the magnitude: |x| < 2**bits
    except ValueError:  # a length past 255 bits: within only the widest bounds
        lengths = list(map(int.bit_length, seq))
        return None if max(lengths) > within else sum(map(_SAFE_BITS.__lt__, lengths))
    if within < 255 and bits.translate(None, bytes(range(within + 1))):
        return None
    return len(bits.translate(None, _SAFE_LENGTHS))


_SAFE_LENGTHS: Final = bytes(range(JS_SAFE_MAX.bit_length() + 1))  # 0 to 53 bits


@functools.lru_cache(maxsize=8)
def _bits_within(high: int) -> int:
    """The most bits an integer may have for its magnitude to be at most ``high``."""
    if high & (high + 1) == 0:  # 2**n - 1: every n-bit magnitude
        return high.bit_length()
    return high.bit_length() - 1


def _non_finite(at: str, item: float) -> Violation:
    return violation(rules.NUMBER_NON_FINITE, at, f"{item!r} is not a JSON number.")


def long_integer_digits() -> int:
    """The most digits an integer may have to be read from JSON and written back here.

    The parser's :data:`PARSER_MAX_DIGITS`, or Python's int-str limit
    (``sys.get_int_max_str_digits()``) where it is lower, as it is now.
    """
    return _wide_digits(_int_max_str_digits())


def _too_long(at: str, item: int) -> Violation:
    # Past the wide bounds: too long to write back, not merely beyond 64 bits.
    digits = long_integer_digits()
    return violation(
        rules.NUMBER_OUT_OF_RANGE,
        at,
        f"{quote(item)}: more than the {digits} digits an integer may have to be read and "
        "written back.",
    )


def _out_of_range(at: str, item: int) -> Violation:
    return violation(
        rules.NUMBER_OUT_OF_RANGE, at, f"{quote(item)} does not fit a signed 64-bit integer."
    )


# The limit arrived in 3.10.7 (CVE-2020-10735); an older 3.10 has none (0, as for no limit).
_int_max_str_digits: Final[Callable[[], int]] = getattr(sys, "get_int_max_str_digits", lambda: 0)


def _wide_digits(str_digits: int) -> int:
    # Python's limit (0 for none) where it is below the parser's.
    return min(str_digits or _PARSER_MAX_DIGITS, _PARSER_MAX_DIGITS)


@functools.lru_cache(maxsize=4)
def _wide_bounds(str_digits: int) -> tuple[int, int, int]:
    """``10**d`` and the bounds of a wide integer, for Python's int-str limit ``str_digits``.

    ``d`` is the most digits an integer may have to be read from JSON and written back:
    pydantic-core's parser reads at most 4300, whatever Python's own limit on int-str
    conversion (``sys.get_int_max_str_digits()``, 0 for none), which the encoder obeys.
    Cached: the bounds are numbers of 14,000 bits, which cost more to make than a scan of a
    small payload.
    """
    wide: int = 10 ** _wide_digits(
        str_digits
    )  # typeshed types int ** int as Any (a negative exponent is a float)
    return wide, 1 - wide, wide - 1


def segment(key: str | int | None) -> str:
    if key is None:  # a bare value's own place (scan_numbers)
        return ""
    if isinstance(key, str):
        # `pointer(key)` inline (RFC 6901: `~` first), without its generator.
        return "/" + key.replace("~", "~0").replace("/", "~1")
    return f"/{key}"


OUT_OF_RANGE_STAND_IN: Final = b"18446744073709551616"
"""2^64: what :func:`without_long_integers` writes for an integer too long to parse, unless the
text holds it already (:func:`stand_in_for`)."""
_STAND_IN_HEAD: Final = OUT_OF_RANGE_STAND_IN[:16]


def stand_in_for(raw: bytes) -> bytes:
    """What stands in for each integer too long for the parser in a copy of ``raw``.

    A finding on the copy that quotes the stand-in names that integer, so the stand-in is a
    number beyond 64 bits that ``raw`` does not hold, in a number or a string: 2^64 where it
    holds not even 2^64's first 16 digits, else 2^64 plus a number read from a hash of the
    text (an integer no one can plant in a text without the hash's preimage), checked absent.
    """
    if raw.find(_STAND_IN_HEAD) == -1:
        return OUT_OF_RANGE_STAND_IN
    seed = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")
    while True:
        candidate = str(2**64 + seed % 2**40).encode()
        if raw.find(candidate) == -1:
            return candidate
        seed = int.from_bytes(hashlib.blake2b(candidate, digest_size=8).digest(), "big")


# Where pydantic-core's parser says it stopped: the byte after the 4,301st digit.
# Only that message: the parser says where it stopped for any error (a control character in a
# string left open after a long run of digits, say), and only this one puts an integer there.
_STOPPED_AT: Final = re.compile(r"number out of range at line ([0-9]+) column ([0-9]+)")
# Each digit becomes "0" and any other byte "x": a run of digits ends at the next "x" (a memchr).
_DIGIT_OR_NOT: Final = bytes(b"0"[0] if b"0"[0] <= i <= b"9"[0] else b"x"[0] for i in range(256))
# Runs of digits in such a copy are found by a short needle, then measured; past a shorter run
# than the parser refuses, the next is found by a needle of that length, so that no Python step
# is taken for each of many shorter runs (a MiB of `1e-5` is 200,000 of them; of 64 digits,
# 16,000). A find for the long needle pays for its preprocessing (9 us), never more than once a
# run it finds.
_SOME_DIGITS: Final = b"0" * 64
_LONG_RUN: Final = b"0" * (_PARSER_MAX_DIGITS + 1)
_NOT_QUOTE_OR_BACKSLASH: Final = bytes(range(256)).translate(None, b'"\\')


def without_long_integers(
    raw: bytes, error: str = "", stand_in: bytes = OUT_OF_RANGE_STAND_IN, *, parsed: bool = False
) -> bytes | None:
    r"""``raw`` with every integer of more than 4,300 digits replaced by 2^64, or ``None``.

    pydantic's parser refuses such an integer as ``json.invalid`` for the whole document;
    validating this copy reports it where it is, as any integer beyond 64 bits. What is
    replaced is what the regex ``"(?:[^"\\]|\\.)*"|(?<![0-9.eE+])(-?)[0-9]{4301,}`` replaces
    reading left to right (strings skipped; a run of digits not after ``.``, ``e``, ``E`` or
    ``+``), found by C passes. Where they do not read the text as that regex does (a backslash
    outside strings or before a line break, a string left open: never JSON), nothing of it is
    replaced but the integer the parser refused, if it says which: the copy's parse refuses
    the text again, and no Python step is taken for each of its strings.

    Args:
        raw: the JSON text.
        error: the parser's message. It says where the integer it refused is, the first one:
            the text before it holds no other (the parser would have stopped there) and is
            not read again. Without it, or when it points at no such integer, the whole text
            is read.
        stand_in: what is written in their place (:func:`stand_in_for`).
        parsed: whether ``error`` is the message pydantic-core's parser raised for ``raw``
            itself, not one a validator wrote (which may quote the input): where it says it
            stopped is outside every string, and is not tested so (3 ms a MiB dense with
            escapes).
    """
    first = _refused_integer(raw, error, parsed)
    if first is None:
        return _replaced(raw, raw.translate(_DIGIT_OR_NOT), stand_in)
    # The parser read 4,301 digits from `first`; what is left of the run is measured from there.
    after = first + _PARSER_MAX_DIGITS + 1
    if raw.find(b"-", 0, first) == -1:  # a memchr: "e-" in a text of escapes took 0.8 ms a MiB
        classes = raw[after:].translate(_DIGIT_OR_NOT)
    else:
        # Before it the text is JSON with no integer too long; the regex would still replace
        # the digits of a negative exponent as long (`1e-000…1`), as it does anywhere.
        classes = raw.translate(_DIGIT_OR_NOT)
        for at, _ in _long_runs(classes[:first]):
            if raw[at - 2 : at] in _NEGATIVE_EXPONENT:
                return _replaced(raw, classes, stand_in)
        classes = classes[after:]
    end = classes.find(b"x")
    if end == -1:
        end = len(classes)
    rest = raw[after + end :]  # outside any string, after the integer
    return raw[:first] + stand_in + (_replaced(rest, classes[end:], stand_in) or rest)


def without_refused_integers(raw: bytes) -> tuple[bytes, bytes] | None:
    """:func:`without_long_integers` of ``raw`` where its verdict is the one ``raw`` would get.

    So it is where pydantic's parser refuses ``raw`` at the first integer replaced, or at an
    error before it (at the same place in the copy, whose text is the same up to there): the
    copy is validated without a parse of ``raw`` first. The copy and its stand-in
    (:func:`stand_in_for`, chosen only once a copy is to be made: a text of 2^64s hashed for
    nothing cost 1 ms a MiB); ``None`` where ``raw`` holds no run of digits that long, or one
    the parser reads where the regex would replace it (a negative exponent's) or refuses for
    another reason (a leading zero).
    """
    # A run of 4,301 digits holds a whole block of 2,048 at a multiple of 2,048: a text with
    # none (a MiB of 20-digit integers, say) is told by 512 slices, not two passes (1.3 ms).
    if not any(raw[at : at + _BLOCK].isdigit() for at in range(0, len(raw), _BLOCK)):
        return None
    classes = raw.translate(_DIGIT_OR_NOT)
    for at, _ in _long_runs(classes):
        if raw[at : at + 1] == b"0" or raw[at - 2 : at] in _NEGATIVE_EXPONENT:
            return None
    stand_in = stand_in_for(raw)
    copy = _replaced(raw, classes, stand_in)
    return None if copy is None else (copy, stand_in)


# A run of 2 * _BLOCK - 1 digits holds a whole block, wherever it begins: at most 2,151.
_BLOCK: Final = 2048


def _refused_integer(raw: bytes, error: str, parsed: bool = False) -> int | None:
    """Where the run of digits the parser refused begins, if ``error`` says where it is.

    pydantic-core stops at the byte after the 4,301st digit of the integer part, and says so
    as ``at line L column C`` (C counting bytes from 1); a test holds it to that. Unless
    ``parsed`` (:func:`without_long_integers`), the quotes before it are counted.
    """
    stopped = _STOPPED_AT.search(error)
    if stopped is None:
        return None
    line, column = int(stopped[1]), int(stopped[2])
    line_start = 0 if line == 1 else _line_start(raw, line)
    if line_start < 0:
        return None
    start = line_start + column - 1 - (_PARSER_MAX_DIGITS + 1)
    # The run begins there (raw[-1:0], before the text, is empty) and holds the digits read.
    # An integer's run: not the digits of a fraction or an exponent, which the parser reads
    # however long (it may stop after them for another reason, at the same column).
    before = raw[start - 1 : start]
    if start < 0 or before.isdigit() or before in _AFTER:
        return None
    run = raw[start : start + _PARSER_MAX_DIGITS + 1]
    # 4,301 of them, all read (a position past the text's end, which no parser gives, cuts the
    # slice short: 4,300 digits at the end are an integer the parser reads).
    if len(run) <= _PARSER_MAX_DIGITS or not run.isdigit():
        return None
    # A run in a string is no integer: the quotes that delimit before it (escapes neutralised)
    # are even where the parser says it stopped, and may not be at a position it did not say.
    if not parsed and neutral(raw[:start]).count(b'"') % 2:
        return None
    return start


def _line_start(raw: bytes, line: int) -> int:
    """Where line ``line`` (from 2) of ``raw`` begins, or -1 past its last.

    Its newline is found by halving: newlines counted over halves of what is left (two passes
    over the text at most), where splitting the text at its lines built an object a line (a
    MiB of them, 13 ms).
    """
    need = line - 1  # the newline the line follows, counted from 1
    lo, hi, before = 0, len(raw), 0  # that newline is in raw[lo:hi]; `before` precede lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = raw.count(b"\n", lo, mid)
        if before + found >= need:
            hi = mid
        else:
            lo, before = mid, before + found
    if before != need - 1 or raw[lo : lo + 1] != b"\n":
        return -1
    return lo + 1


def _long_runs(classes: bytes) -> Iterator[tuple[int, int]]:
    """Where each run of more digits than the parser reads begins and ends in ``classes``.

    ``classes`` is a text translated by ``_DIGIT_OR_NOT``.
    """
    at = classes.find(_SOME_DIGITS)
    while at != -1:
        end = classes.find(b"x", at)
        if end == -1:
            end = len(classes)
        if end - at > _PARSER_MAX_DIGITS:
            yield at, end
            at = classes.find(_SOME_DIGITS, end)
        else:
            at = classes.find(_LONG_RUN, end)


_NEGATIVE_EXPONENT: Final = frozenset((b"e-", b"E-"))


def _replaced(text: bytes, classes: bytes, stand_in: bytes) -> bytes | None:
    """``text`` (read from outside any string) with its long integers replaced, or ``None``.

    ``classes`` is ``text`` translated by ``_DIGIT_OR_NOT``. A JSON text is read by C passes
    over what lies between its long runs of digits, a piece at a time: quotes counted for the
    strings, escaped backslashes and quotes neutralised first (as :func:`outside_strings` does;
    no run of backslashes crosses a run of digits). The runs themselves are never read again: a
    MiB of long integers with a few strings between them was read whole by each pass, ten
    times orjson's parse of it. ``None`` too for a text the passes do not read as the regex
    does (:func:`without_long_integers`): it was read by the regex, a Python step a string
    (a MiB of them, 130 ms).
    """
    pieces: list[bytes] = []
    kept = before = 0
    inside = False  # whether a string is open where the run begins
    for at, end in _long_runs(classes):
        after = _inside_after(text[before:at], inside)
        if after is None:
            return None
        inside = after
        if not inside and text[at - 1 : at] not in _AFTER:
            pieces += (text[kept:at], stand_in)
            kept = end
        before = end
    # None: no run as long, a string left open, or a backslash the passes do not read.
    if not pieces or _inside_after(text[before:], inside) is not False:
        return None
    pieces.append(text[kept:])
    return b"".join(pieces)


def _inside_after(piece: bytes, inside: bool) -> bool | None:
    """Whether a string is open after ``piece`` of a text, ``inside`` one before it, or ``None``.

    ``None`` where the C passes do not read the piece as the regex does (a backslash outside
    strings or before a line break).
    """
    if piece.find(b"\\") == -1:
        return inside ^ bool(piece.count(b'"') % 2)
    plain = _neutral_copy(piece)
    if plain.find(b"\\\n") != -1:
        return None
    skeleton = plain.translate(None, _NOT_QUOTE_OR_BACKSLASH)
    if unquoted(b'"' + skeleton if inside else skeleton).find(b"\\") != -1:
        return None
    return inside ^ bool(skeleton.count(b'"') % 2)


# What the digits of a fraction or an exponent follow (at the text's start: nothing, b"").
_AFTER: Final = frozenset((b".", b"e", b"E", b"+"))


# What the depth scan keeps of the text: brackets, and quotes and backslashes to skip strings.
_STRUCTURE_ONLY: Final = bytes(range(256)).translate(None, b'[]{}"\\')
OUTLINE_ONLY: Final = bytes(range(256)).translate(None, b'"[]{}:, \t\n\r')
"""``delete`` for a text's outline (:func:`outside`): its brackets, colons, commas and white
space outside its strings, what the duplicate scan reads of its structure."""
_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
# Opening brackets count +1, closing ones -1 (as signed bytes).
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_DEPTH_CHUNK: Final = 65_536
_INNERMOST: Final = b"\x01\xff"  # an opening bracket, then a closing one
_SHRINK: Final = 4  # a pass dropping less than a quarter of the brackets left is the last
# Up to this size the brackets are counted; past it they are found one by one, each `find` a
# memchr, so that a large text with few brackets costs next to nothing (`count` reads every
# byte: 0.8 ms per MiB and per bracket kind).
COUNTED_BYTES: Final = 16_384
"""Up to this size :func:`more_brackets_than` counts the brackets."""


def more_brackets_than(raw: bytes, limit: int) -> bool:
    """Whether ``raw`` holds more than ``limit`` opening brackets (an upper bound of its depth)."""
    if len(raw) <= COUNTED_BYTES:
        return raw.count(b"{") + raw.count(b"[") > limit
    seen = 0
    for bracket in (b"{", b"["):
        at = raw.find(bracket)
        while at != -1:
            seen += 1
            if seen > limit:
                return True
            at = raw.find(bracket, at + 1)
    return False


def outside_strings(raw: bytes) -> bytes:
    """The brackets of ``raw`` that are outside its strings, as the byte loop reads them.

    A string runs from a quote to the next quote not escaped by a backslash (to the end of
    the text when none closes it); outside strings a backslash means nothing. The common
    text, whose backslashes are all escapes inside strings, is read by a few C passes
    (:func:`_outside`). A backslash found outside strings that way (never valid JSON) takes
    the regex, which reads the text byte by byte in C.
    """
    # Each backslash is kept: one left outside the strings shows that this reading of the text
    # was not the byte loop's.
    outside = _outside(raw, None, _STRUCTURE_ONLY)
    if outside.find(b"\\") == -1:
        return outside
    return _STRING.sub(b"", raw).translate(None, _STRUCTURE_ONLY).translate(None, b"\\")


def exceeds_depth(raw: bytes, limit: int) -> bool:
    """Whether the JSON text nests objects and arrays deeper than ``limit``.

    Counting brackets is a C-speed upper bound; only a document that could exceed the limit
    is scanned, and no step of the scan walks the text byte by byte in Python: strings are
    cut out (:func:`outside_strings`), the innermost brackets dropped a level a pass while a
    pass drops many (a text of a few levels is read so alone), and the running depth of what
    is left is a C-level running sum, chunk by chunk, stopping at the first chunk that goes
    past the limit.
    """
    if not more_brackets_than(raw, limit):
        return False
    outside = outside_strings(raw)
    if outside.count(b"{") + outside.count(b"[") <= limit:
        return False
    steps = outside.translate(_STEPS)
    # Each pass drops every bracket closed where it opens (the innermost level): the deepest
    # nesting is one less, while as many close as open. A pass that leaves nothing shows the
    # depth within the limit; otherwise the running sum reads what is left, a few passes on.
    # A pass follows only one that dropped a quarter or more, so that the passes together read
    # at most four times the brackets, whatever the text.
    passes = 0
    # Where the head shows few brackets closed where they open, a pass would drop little.
    dense = steps.count(_INNERMOST, 0, _DEPTH_CHUNK) * 2 * _SHRINK >= min(len(steps), _DEPTH_CHUNK)
    while dense and passes < limit - 1:
        inner = steps.replace(_INNERMOST, b"")
        if not inner:
            return False
        if len(inner) == len(steps):
            break
        little = len(inner) * _SHRINK > len(steps) * (_SHRINK - 1)
        steps, passes = inner, passes + 1
        if little:  # the next passes would drop little: the running sum costs less
            break
    if passes and steps.count(b"\x01") * 2 != len(steps):  # unbalanced (not JSON): all of it
        steps, passes = outside.translate(_STEPS), 0
    limit -= passes
    depth = 0
    for start in range(0, len(steps), _DEPTH_CHUNK):
        chunk = array("b", steps[start : start + _DEPTH_CHUNK])
        if max(accumulate(chunk, initial=depth)) > limit:
            return True
        depth += sum(chunk)
    return False
