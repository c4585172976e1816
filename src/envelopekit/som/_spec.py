"""SOM 1.0 as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar, Final

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from .._check import Spec, SpecName
from .._failfast import UNKNOWN_KEYS, UnknownKeys, fail_fast_validator, own_config
from .._json import reading_context
from .._settings import Settings
from .._violations import Verdict, violations, with_left_out
from ._envelope import SomEnvelope, validate_large

__all__ = ["SPEC", "SomSpec"]


def _read(raw: bytes | str, context: dict[str, Any]) -> SomEnvelope:
    # Through the model's fast path (som/_fast.py).
    return SomEnvelope.model_validate_json(raw, context=context)


def _read_large(raw: bytes | str, context: dict[str, Any]) -> SomEnvelope:
    # The model's validator failing fast; its free-form JSON read with a NumberReading.
    return validate_large(raw, reading_context(raw, context, integers=False))


@cache
def _counted() -> SchemaValidator:
    """The fail-fast reading whose closed models count their unknown keys past the cap.

    For a closed model pydantic-core builds an error per unknown key, then every one of them
    as a Python dict when the errors are read (29,000 keys in a 240 KB payload: 33.6x
    ``orjson.loads``); here a key past the ``max_violations`` cap is one call that counts it
    (``_failfast.UnknownKeys``).
    """
    schema = SomEnvelope.__pydantic_core_schema__
    config = own_config(schema, SomEnvelope)
    return fail_fast_validator(schema, config, absent=True, counted=True, inputs=False)


class SomSpec(Spec):
    """SOM 1.0 as the SOM Managed Bus checks it: schema, wire version and payload policy.

    The version mode reaches the validators as the context the registry entry names
    (``som_version_mode``, from the settings).
    """

    name: ClassVar[SpecName] = "som"
    model = SomEnvelope

    read = staticmethod(_read)
    read_large = staticmethod(_read_large)

    def __init__(self) -> None:
        super().__init__()
        self.validate_large = self._validate_large

    def _validate_large(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        """The verdict of the fail-fast reading (:attr:`read_large`), its unknown keys counted.

        The same violations, in the same order, with the same count of what was left out, and
        for a valid message the same envelope; only the unknown keys past the
        ``max_violations`` cap are never built as errors.
        """
        keys = UnknownKeys(settings.max_violations)
        try:
            # Free-form JSON walked within a budget, then the numbers proven plain by C passes.
            context = reading_context(
                raw, {**self.context_of(settings), UNKNOWN_KEYS: keys}, integers=False
            )
            envelope = _counted().validate_json(raw, context=context)
        except ValidationError as exc:
            found = violations(exc, model=SomEnvelope, limit=keys.limit, partial=True)
            return Verdict(self.name, None, with_left_out(found, keys.left))
        if envelope.__pydantic_private__ or envelope.__notes__:
            return Verdict(self.name, envelope, [], envelope.envelope_warnings())
        return Verdict(self.name, envelope, [])

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """A SOM message has ``som_version``, or a ``message_type`` with a ``payload``."""
        return "som_version" in document or ("message_type" in document and "payload" in document)


SPEC: Final = SomSpec()
"""The SOM spec instance :func:`envelopekit.check` uses."""
