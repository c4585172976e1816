"""BabelQueue v1 as ``ek.check`` sees it."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from .._check import Spec, SpecName
from .._failfast import FULL_REPORT_BYTES, fail_fast_validator
from .._settings import Settings
from .._violations import Verdict, violations
from ._envelope import BabelEnvelope

__all__ = ["SPEC"]


class _BabelQueue(Spec):
    name: ClassVar[SpecName] = "babelqueue"

    def validate(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        large = len(raw) > FULL_REPORT_BYTES
        try:
            # The model's own validator, called as model_validate_json does but without the
            # keyword arguments it passes on (a tenth of a microsecond on every message).
            validator = _fail_fast() if large else BabelEnvelope.__pydantic_validator__
            envelope = validator.validate_json(raw)
        except ValidationError as exc:
            found = violations(
                exc, model=BabelEnvelope, limit=settings.max_violations, partial=large
            )
            return Verdict("babelqueue", None, found)
        # Only a message with something noted has private state (attach_warnings).
        private = envelope.__pydantic_private__
        return Verdict("babelqueue", envelope, [], envelope.envelope_warnings() if private else [])

    def signature(self, document: Mapping[str, Any]) -> bool:
        # An identity and a meta block with a schema version: no other spec's message has both.
        meta = document.get("meta")
        return ("job" in document or "urn" in document) and (
            isinstance(meta, dict) and "schema_version" in meta
        )

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        return "job" in document or "urn" in document or ("meta" in document and "data" in document)


@cache
def _fail_fast() -> SchemaValidator:
    return fail_fast_validator(BabelEnvelope.__pydantic_core_schema__)


SPEC = _BabelQueue()
