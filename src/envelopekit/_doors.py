"""The message models' JSON doors over the bound: ``check``'s reading, pydantic's errors.

Over ``FULL_REPORT_BYTES`` a message model's ``model_validate_json`` validates with a fail-fast
copy of its schema (:mod:`._failfast`), the one ``check`` reads with, whose required fields
default to an :class:`~._failfast.Absent`. pydantic-core gives a missing field's error the
object around it as input, built as Python objects once per missing field: eight SOM members
missing around 240 KB cost the door 29x ``orjson.loads`` and 49 MiB (``bench/hostile.py``).
The errors are raised as the model's own validator raises them: one ``missing`` per field,
whose input is the object it is missing from, parsed once for all of them.
"""

from __future__ import annotations

from typing import Any, Final, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails, InitErrorDetails, from_json

from ._collector import CollectorPaused
from ._failfast import Absent, large_validator, missed, restored
from ._violations import member_path, raised_again

__all__ = ["reported", "validate_large_json"]

RESTORED_MOST: Final = 1_000
"""Over this many errors, a door reads a message lacking members as pydantic-core does."""

_UNPARSED: Final = object()


def validate_large_json(
    model: type[BaseModel],
    json_data: str | bytes | bytearray,
    strict: bool | None = None,
    extra: Any = None,
    context: Any | None = None,
    by_alias: bool | None = None,
    by_name: bool | None = None,
) -> Any:
    """``model``'s fail-fast reading of a large message, raising the model's own errors.

    The arguments are ``model_validate_json``'s, in its order.

    Raises:
        pydantic.ValidationError: as the fail-fast copy of the model's own schema raises it.
    """
    options: dict[str, Any] = {
        "strict": strict,
        "extra": extra,
        "context": context,
        "by_alias": by_alias,
        "by_name": by_name,
    }
    # The model's tree is built with the cyclic collector paused, as check builds it
    # (_collector: 1 MiB of small arrays 83 -> 21 ms).
    with CollectorPaused():
        if by_alias is False or by_name is True:
            # pydantic names a missing field by its name then, not by the alias Absent holds.
            # Its fields found by name alone, it reads the copy whose refusals are no fields.
            return large_validator(model, by_alias=by_alias is not False).validate_json(
                json_data, **options
            )
        before = missed()
        try:
            return large_validator(model, absent=True).validate_json(json_data, **options)
        except ValidationError as exc:
            if missed() == before:
                raise  # no field was missing: these are the model's own errors
            if exc.error_count() > RESTORED_MOST:
                # Restoring costs a few microseconds an error; pydantic-core's own reading
                # costs one build of the object around each missing member instead.
                return large_validator(model).validate_json(json_data, **options)
            raise reported(exc, model, json_data) from None


def reported(
    exc: ValidationError, model: type[BaseModel], json_data: str | bytes | bytearray
) -> ValidationError:
    """``exc``, raised by a validator built with ``absent``, as the model's own raises it.

    Each field the message lacks is one ``missing`` error whose input is the object it is
    missing from (what pydantic-core builds anew for each such error): the one another error
    holds already, else taken from one parse of ``json_data``.
    """
    found = restored(exc.errors(include_url=False))
    # An object pydantic-core reported a missing member of, built already, is used again.
    holders: dict[tuple[str | int, ...], Any] = {}
    for error in found:
        if error["type"] == "missing" and type(error["input"]) is not Absent:
            holders[_parent(model, error)] = error["input"]
    document: Any = _UNPARSED
    errors: list[InitErrorDetails] = []
    for error in found:
        value = error["input"]
        if type(value) is Absent:
            parent = _parent(model, error)
            value = holders.get(parent, _UNPARSED)
            if value is _UNPARSED:
                if document is _UNPARSED:
                    document = from_json(json_data, allow_inf_nan=True)
                value = holders[parent] = _member(document, parent)
        errors.append(raised_again(error, value))
    return ValidationError.from_exception_data(exc.title, errors, "json")


def _parent(model: type[BaseModel], error: ErrorDetails) -> tuple[str | int, ...]:
    """Where, in the document, the object an error on a missing member is about stands."""
    return tuple(member_path(model, tuple(error["loc"]))[:-1])


def _member(document: Any, path: tuple[str | int, ...]) -> Any:
    """The value at ``path`` in ``document`` (``None`` if it is not there)."""
    node = document
    for segment in path:
        if isinstance(node, dict) and type(segment) is str and segment in node:
            node = cast("dict[str, Any]", node)[segment]
        elif isinstance(node, list) and type(segment) is int and 0 <= segment < len(node):
            node = node[segment]
        else:
            return None
    return node
