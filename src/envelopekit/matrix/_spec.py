"""Matrix MxEnvelope as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, partial
from typing import Any, ClassVar

from pydantic_core import SchemaValidator

from .._check import Spec, SpecName
from .._failfast import fail_fast_validator
from ._classify import MESSAGE_ADAPTER, MxMessage

__all__ = ["SPEC", "MatrixSpec"]


@cache
def _fail_fast() -> SchemaValidator:
    return fail_fast_validator(MESSAGE_ADAPTER.core_schema)


def _read_large(raw: bytes | str) -> Any:
    return _fail_fast().validate_json(raw, by_name=False)


class MatrixSpec(Spec):
    """Matrix MxEnvelope: requests, responses and error payloads, told apart by ``op``."""

    name: ClassVar[SpecName] = "matrix"
    model = MxMessage

    # The request, response or error payload the document is (MESSAGE_ADAPTER), by op.
    read = staticmethod(partial(MESSAGE_ADAPTER.validate_json, by_name=False))
    read_large = staticmethod(_read_large)

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


SPEC = MatrixSpec()
"""The one instance ``check`` uses."""
