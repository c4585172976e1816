"""SOM 1.0 as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from .._check import Spec, SpecName
from ._envelope import SomEnvelope, validate_large

__all__ = ["SPEC", "SomSpec"]


def _read(raw: bytes | str, context: dict[str, Any]) -> SomEnvelope:
    # Through the model's fast path (som/_fast.py).
    return SomEnvelope.model_validate_json(raw, context=context)


def _read_large(raw: bytes | str, context: dict[str, Any]) -> SomEnvelope:
    return validate_large(raw, context)  # the model's validator failing fast


class SomSpec(Spec):
    """SOM 1.0 as the SOM Managed Bus checks it: schema, wire version and payload policy.

    The version mode reaches the validators as the context the registry entry names
    (``som_version_mode``, from the settings).
    """

    name: ClassVar[SpecName] = "som"
    model = SomEnvelope

    read = staticmethod(_read)
    read_large = staticmethod(_read_large)

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """A SOM message has ``som_version``, or a ``message_type`` with a ``payload``."""
        return "som_version" in document or ("message_type" in document and "payload" in document)


SPEC: Final = SomSpec()
"""The SOM spec instance :func:`envelopekit.check` uses."""
