"""SOM 1.0 as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar, Final, cast

from pydantic import ValidationError, ValidationInfo
from pydantic_core import SchemaValidator, core_schema

from .._check import Spec, SpecName
from .._failfast import fail_fast_validator, own_config
from .._settings import Settings
from .._violations import Verdict, Violation, violations, with_unknown_keys
from ._envelope import SomEnvelope, validate_large

__all__ = ["SPEC", "SomSpec"]


def _read(raw: bytes | str, context: dict[str, Any]) -> SomEnvelope:
    # Through the model's fast path (som/_fast.py).
    return SomEnvelope.model_validate_json(raw, context=context)


def _read_large(raw: bytes | str, context: dict[str, Any]) -> SomEnvelope:
    return validate_large(raw, context)  # the model's validator failing fast


_UNKNOWN: Final = "envelopekit_unknown_keys"
"""The validation context's list of the envelope's unknown keys, in :func:`_tolerant`."""


def _note_unknown_key(key: str, info: ValidationInfo) -> str:
    cast("dict[str, list[str]]", info.context)[_UNKNOWN].append(key)
    return key


@cache
def _tolerant() -> SchemaValidator:
    """The fail-fast reading with the envelope open: its unknown keys noted, none an error.

    For the closed envelope pydantic-core builds an error per unknown key, then every one of
    them as a Python dict when the errors are read (30,000 keys in 240 KB: 20 ms, 12x
    ``orjson.loads``); here each key is one call that appends it to a list in the context.
    """
    keys = core_schema.with_info_plain_validator_function(_note_unknown_key)
    schema = SomEnvelope.__pydantic_core_schema__
    config = own_config(schema, SomEnvelope)
    return fail_fast_validator(schema, config, {SomEnvelope: keys}, absent=True)


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
        """The verdict of the fail-fast reading (:attr:`read_large`), read with the envelope open.

        The same violations, in the same order, with the same count of what was left out, and
        for a valid message the same envelope; only the unknown keys past the
        ``max_violations`` cap are never built as errors.
        """
        unknown: list[str] = []
        limit = settings.max_violations
        try:
            envelope = _tolerant().validate_json(
                raw, context={**self.context_of(settings), _UNKNOWN: unknown}
            )
        except ValidationError as exc:
            if unknown and exc.error_count() == 1 and not exc.errors(include_url=False)[0]["loc"]:
                # The envelope's own after-validator (its payload's agreement with its type):
                # run only on valid fields, which a closed envelope with unknown keys never has.
                found = []
            else:
                found = violations(exc, model=SomEnvelope, limit=limit, partial=True)
            if unknown:
                found = self._with_unknown_keys(found, unknown, limit)
            return Verdict(self.name, None, found)
        if unknown:
            return Verdict(self.name, None, self._with_unknown_keys([], unknown, limit))
        # A closed model holds no extras (None); the open copy made an empty dict.
        object.__setattr__(envelope, "__pydantic_extra__", None)
        if envelope.__pydantic_private__ or envelope.__notes__:
            return Verdict(self.name, envelope, [], envelope.envelope_warnings())
        return Verdict(self.name, envelope, [])

    @staticmethod
    def _with_unknown_keys(
        found: list[Violation], unknown: list[str], limit: int
    ) -> list[Violation]:
        return with_unknown_keys(found, unknown, limit, model=SomEnvelope, title="SomEnvelope")

    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """A SOM message has ``som_version``, or a ``message_type`` with a ``payload``."""
        return "som_version" in document or ("message_type" in document and "payload" in document)


SPEC: Final = SomSpec()
"""The SOM spec instance :func:`envelopekit.check` uses."""
