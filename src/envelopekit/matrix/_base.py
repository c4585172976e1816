"""What every Matrix model shares: wire config, JSON-only values, wire-name parsing, ``to_json``."""

from __future__ import annotations

import typing
import weakref
from functools import partial
from typing import Annotated, Any, ClassVar, Literal, cast

import typing_extensions
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    JsonValue,
    PlainValidator,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    model_validator,
)
from pydantic.config import ExtraValues
from pydantic_core import CoreSchema, core_schema
from typing_extensions import Self

from .. import rules
from .._doors import validate_large_json
from .._failfast import CONTEXT_READERS, FULL_REPORT_BYTES, SAME_VALUE
from .._json import (
    INT64_MAX,
    PLAIN_NUMBERS,
    dumps,
    keep_warnings,
    keeps_warnings,
    kept_warnings,
    needs_scan,
    note_numbers,
    number_refusal,
    numbers_clean,
    numbers_spared,
    plain_copy,
    proven_context,
    refuse_non_json,
    scan_numbers,
    segment,
    written_field,
)
from .._model import WireModel, free_type_variable, has_default
from .._settings import get_settings
from .._text import TextChecked, text_checked_schema
from .._violations import Violation, as_pydantic_error, context_cap, quote, rule_error, violation

__all__ = [
    "FalseConst",
    "JsonData",
    "LamportValue",
    "MxModel",
    "TrueConst",
    "WireNames",
    "number_warnings",
    "payload_data",
    "remember_reading",
    "unsafe_integer",
    "warning_cap",
]


def _json_numbers(value: JsonValue) -> JsonValue:
    # pydantic's JSON parser takes NaN/Infinity (and 1e400 as inf) and integers of any size;
    # neither survives a trip through other languages, so both are refused here.
    # One pointer-free pass for the common payload of safe numbers; scan only when needed.
    if not needs_scan(value):
        return value
    # Only the refusals matter here: the warnings are built when asked, so none is built now
    # (50,000 integers beyond 2^53 built 50,000 warnings, pointers and all, to drop them).
    errors, _ = scan_numbers(value, "", first_refusal=True, max_warnings=0)
    if errors:
        raise as_pydantic_error(errors[0])
    return value


def _read_json_numbers(value: JsonValue, info: ValidationInfo) -> JsonValue:
    # `_json_numbers` where `check` reads the numbers with a NumberReading (a copy of the
    # schema calls it: `_failfast.CONTEXT_READERS`): walked within a budget or proven plain by
    # C passes, scanned without a walk first where the proof failed, and the reading told what
    # the scan found for the warnings (no walk for them where it found nothing). With a
    # reading, the scan builds the warnings under the context's cap, kept for the model's: one
    # scan, not two (without one, they are built only when asked).
    context = info.context
    if numbers_spared(value, context):
        return value
    room = context_cap(context) if keeps_warnings(context) else None
    errors, found = scan_numbers(value, "", first_refusal=True, max_warnings=room or 0)
    if errors:
        raise as_pydantic_error(errors[0])
    if found:  # warnings to build when asked
        note_numbers(context)
        if room is not None:
            keep_warnings(context, value, found)
    return value


CONTEXT_READERS[_json_numbers] = _read_json_numbers
# The copies test the function the schema names (`_json_numbers`), then call its variant.
SAME_VALUE.add(_json_numbers)


def _plain_first(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    # pydantic's `JsonValue` reads Python data by calling Python for each value's tag (1 MiB
    # of small integers: 22x orjson.loads); a container of the JSON types is read with no
    # Python call a value into the copy it would return (`plain_copy`). Anything else is read,
    # and refused, by it. One holding a number `_json_numbers` refuses (a NaN, an infinity) is
    # refused as it would refuse the copy, without one made and walked twice for it.
    kind = type(value)
    if kind is dict or kind is list:
        copy = plain_copy(value, refuse_numbers=True)
        if copy is not None:
            return copy
    return handler(value)


class _PlainFirst:
    """``JsonValue`` read from Python data by :func:`_plain_first` first; JSON as before."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        # A definition of its own, named as JsonValue's is (the JSON Schema's `$defs/JsonValue`,
        # a field of it untitled): JsonValue's is reached from Python data only, through it.
        return core_schema.json_or_python_schema(
            json_schema=core_schema.any_schema(),
            python_schema=core_schema.no_info_wrap_validator_function(
                _plain_first, handler(source)
            ),
            ref=f"{__name__}.JsonValue",
            # Written by type in Rust: JsonValue's tagged union calls Python for each value's
            # tag, writing (`written_field`) as reading.
            serialization=core_schema.simple_ser_schema("any"),
        )


JsonData = Annotated[JsonValue, _PlainFirst, AfterValidator(_json_numbers)]
"""Any JSON value (``null`` included), with the cross-language number rules applied."""


def _exactly_false(value: object) -> Literal[False]:
    if value is False:
        return False
    raise rule_error("const", "Input should be false")


def _exactly_true(value: object) -> Literal[True]:
    if value is True:
        return True
    raise rule_error("const", "Input should be true")


# pydantic matches a bool `Literal` by equality, even in strict mode, so `0` and `0.0` pass as
# `Literal[False]` (and `1` as `Literal[True]`); JSON Schema's `const` refuses them. The plain
# validator is one identity test on one small field, so it costs next to nothing.
FalseConst = Annotated[
    Literal[False], PlainValidator(_exactly_false), WithJsonSchema({"const": False})
]
"""JSON ``false`` and nothing else (not ``0``)."""
TrueConst = Annotated[Literal[True], PlainValidator(_exactly_true), WithJsonSchema({"const": True})]
"""JSON ``true`` and nothing else (not ``1``)."""


def _int64(value: int) -> int:
    if value > INT64_MAX:
        raise rule_error(
            rules.NUMBER_OUT_OF_RANGE, f"{quote(value)} does not fit a signed 64-bit integer"
        )
    return value


LamportValue = Annotated[
    int, Field(ge=0, json_schema_extra={"maximum": INT64_MAX}), AfterValidator(_int64)
]
"""A Lamport timestamp: a JSON integer, at least 0 (and within signed 64-bit)."""


def number_warnings(
    model: BaseModel, value: Any, base: str, max_warnings: int | None = None
) -> list[Violation]:
    """The ``number.unsafe_integer`` warnings for the JSON data under ``value``, of ``model``.

    At most ``max_warnings`` of them (by default :func:`warning_cap`'s), the rest counted in
    one ``violations.truncated``. None, without a walk, when ``model``'s reading found no
    number to note in it (:func:`remember_reading`).
    """
    entry = _READINGS.get(id(model))
    clean, by_id = None, None
    if entry is not None and entry[0]() is model:
        _, read_room, clean, by_id = entry
        # Warnings are kept only under a context's cap (`read_room`), the model's own cap then.
        if max_warnings is not None and max_warnings != read_room:
            by_id = None
    if clean:
        return []
    if by_id is not None and entry is not None and entry[1] is not None:
        room = entry[1]
        kept = by_id.get(id(value))
        if kept is not None and kept[0] is value:
            # What its validator's scan found, under the same cap.
            return _rebased(kept[1], base)
        if type(value) is dict:
            members = _kept_members(value, base, by_id, room)
            if members is not None:
                return members
    # A reading told of a number to note (clean is False): the scan finds where, no walk first.
    if clean is None and not needs_scan(value):
        return []
    room = warning_cap(model) if max_warnings is None else max_warnings
    return scan_numbers(value, base, max_warnings=room)[1]


def _rebased(found: list[Violation], base: str) -> list[Violation]:
    return [
        one
        if one.rule == rules.VIOLATIONS_TRUNCATED
        else Violation(one.rule, base + one.pointer, one.message, one.source)
        for one in found
    ]


def _kept_members(
    value: dict[str, Any], base: str, by_id: dict[int, tuple[Any, list[Violation]]], room: int
) -> list[Violation] | None:
    """The warnings of an object whose members its validators each read, from what they kept.

    For a model's unknown keys, in the scan's order: the members that are no containers, then
    the containers from the last. A member nothing was kept for has no number to note: it was
    spared, or scanned to no warning. ``None`` where the scan must tell (past the cap).
    """
    found: list[Violation] = []
    containers: list[tuple[str, Any]] = []
    for key, item in value.items():
        if (type(item) is dict or type(item) is list) and item:
            containers.append((key, item))
            continue
        kept = by_id.get(id(item))
        if kept is not None and kept[0] is item:
            found += _rebased(kept[1], base + segment(key))
    for key, item in reversed(containers):
        kept = by_id.get(id(item))
        if kept is not None and kept[0] is item:
            found += _rebased(kept[1], base + segment(key))
    if len(found) > room or any(one.rule == rules.VIOLATIONS_TRUNCATED for one in found):
        return None
    return found


# How each model was read, by id, while it lives: the warning cap of its validation context
# (`max_violations`, or None), whether its reading found no number to note, and the warnings
# its validators' scans kept (`_json.keep_warnings`), by the id of the value. Not on the
# model: pydantic compares private state in `==` (a model read by `check` would differ from the
# same one read without a context) and a key in `__dict__` fails the union serializers' check;
# an id table costs nothing to the model.
_READINGS: dict[
    int,
    tuple[
        weakref.ReferenceType[Any],
        int | None,
        bool | None,
        dict[int, tuple[Any, list[Violation]]] | None,
    ],
] = {}


def _forget(key: int, ref: weakref.ReferenceType[Any]) -> None:
    entry = _READINGS.get(key)
    if entry is not None and entry[0] is ref:
        del _READINGS[key]


def remember_reading(
    model: BaseModel,
    room: int | None,
    clean: bool | None = None,
    kept: dict[int, tuple[Any, list[Violation]]] | None = None,
) -> None:
    """Keep, while ``model`` lives, how it was read.

    Args:
        model: the model read.
        room: the most warnings :func:`warning_cap` gives it (``None``: the environment's).
        clean: whether its reading found no number to note in its free-form JSON
            (``_json.numbers_clean``): if so, :func:`number_warnings` has none to build; if
            not, it scans without walking first; ``None``, nothing known.
        kept: the warnings its validators' scans found, by the id of the value scanned
            (``_json.kept_warnings``), each with the value: :func:`number_warnings` gives
            them, under the same cap, instead of scanning again.
    """
    key = id(model)
    _READINGS[key] = (weakref.ref(model, partial(_forget, key)), room, clean, kept)


def warning_cap(model: BaseModel) -> int:
    """The most number warnings ``model`` builds (the rest are counted).

    Its validation context's ``max_violations`` (``check`` passes its settings'), else the
    environment's.
    """
    entry = _READINGS.get(id(model))
    if entry is not None and entry[1] is not None and entry[0]() is model:
        return entry[1]
    return get_settings().max_violations


def unsafe_integer(value: int, at: str) -> list[Violation]:
    """A warning when ``value`` is beyond what a JavaScript number holds exactly."""
    if value > 2**53 - 1:
        return [
            violation(
                rules.NUMBER_UNSAFE_INTEGER,
                at,
                f"{value} is beyond 2^53-1: JavaScript consumers lose its exact value.",
            )
        ]
    return []


class WireNames(TextChecked, BaseModel):
    """Strict and frozen; snake_case names in Python, the camelCase aliases on the wire.

    The base of every Matrix model, the envelopes and the payload conventions alike. Subclasses
    set only ``extra``: pydantic and its mypy plugin both merge the base config.

    Validation reads the wire names only, whatever the door (``model_validate_json``,
    ``model_validate`` of a dict, a ``TypeAdapter``, FastAPI): on a closed schema
    ``correlation_id`` is an unknown key, on an open one an extra, as the JSON Schema reads
    it. Constructing in Python (``MxRequest(correlation_id=...)``) takes the snake_case names.
    """

    model_config = ConfigDict(
        strict=True,
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )
    # The line above is what pydantic's mypy plugin reads for `__init__`'s keywords (the
    # snake_case names; pyright reads them from `validation_alias`, which it does not know);
    # this one is what validation runs with. `__init__` below takes the names at runtime.
    model_config["validate_by_name"] = False

    def __init__(self, /, **data: Any) -> None:
        __tracebackhide__ = True
        self.__pydantic_validator__.validate_python(
            data, self_instance=self, by_alias=True, by_name=True
        )

    # pydantic's own mark of its `__init__`: without it, pydantic would route every validation
    # (`model_validate`, `TypeAdapter`, JSON) through this one, snake_case names and all.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


def _payload_arg(cls: type[BaseModel]) -> object:
    """The type ``cls`` gives its payload (:data:`JsonData` unparametrised)."""
    for base in cls.__mro__:  # a subclass of `MxRequest[Model]` types it as its base does
        args = base.__dict__.get("__pydantic_generic_metadata__", {}).get("args")
        if args:
            return args[0]
    return JsonData


def _free_payload(cls: type[BaseModel]) -> bool:
    """Whether ``cls`` types its payload as ``Any``, which takes any Python object.

    ``MxRequest[Any]``, or a user's subclass still generic in a type variable of its own with no
    default, bound or constraints (pydantic reads such a type variable as ``Any``).
    """
    arg = _payload_arg(cls)
    if isinstance(arg, typing.TypeVar) and has_default(arg):
        arg = cast("Any", arg).__default__  # (typing's TypeVar declares none before 3.13)
    return free_type_variable(arg) or arg is typing.Any or arg is typing_extensions.Any


def _typed_payload(cls: type[BaseModel]) -> bool:
    """Whether ``cls`` types its payload as anything but :data:`JsonData`.

    Such a payload (a model, ``Any``, a ``dict[str, Item]``) is read by its own type, which
    applies none of the JSON payload's number rules: its numbers are read as it writes them.
    """
    return _payload_arg(cls) is not JsonData


def payload_data(model: MxModel) -> Any:
    """``model``'s payload as the JSON data it is: a typed one as its type writes it."""
    if model.__typed_payload__:
        return written_field(model, "payload")
    return model.__dict__["payload"]


class MxModel(WireModel, WireNames):
    """Base of the three Matrix schema models: wire-name parsing and ``to_json``."""

    __schema_name__: ClassVar[str] = ""
    __typed_payload__: ClassVar[bool] = False
    """Whether the class types its payload as anything but JSON data (:func:`_typed_payload`)."""
    __free_payload__: ClassVar[bool] = False
    """Whether the class types its payload as ``Any`` (:func:`_free_payload`)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Note whether the class (``MxRequest[Model]``...) types its payload."""
        super().__pydantic_init_subclass__(**kwargs)
        # Read once per class, not per message: a validation reads it as a class attribute.
        cls.__typed_payload__ = _typed_payload(cls)
        cls.__free_payload__ = _free_payload(cls)

    @model_validator(mode="after")
    def _context_cap(self, info: ValidationInfo) -> Self:
        # The validation context's warning cap (``check`` passes its settings') and whether
        # its reading of the numbers found none to note (every field is read by now), kept for
        # the number warnings `envelope_warnings` builds later, when the context is gone.
        context = info.context
        if context is not None:
            room = context_cap(context)
            # Only a large message is read with a proof or a reading: a small one asks nothing.
            clean = (
                numbers_clean(context)
                if type(context) is dict and PLAIN_NUMBERS in context
                else None
            )
            if room is not None or clean is not None:
                remember_reading(self, room, clean, kept_warnings(context))
        if self.__typed_payload__:
            payload = self.__dict__["payload"]
            if (
                self.__free_payload__
                and info.mode == "python"
                and not isinstance(payload, BaseModel)
            ):
                # `Any` takes any object: one no JSON text holds (a set, bytes, an integer key)
                # was written as another value, or not at all (`to_json()` raised), where the
                # unparametrised class refuses it. A model is its own writing (`create`'s).
                refuse_non_json(payload, "/payload")
            # The JSON payload's number rules, which a typed payload's own type does not
            # apply (a float field takes NaN and 1e400, an int field 2^63), as BabelQueue
            # applies its rules to a typed `data`.
            # The JSON door and `check` prove a large message's numbers plain by C passes, or
            # not: where the proof failed, the payload is scanned without a walk first.
            unproven = type(context) is dict and context.get(PLAIN_NUMBERS) is False
            refused = number_refusal(written_field(self, "payload"), "/payload", unproven=unproven)
            if refused is not None:
                raise as_pydantic_error(refused)
        return self

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The model's schema, refusing in Python mode what no JSON text carries.

        Strings that are no Unicode text, and nesting past the JSON parser's depth.
        """
        return text_checked_schema(cls, source, handler)

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Validate a message given as JSON.

        A message over 16 KiB (``len(json_data)`` over ``FULL_REPORT_BYTES``) is validated as
        ``ek.check`` reads it: the model's schema with every array stopping at its first
        failing item, so a refusal reports at most one error per array and its cost stays
        bounded; the verdict is the same. The errors for members it lacks are pydantic's
        ``missing``, each holding the object it is missing from, built once for all of them.
        Smaller messages report every error.
        """
        __tracebackhide__ = True
        if by_alias is False and by_name is not True:
            # pydantic's own refusal of the call, from its own method.
            return super().model_validate_json(json_data, by_alias=by_alias, by_name=by_name)
        # pydantic's method is this call and the check above: called directly, as its frame
        # would cost a tenth of a small request's validation.
        if len(json_data) > FULL_REPORT_BYTES:
            # Numbers proven plain by C passes over the bytes are not walked for.
            proven = proven_context(json_data, context)
            large: Self = validate_large_json(
                cls, json_data, strict, extra, proven, by_alias, by_name
            )
            return large
        found: Self = cls.__pydantic_validator__.validate_json(
            json_data,
            strict=strict,
            extra=extra,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )
        return found

    def to_json(self) -> bytes:
        """The envelope as compact UTF-8 JSON.

        Wire names, the schema's key order, absent fields omitted, and (on the open schemas)
        unknown keys kept after the known ones in the order they arrived.
        """
        return dumps(self.model_dump(mode="json"))
