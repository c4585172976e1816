"""Verdicts and values compared whole, and a spec's reading with one of its own paths set aside."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel

import envelopekit as ek
from envelopekit._check import Spec


def same(new: ek.Verdict[Any], old: ek.Verdict[Any]) -> bool:
    """Whether two verdicts agree: violations, warnings, and the envelope and its type.

    The envelopes' models must also hold the same extras: pydantic's ``==`` takes ``None``
    (a closed model's) and ``{}`` (an open copy's) for the same, ``model_extra`` does not.
    """
    return (new.violations, new.warnings, new.envelope, type(new.envelope)) == (
        old.violations,
        old.warnings,
        old.envelope,
        type(old.envelope),
    ) and list(extras(new.envelope)) == list(extras(old.envelope))


def extras(value: Any) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """The ``__pydantic_extra__`` of every model in ``value``, each with its class name."""
    if isinstance(value, BaseModel):
        yield type(value).__name__, value.__pydantic_extra__
        for item in value.__dict__.values():
            yield from extras(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from extras(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from extras(item)


def without(
    spec: Spec,
    own: Literal["validate_small", "validate_large"],
    raw: bytes,
    settings: ek.Settings,
) -> ek.Verdict[Any]:
    """``spec.validate(raw, settings)`` with the spec's own reading ``own`` set aside.

    What ``Spec.validate`` gives without it: the model's (or the union's) reading, closed.
    """
    kept = getattr(spec, own)
    setattr(spec, own, None)
    try:
        return spec.validate(raw, settings)
    finally:
        setattr(spec, own, kept)


def typed(value: Any) -> Any:
    """``value`` with the type of every value beside it (``1``, ``1.0`` and ``True`` differ)."""
    if type(value) is dict:
        return {key: typed(item) for key, item in value.items()}
    if type(value) is list:
        return [typed(item) for item in value]
    return (type(value), repr(value))
