"""SOM 1.0 for :func:`envelopekit.check`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pydantic import ValidationError

from .._check import Spec, SpecName
from .._failfast import FULL_REPORT_BYTES
from .._settings import Settings
from .._violations import Verdict, violations
from ._envelope import SomEnvelope, validate_large

__all__ = ["SPEC", "SomSpec"]

# Built once: the hot path passes one of these two dicts as the validation context.
_CONTEXTS: Final[dict[str, dict[str, str]]] = {
    "strict": {"som_version_mode": "strict"},
    "tolerant": {"som_version_mode": "tolerant"},
}


class SomSpec(Spec):
    """SOM 1.0 as the SOM Managed Bus checks it: schema, wire version and payload policy."""

    name: ClassVar[SpecName] = "som"
    max_bytes: ClassVar[int | None] = 240_000

    def validate(self, raw: bytes | str, settings: Settings) -> Verdict[SomEnvelope]:
        """Validate one SOM message; the version mode comes from ``settings``."""
        large = len(raw) > FULL_REPORT_BYTES
        context = _CONTEXTS[settings.som_version_mode]
        try:
            if large:
                envelope = validate_large(raw, context)
            else:
                envelope = SomEnvelope.model_validate_json(raw, context=context)
        except ValidationError as exc:
            found = violations(exc, model=SomEnvelope, limit=settings.max_violations, partial=large)
            return Verdict("som", None, found)
        return Verdict("som", envelope, [], envelope.envelope_warnings())

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """A SOM message has ``som_version``, or a ``message_type`` with a ``payload``."""
        return "som_version" in document or ("message_type" in document and "payload" in document)


SPEC: Final = SomSpec()
"""The SOM spec instance :func:`envelopekit.check` uses."""
