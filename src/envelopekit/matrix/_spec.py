"""The Matrix spec as :func:`envelopekit.check` sees it."""

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
from ._classify import MESSAGE_ADAPTER, MxMessage
from ._error_payload import MxErrorPayload
from ._request import MxRequest
from ._response import MxResponse

__all__ = ["SPEC", "MatrixSpec"]


class MatrixSpec(Spec):
    """Matrix MxEnvelope: requests, responses and error payloads, told apart by ``op``."""

    name: ClassVar[SpecName] = "matrix"

    def validate(
        self, raw: bytes | str, settings: Settings
    ) -> Verdict[MxRequest | MxResponse | MxErrorPayload]:
        """Classify and validate one document; lint warnings go into ``warnings``."""
        large = len(raw) > FULL_REPORT_BYTES
        try:
            if large:
                message = _fail_fast().validate_json(raw, by_name=False)
            else:
                message = MESSAGE_ADAPTER.validate_json(raw, by_name=False)
        except ValidationError as exc:
            found = violations(exc, model=MxMessage, limit=settings.max_violations, partial=large)
            return Verdict(self.name, None, found)
        return Verdict(self.name, message, [], message.envelope_warnings())

    def signature(self, document: Mapping[str, Any]) -> bool:
        """A reply (a response whatever else it carries, §14.9) or a bare error payload.

        Both are open objects, so a key another spec's shape test keys on may ride along.
        """
        if document.get("op") == "$reply":
            return True
        return document.get("ok") is False and "error" in document

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """A Matrix document has an ``op`` or is a bare error payload (``ok: false``, ``error``)."""
        if "op" in document:
            return True
        return document.get("ok") is False and "error" in document


@cache
def _fail_fast() -> SchemaValidator:
    return fail_fast_validator(MESSAGE_ADAPTER.core_schema)


SPEC = MatrixSpec()
"""The one instance ``check`` uses."""
