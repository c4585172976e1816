"""BabelQueue v1 as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .._check import Spec, SpecName
from .._failfast import large_validator
from .._json import proven_context
from ._envelope import FAST_PATH, BabelEnvelope
from ._fast import DEPTH

__all__ = ["SPEC"]


_validate_json = BabelEnvelope.__pydantic_validator__.validate_json


def _read(raw: bytes | str, context: dict[str, Any]) -> Any:
    # The model's own validator, called as model_validate_json does but without the keyword
    # arguments it passes on (a tenth of a microsecond on every message). Not the fast path:
    # `quick` is, and what it declines, the fast path would decline again.
    return _validate_json(raw, context=context)


def _read_large(raw: bytes | str, context: dict[str, Any]) -> Any:
    # The validator model_validate_json reads a large message with: the same errors. Numbers
    # proven plain by C passes over the bytes are not walked for (a Python step a container).
    proven = proven_context(raw, context)
    # Its errors are never shown: `_consume`'s hold the model, not the whole input again.
    reader = large_validator(BabelEnvelope, absent=True, inputs=False)
    return reader.validate_json(raw, context=proven)


class _BabelQueue(Spec):
    name: ClassVar[SpecName] = "babelqueue"
    model = BabelEnvelope
    read = staticmethod(_read)
    read_large = staticmethod(_read_large)
    quick_depth = DEPTH
    proves_numbers = True

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
