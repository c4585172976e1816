"""BabelQueue v1 as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

from pydantic_core import SchemaValidator

from .._check import Spec, SpecName
from .._failfast import fail_fast_validator
from ._envelope import FAST_PATH, BabelEnvelope, read_json
from ._fast import DEPTH

__all__ = ["SPEC"]


@cache
def _fail_fast() -> SchemaValidator:
    return fail_fast_validator(BabelEnvelope.__pydantic_core_schema__)


def _read_large(raw: bytes | str, context: dict[str, Any]) -> Any:
    return _fail_fast().validate_json(raw, context=context)


class _BabelQueue(Spec):
    name: ClassVar[SpecName] = "babelqueue"
    model = BabelEnvelope
    # The fast path, then the model's own validator: what model_validate_json does.
    read = staticmethod(read_json)
    read_large = staticmethod(_read_large)
    quick_depth = DEPTH

    def __init__(self) -> None:
        super().__init__()
        # The fast validator's own method, built now (the spec is imported on first use): it
        # takes only messages `_consume` notes nothing about, within DEPTH (._fast).
        self.quick = FAST_PATH.validator_json()

    def signature(self, document: Mapping[str, Any]) -> bool:
        # An identity and a meta block with a schema version: no other spec's message has both.
        meta = document.get("meta")
        return ("job" in document or "urn" in document) and (
            isinstance(meta, dict) and "schema_version" in meta
        )

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        return "job" in document or "urn" in document or ("meta" in document and "data" in document)


SPEC = _BabelQueue()
