"""The check of an argument a public call takes as one of the SDK's objects (``settings=``...)."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["optional_argument"]

T = TypeVar("T")


def optional_argument(name: str, value: object, kind: type[T]) -> T | None:
    """``value``, checked to be ``None`` or a ``kind``.

    Another object would be read for an attribute it does not have, deep in the call: its
    ``AttributeError`` named neither the argument nor the call it was given to.

    Raises:
        TypeError: naming the argument, for a value of any other type.
    """
    if value is None or isinstance(value, kind):
        return value
    raise TypeError(f"{name} must be a {kind.__name__} or None, not {type(value).__name__}")
