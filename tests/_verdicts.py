"""Verdicts compared whole, and a spec's reading with one of its own paths set aside."""

from __future__ import annotations

from typing import Any, Literal

import envelopekit as ek
from envelopekit._check import Spec


def same(new: ek.Verdict[Any], old: ek.Verdict[Any]) -> bool:
    """Whether two verdicts agree: violations, warnings, and the envelope and its type."""
    return (new.violations, new.warnings, new.envelope, type(new.envelope)) == (
        old.violations,
        old.warnings,
        old.envelope,
        type(old.envelope),
    )


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
