"""The check of an argument a public call takes as one of the SDK's objects (``settings=``...).

Or as an object of the user's that a protocol describes (a seen-store, a cipher): refused where
it is given, naming the argument, rather than as an ``AttributeError`` at each message.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["implementing", "optional_argument"]

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


def implementing(name: str, value: object, methods: tuple[str, ...], what: str) -> None:
    """Refuse ``value`` unless it is an object with each of ``methods`` (a protocol's).

    Args:
        name: the argument, as the call spells it.
        value: what it was given.
        methods: the methods the SDK calls on it.
        what: what it must be, with an example (``"a Cipher (...)"``).

    Raises:
        TypeError: naming the argument, for a class (``Store`` rather than ``Store()``) or an
            object lacking one of ``methods``.
    """
    if isinstance(value, type) or not all(
        callable(getattr(value, method, None)) for method in methods
    ):
        raise TypeError(f"{name} must be {what}, not {value!r}")
