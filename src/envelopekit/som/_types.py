r"""SOM 1.0 scalar types and base classes, with the schema's JSON semantics (``som.md`` §1.3).

* Strings are strict (never coerced from numbers or bytes); ``integer`` is a JSON integer or a
  float with a zero fraction (``7.0``), never a boolean; ``number`` is an int or float, never a
  boolean.
* Patterns follow ECMA-262 semantics, the strict intersection of the reference validators:
  ``[0-9]`` for ``\d`` (no Unicode digits), ``$`` only at the very end (no trailing newline),
  and ``.`` excluding every ECMA line terminator.
* ``uuid``, ``date-time`` and ``uri`` values stay the exact wire text.
* A schema ``anyOf`` is one validator reporting ``<schema>.anyOf`` together with the keywords
  its branches fail, as the SOM Managed Bus (an all-errors validator) reports them; a union
  with a model branch ends in ``NoBranch``, so its branches' errors keep their own pointers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Final, NoReturn, TypeAlias, TypeVar, cast

from pydantic import (
    AfterValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ModelWrapValidatorHandler,
    PlainValidator,
    Strict,
    StringConstraints,
    Tag,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.config import ExtraValues
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema
from pydantic_core import PydanticCustomError, PydanticOmit, core_schema
from typing_extensions import Never, Self

from .. import rules
from .._compat import MISSING
from .._doors import validate_large_json
from .._failfast import (
    FULL_REPORT_BYTES,
    NOT_GIVEN,
    REFUSED_MEMBERS,
    SAME_VALUE,
    TOO_LARGE,
    large_validator,
    passes_absent,
)
from .._formats import DateTimeStr, UriStr, UuidStr
from .._json import finite_json, plain_within, reading_context
from .._model import WireModel
from .._text import WRITTEN
from .._violations import joined, rule_error, shown
from ..rules import Keyword

__all__ = [
    "Bool",
    "DateTimeStr",
    "ExtensionKey",
    "Extensions",
    "FamilyModel",
    "Integer",
    "JsonArray",
    "JsonObject",
    "NoBranch",
    "NonNegativeInteger",
    "Number",
    "SemVer",
    "SomModel",
    "SomOpenModel",
    "Str",
    "StringOrObject",
    "TamsSource",
    "Then",
    "TimeRange",
    "UnitNumber",
    "UriStr",
    "UuidStr",
    "VendorEnum",
    "conditional",
    "forbidden",
    "instant_key",
    "is_extension_key",
    "parse_date_time",
    "required_any",
    "vendor_enum",
]

# --- bases -------------------------------------------------------------------------------------

# Every SOM field has a docstring: it is the property's description in the generated schema, the
# official schema's text verbatim where it has one. A docstring too long for a line is written as a
# parenthesised run of string literals (one string to Python), so the description stays one line
# of text, as the official schemas write it.


class SomModel(WireModel):
    """A closed SOM object (``additionalProperties: false``), immutable once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    __schema_name__: ClassVar[str] = ""


class FamilyModel(SomModel):
    """The model of a payload family, read alone as the envelope reads its payload.

    A message over 16 KiB (its JSON, or a dict's as orjson writes it) is read by the fail-fast
    copy of the model's schema, as ``check`` and the envelope's doors read it: one error per
    array, and what an array's rules read stops at its first failing item.
    """

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Validate a payload given as Python data; over 16 KiB as the envelope's dict door."""
        __tracebackhide__ = True
        if type(obj) is dict and not from_attributes and by_alias is None and by_name is None:
            written = context.get(WRITTEN) if type(context) is dict else None
            if plain_within(obj, written) is TOO_LARGE:
                large: Self = large_validator(cls).validate_python(
                    obj, strict=strict, extra=extra, context=context
                )
                return large
        if by_alias is False and by_name is not True:  # pydantic's own refusal of the options
            return super().model_validate(obj, by_alias=by_alias, by_name=by_name)
        found: Self = cls.__pydantic_validator__.validate_python(
            obj,
            strict=strict,
            extra=extra,
            from_attributes=from_attributes,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )
        return found

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
        """Validate a payload given as JSON; over 16 KiB as the envelope's JSON door."""
        __tracebackhide__ = True
        if len(json_data) > FULL_REPORT_BYTES:
            read = reading_context(json_data, context, integers=False)
            large: Self = validate_large_json(
                cls, json_data, strict, extra, read, by_alias, by_name
            )
            return large
        if by_alias is False and by_name is not True:  # pydantic's own refusal of the options
            return super().model_validate_json(json_data, by_alias=by_alias, by_name=by_name)
        # The validator itself, not pydantic's method: this door costs no second Python frame.
        found: Self = cls.__pydantic_validator__.validate_json(
            json_data,
            strict=strict,
            extra=extra,
            context=context,
            by_alias=by_alias,
            by_name=by_name,
        )
        return found


class SomOpenModel(WireModel):
    """An open SOM object: the known members are typed, any other member is kept as sent.

    The other members are free-form JSON: any value, but never NaN or Infinity. Immutable once
    validated, as :class:`SomModel`.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    __schema_name__: ClassVar[str] = ""

    @model_validator(mode="after")
    def _finite_extras(self, info: ValidationInfo) -> Self:
        extra = self.__pydantic_extra__
        if extra:
            finite_json(extra, info)
        return self


# --- scalars -----------------------------------------------------------------------------------

Str: TypeAlias = Annotated[str, StringConstraints(strict=True)]
"""A JSON string, never coerced."""


Bool: TypeAlias = Annotated[bool, Strict()]
"""A JSON boolean, never coerced."""


def _non_finite(value: float) -> PydanticCustomError:
    return rule_error(rules.NUMBER_NON_FINITE, f"{value!r} is not a JSON number.")


_EXACT: Final = float(2**53)
"""Every whole double up to this magnitude is the integer it was written as."""


def _integer(value: Any) -> int:
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is int:
        return value  # type: ignore[no-any-return]
    if kind is float:
        if value.is_integer():
            # JSON Schema's integer is mathematical: 7.0 is 7 (som.md §1.3). It is kept as the
            # int it equals, so the model's type is honest; the JSON value is unchanged.
            if -_EXACT <= value <= _EXACT:
                return int(value)
            # Past 2^53 the double rounds what was written: 1e26 is read as the double nearest
            # 10^26, whose int(), 100000000000000004764729344, is not 10^26. Its shortest decimal
            # (repr) is what the sender wrote in the short form, and what a reader of doubles
            # prints of it, so the integer is that decimal's: re-emitted, it reads as the same
            # double and, read exactly, as the number the sender wrote.
            return int(Decimal(repr(value)))
        if value - value != 0.0:  # NaN or Infinity (inf - inf and nan - nan are nan)
            raise _non_finite(value)
    raise rule_error("type", "Input should be an integer")


Integer: TypeAlias = Annotated[int, PlainValidator(_integer), WithJsonSchema({"type": "integer"})]
"""A JSON Schema ``integer``: an int, or a float with a zero fraction; never a boolean."""


def _non_negative(value: int) -> int:
    if value < 0:
        raise rule_error("minimum", "Input should be greater than or equal to 0")
    return value


NonNegativeInteger: TypeAlias = Annotated[
    int,
    PlainValidator(_integer),
    AfterValidator(_non_negative),
    WithJsonSchema({"type": "integer", "minimum": 0}),
]
"""An ``integer`` with ``minimum: 0``."""


def _number(value: Any) -> float | int:
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is int:
        return value  # type: ignore[no-any-return]
    if kind is float:
        if value - value != 0.0:  # NaN or Infinity (inf - inf and nan - nan are nan)
            raise _non_finite(value)
        return value  # type: ignore[no-any-return]
    raise rule_error("type", "Input should be a number")


Number: TypeAlias = Annotated[
    float | int, PlainValidator(_number), WithJsonSchema({"type": "number"})
]
"""A JSON Schema ``number``, kept as sent (an int stays an int); never a boolean, NaN or
Infinity (``number.non_finite``)."""


def _unit(value: float | int) -> float | int:
    if value < 0:
        raise rule_error("minimum", "Input should be greater than or equal to 0")
    if value > 1:
        raise rule_error("maximum", "Input should be less than or equal to 1")
    return value


UnitNumber: TypeAlias = Annotated[
    float | int,
    PlainValidator(_number),
    AfterValidator(_unit),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1}),
]
"""A ``number`` between 0 and 1 inclusive (confidences)."""

# --- patterns ----------------------------------------------------------------------------------

# pydantic runs these in Rust's regex engine: `^`/`$` anchor the whole text (no trailing-newline
# match) and search semantics keep prefix-only patterns prefix-only, as ECMA-262 does.
SEMVER_PATTERN: Final = r"^[0-9]+\.[0-9]+\.[0-9]+$"
MESSAGE_TYPE_PATTERN: Final = r"^[a-z][a-z0-9_.]*$"
TOPIC_PATTERN: Final = r"^som\."
EXTENSION_KEY_PATTERN: Final = r"^com\.[a-z0-9-]+\."
TAG_SCHEME_PATTERN: Final = r"^(newsroom|iptc-mediatopic|com\.[a-z0-9-]+\.[a-z0-9-]+)$"
VENDOR_VALUE_PATTERN: Final = r"^x-[a-z0-9_]+$"
# ECMA `.` matches anything but the four line terminators.
TAMS_SOURCE_PATTERN: Final = "^tams://[^/]+/[^\n\r\u2028\u2029]"
TIMERANGE_PATTERN: Final = r"^[\[(]([0-9]+:[0-9]+)?_([0-9]+:[0-9]+)?[\])]$"

_EXTENSION_KEY_RE: Final = re.compile(r"\Acom\.[a-z0-9-]+\.")
_VENDOR_VALUE_RE: Final = re.compile(r"\Ax-[a-z0-9_]+\Z")
_TIMERANGE_RE: Final = re.compile(r"\A[\[(](?:[0-9]+:[0-9]+)?_(?:[0-9]+:[0-9]+)?[\])]\Z")
SemVer: TypeAlias = Annotated[str, StringConstraints(strict=True, pattern=SEMVER_PATTERN)]
"""``x.y.z`` with ASCII digits (``skill_version``)."""

TamsSource: TypeAlias = Annotated[str, StringConstraints(strict=True, pattern=TAMS_SOURCE_PATTERN)]
"""A fully qualified TAMS Source URI, ``tams://store/id``."""


# --- anyOf -------------------------------------------------------------------------------------


M = TypeVar("M", bound=SomModel)


def required_any(
    data: Any,
    handler: Callable[[Any], M],
    branches: tuple[tuple[str, ...], ...],
    message: str,
) -> M:
    """A model wrap validator's body for ``anyOf: [{required: branch}, ...]``.

    Raises ``anyOf`` (with ``required``) unless one branch has all its members present, and
    whatever else the object fails: an after-validator would not run after a member's error.
    Presence is the input's (a member present but invalid satisfies ``required``). Any other
    input, an ``_failfast.Absent`` too, is the handler's to refuse (so the validator may be
    marked ``passes_absent``).
    """
    try:
        model = handler(data)
    except ValidationError as error:
        if isinstance(data, Mapping) and not any(
            all(name in data for name in branch) for branch in branches
        ):
            raise joined(error, rule_error("anyOf", message, also=("required",)), data) from None
        raise
    for branch in branches:
        if all(getattr(model, name) is not MISSING for name in branch):
            return model
    raise rule_error("anyOf", message, also=("required",))


ANY_OF_REQUIRED: Final[dict[Callable[..., Any], tuple[tuple[str, ...], ...]]] = {}
"""Each :func:`any_of_required` validator, with its branches (the fast path reads them)."""


def any_of_required(branches: tuple[tuple[str, ...], ...], message: str) -> Any:
    """The model wrap validator :func:`required_any` runs, declared in the class body.

    ``_source_or_locator = any_of_required((("source",), ("locator",)), "...")``: a function of
    the model's own (``_twin`` reads each model's), marked ``passes_absent``.
    """

    @passes_absent
    def validate(cls: type[M], data: Any, handler: ModelWrapValidatorHandler[M]) -> M:
        return required_any(data, handler, branches, message)

    ANY_OF_REQUIRED[validate] = branches

    # pydantic makes a classmethod of it, by its first parameter's name (`cls`).
    return model_validator(mode="wrap")(validate)


def forbidden(value: Any, handler: ValidatorFunctionWrapHandler, message: str) -> NoReturn:
    """A field wrap validator's refusal of a present member: ``not``, and its own errors.

    The schema's ``not: {required: [member]}`` fails on the member's presence, whatever the
    member's value; the value is still validated, so that its own errors are reported too.
    """
    refused = rule_error("not", message)
    try:
        handler(value)
    except ValidationError as error:
        raise joined(error, refused, value) from None
    raise refused


# --- if/then ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Then:
    """What one value of a deciding member asks of the object: members required and refused."""

    required: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conditional:
    """A :func:`conditional`'s rule: the deciding member, each value's :class:`Then`, the else."""

    by: str
    cases: Mapping[str, Then]
    otherwise: Then
    if_requires: bool = False

    def then(self, value: str | None) -> Then:
        """What ``value`` of ``by`` asks of the object; ``None`` is a missing or invalid one.

        The ``if`` holds for a missing ``by`` and fails for an invalid one, unless it requires
        ``by``: then both fail it (the else-branch), else no rule applies.
        """
        if value is None:
            return self.otherwise if self.if_requires else _NOTHING
        return self.cases.get(value, self.otherwise)

    @property
    def members(self) -> tuple[str, ...]:
        """The members the rule requires or refuses under some value, each once."""
        return tuple(dict.fromkeys(m for t in self._thens for m in (*t.required, *t.refused)))

    @property
    def refusable(self) -> frozenset[str]:
        """The members the rule refuses under some value."""
        return frozenset(member for then in self._thens for member in then.refused)

    @property
    def _thens(self) -> tuple[Then, ...]:
        return (*self.cases.values(), self.otherwise)


_NOTHING: Final = Then()

CONDITIONALS: Final[dict[Callable[..., Any], Conditional]] = {}
"""Each :func:`conditional` validator, with its rule (the fast path reads them, ``._twin``)."""


def conditional(
    by: str,
    cases: Mapping[str, Then],
    *,
    otherwise: Then = _NOTHING,
    if_requires: bool = False,
    required: str = "{value} requires {member}",
    refused: str = "{value} carries no {member}",
) -> Any:
    """The field validator of the schema's ``if``/``then``/``else`` on ``by``'s ``const``.

    ``conditional("author", {"HUMAN": Then(refused=("model",))})``, declared in the class body:
    under each value of ``cases`` its members are required or refused, under any other value
    ``otherwise``'s. It runs on the default too (the members need ``validate_default``), so the
    rule fires whatever else fails, as the schema's does; a refused member is reported with its
    own errors (:func:`forbidden`: a wrap validator; one that refuses nothing is an after one,
    the cheaper). A missing or invalid ``by`` is absent from ``info.data``: no rule applies,
    unless the ``if`` requires ``by`` (``if_requires``; :meth:`Conditional.then`). The messages
    are formatted with ``value`` (``by``'s, or "missing or invalid") and ``member``. ``by`` is
    declared before the members; ``_twin`` reads each model's own function.
    """
    rule = Conditional(by, cases, otherwise, if_requires)
    # `rule.then` as tables read by C calls (a value not in them is `otherwise`'s), so that a
    # value that asks nothing of the members costs no more than a lookup.
    required_under = {value: frozenset(rule.then(value).required) for value in (None, *cases)}
    refused_under = {value: frozenset(rule.then(value).refused) for value in (None, *cases)}
    required_else, refused_else = frozenset(otherwise.required), frozenset(otherwise.refused)
    # The messages for the values the tables name, formatted once.
    said_required = _said_once(required, required_under)
    said_refused = _said_once(refused, refused_under)

    def refuse_absent(info: ValidationInfo) -> NoReturn:
        kind: str | None = info.data.get(by)
        name = info.field_name
        said = said_required.get((kind, name or "")) or _said(required, kind, name)
        raise rule_error("required", said)

    # Each body tests an absent member inline (a call more per member costs a valid message).
    def _conditional(
        cls: type[Any], value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        if value is MISSING:
            names = required_under.get(info.data.get(by), required_else)
            if names and info.field_name in names:
                refuse_absent(info)
            return value  # the default (absent) needs no reading
        kind: str | None = info.data.get(by)
        names = refused_under.get(kind, refused_else)
        if names and (name := info.field_name or "") in names:
            said = said_refused.get((kind, name)) or _said(refused, kind, name)
            forbidden(value, handler, said)
        return handler(value)

    def refusal_of(name: str) -> Callable[[Any, ValidationInfo], NoReturn] | None:
        if name not in rule.refusable:
            return None

        def refuse(value: Any, info: ValidationInfo) -> NoReturn:
            kind: str | None = info.data.get(by)
            if value is not NOT_GIVEN and name in refused_under.get(kind, refused_else):
                raise rule_error(
                    "not", said_refused.get((kind, name)) or _said(refused, kind, name)
                )
            raise PydanticOmit

        return refuse

    def _conditional_after(cls: type[Any], value: Any, info: ValidationInfo) -> Any:
        if value is MISSING:
            names = required_under.get(info.data.get(by), required_else)
            if names and info.field_name in names:
                refuse_absent(info)
        return value

    # pydantic makes a classmethod of either, by its first parameter's name (`cls`).
    if rule.refusable:
        CONDITIONALS[_conditional] = rule
        # The large reading refuses a refused member by a field of its own after the member's
        # (`_failfast.REFUSED_MEMBERS`), and reads the member with the after-validator: its own
        # errors pass as pydantic-core gave them, never through Python.
        REFUSED_MEMBERS[_conditional] = (_conditional_after, refusal_of)
        return field_validator(*rule.members, mode="wrap")(_conditional)
    CONDITIONALS[_conditional_after] = rule
    return field_validator(*rule.members)(_conditional_after)


def _said(message: str, value: str | None, member: str | None) -> str:
    return message.format(value=value or "missing or invalid", member=member)


def _said_once(
    message: str, under: Mapping[str | None, frozenset[str]]
) -> dict[tuple[str | None, str], str]:
    """``message`` for each value of ``under`` and each of its members, formatted once."""
    return {(value, name): _said(message, value, name) for value in under for name in under[value]}


def _any_of(message: str, *also: Keyword) -> PydanticCustomError:
    return rule_error("anyOf", message, also=also)


VENDOR_ENUMS: Final[dict[Callable[[Any], str], tuple[str, ...]]] = {}
"""Each :func:`vendor_enum` validator, with its values (the fast path reads them, ``._twin``)."""


def vendor_enum(*values: str) -> Callable[[Any], str]:
    """A validator for ``anyOf: [{enum: values}, {pattern: ^x-[a-z0-9_]+$}]``."""
    allowed = frozenset(values)
    listed = ", ".join(values)

    def check(value: Any) -> str:
        if type(value) is not str:
            raise _any_of("Input should be a string", "type")
        if value in allowed or _VENDOR_VALUE_RE.match(value):
            return value
        raise _any_of(f"Input should be one of {listed}, or an x- vendor value", "enum", "pattern")

    VENDOR_ENUMS[check] = values
    return check


class VendorEnum:
    """``Annotated[str, VendorEnum(*values)]``: ``anyOf: [{enum: values}, {pattern: ^x-…}]``.

    A governed-but-extensible registry: the validator :func:`vendor_enum` makes, and the
    official schemas' form of it (each branch typed ``string``).
    """

    __slots__ = ("_schema", "_validator")

    def __init__(self, *values: str) -> None:
        self._validator = PlainValidator(vendor_enum(*values))
        self._schema = WithJsonSchema(
            {
                "anyOf": [
                    {"type": "string", "enum": list(values)},
                    {"type": "string", "pattern": VENDOR_VALUE_PATTERN},
                ]
            }
        )

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return self._validator.__get_pydantic_core_schema__(source, handler)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return self._schema.__get_pydantic_json_schema__(schema, handler)


def _no_branch(value: Any) -> NoReturn:
    raise rule_error("anyOf", "Input should match one of the anyOf branches")


NoBranch: TypeAlias = SkipJsonSchema[Annotated[Never, PlainValidator(_no_branch), Tag("anyOf")]]
"""The last member of an ``anyOf`` union validated ``union_mode="left_to_right"``.

It matches nothing: once every branch has failed, the union reports ``anyOf`` at the value
together with each branch's errors at their own pointers (a model branch's members). It costs
nothing on a value that matches, and is left out of the JSON Schema and the type.
"""


def _time_range(value: Any) -> str | list[str]:
    if type(value) is str:
        if _TIMERANGE_RE.match(value):
            return value
        raise _any_of("Input should be a TAMS timerange or a list of them", "pattern", "type")
    if type(value) is list:
        items = cast("list[object]", value)
        if all(type(item) is str and _TIMERANGE_RE.match(item) for item in items):
            return cast("list[str]", items)
        bad: tuple[Keyword, ...] = (
            ("type", "pattern") if all(type(i) is str for i in items) else ("type",)
        )
        raise _any_of("Input should be a TAMS timerange or a list of them", *bad)
    raise _any_of("Input should be a TAMS timerange or a list of them", "type")


TimeRange: TypeAlias = Annotated[
    str | list[str],
    PlainValidator(_time_range),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": TIMERANGE_PATTERN},
                {"type": "array", "items": {"type": "string", "pattern": TIMERANGE_PATTERN}},
            ]
        }
    ),
]
"""A TAMS timerange (``[0:0_134:0)``) or a list of them."""


def _string_or_object(value: Any, info: ValidationInfo) -> str | dict[str, Any]:
    if type(value) is str:
        return value
    if type(value) is dict:
        return finite_json(value, info)  # type: ignore[no-any-return]
    raise _any_of("Input should be a string or an object", "type")


SAME_VALUE.add(_string_or_object)

StringOrObject: TypeAlias = Annotated[
    str | dict[str, Any],
    PlainValidator(_string_or_object),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "object"}]}),
]
"""``anyOf: [{type: string}, {type: object}]``; the object is free-form and kept as sent
(NaN and Infinity refused, ``number.non_finite``)."""

# --- free-form JSON ------------------------------------------------------------------------------

SAME_VALUE.add(finite_json)

JsonObject: TypeAlias = Annotated[dict[str, Any], AfterValidator(finite_json)]
"""A free-form JSON object, kept as sent; NaN and Infinity under it are ``number.non_finite``."""

JsonArray: TypeAlias = Annotated[list[Any], AfterValidator(finite_json)]
"""A free-form JSON array, kept as sent; NaN and Infinity under it are ``number.non_finite``."""

# --- extensions ----------------------------------------------------------------------------------


def _extension_key(key: str) -> str:
    if _EXTENSION_KEY_RE.match(key) is None:
        # `additionalProperties: false` next to `patternProperties`: the schema's keyword.
        raise rule_error(
            "additionalProperties", f"Extension key '{key}' is not namespaced com.<vendor>."
        )
    return key


ExtensionKey: TypeAlias = Annotated[str, AfterValidator(_extension_key)]
"""A vendor extension key, ``com.<vendor>.<anything>``."""

Extensions: TypeAlias = Annotated[
    dict[ExtensionKey, Any],
    AfterValidator(finite_json),
    # Schema generation only: the official schema's form (pydantic would write the pattern as
    # `patternProperties` but leave other keys allowed).
    WithJsonSchema(
        {
            "type": "object",
            "patternProperties": {EXTENSION_KEY_PATTERN: {}},
            "additionalProperties": False,
        }
    ),
]
"""``extensions``: reverse-domain namespaced keys, values free-form JSON kept as sent (NaN and
Infinity refused, ``number.non_finite``)."""


def is_extension_key(key: str) -> bool:
    """Whether ``key`` is a valid SOM extension key (``com.<vendor>.`` prefix)."""
    return _EXTENSION_KEY_RE.match(key) is not None


# --- date-time as an object ----------------------------------------------------------------------

_DATE_TIME_RE: Final = re.compile(
    r"\A([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))\Z"
)


def _date_time(text: str) -> re.Match[str]:
    found = _DATE_TIME_RE.match(text)
    if found is None:
        raise ValueError(f"{shown(text)} is not an RFC 3339 date-time")
    return found


def _instant(found: re.Match[str]) -> datetime:
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    fraction = found.group(7) or ""
    micro = int((fraction + "000000")[:6])
    if found.group(8):
        zone = timezone.utc
    else:
        sign = -1 if found.group(9) == "-" else 1
        offset = timedelta(hours=int(found.group(10)), minutes=int(found.group(11)))
        zone = timezone(sign * offset)
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)


def parse_date_time(text: str) -> datetime:
    """An aware :class:`~datetime.datetime` for a valid SOM ``date-time`` string.

    Fractional digits beyond microseconds are truncated (the string itself is never changed).

    Raises:
        ValueError: when ``text`` is not an RFC 3339 date-time.
    """
    return _instant(_date_time(text))


def instant_key(text: str) -> tuple[datetime, str]:
    """An order key for a valid SOM ``date-time``: its instant, to the last fractional digit.

    :func:`parse_date_time` truncates to microseconds, so ``…00.0000002Z`` and
    ``…00.0000001Z`` would compare equal; the digits past the sixth break the tie (a decimal
    fraction, compared as text once its trailing zeros are gone).

    Raises:
        ValueError: when ``text`` is not an RFC 3339 date-time.
    """
    found = _date_time(text)
    return _instant(found), (found.group(7) or "")[6:].rstrip("0")
