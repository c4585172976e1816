"""Matrix MxEnvelope as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar, cast

from pydantic import ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails, SchemaValidator, core_schema

from .. import rules
from .._check import Spec, SpecName
from .._failfast import fail_fast_validator
from .._settings import Settings
from .._violations import Verdict, Violation, truncated, violations
from ._base import remember_warning_cap
from ._classify import MESSAGE_ADAPTER, MxMessage
from ._request import MxRequest

__all__ = ["SPEC", "MatrixSpec"]


@cache
def _fail_fast() -> SchemaValidator:
    return fail_fast_validator(MESSAGE_ADAPTER.core_schema)


def _note_unknown_key(key: str, info: ValidationInfo) -> str:
    cast("list[str]", info.context).append(key)  # the list _validate_large reads with
    return key


@cache
def _tolerant() -> SchemaValidator:
    """The fail-fast reading with the request open: its unknown keys noted, none an error.

    For a closed request pydantic-core builds an error per unknown key in Rust, then every one
    of them as a Python dict (110,000 keys: 0.7 s and 75 MiB); here each key is one call that
    appends it to the validation context, a list.
    """
    keys = core_schema.with_info_plain_validator_function(_note_unknown_key)
    return fail_fast_validator(MESSAGE_ADAPTER.core_schema, open_models={MxRequest: keys})


_validate_json = MESSAGE_ADAPTER.validator.validate_json


def _read(raw: bytes | str, context: dict[str, Any] | None = None) -> Any:
    return _validate_json(raw, by_name=False, context=context)


def _read_large(raw: bytes | str, context: dict[str, Any] | None = None) -> Any:
    return _fail_fast().validate_json(raw, by_name=False, context=context)


def _with_unknown_keys(found: list[Violation], unknown: list[str], limit: int) -> list[Violation]:
    """What the closed request reports: ``found`` (its other errors), then its unknown keys.

    pydantic-core reports a closed model's unknown keys after every error of its fields, one
    ``extra_forbidden`` per key in input order; :func:`violations` maps errors in order up to
    ``limit`` findings and counts the rest. ``found`` is that mapping of the other errors
    alone, so the whole is ``found`` with the first keys there is room for, and the count.
    """
    tail = found[-1] if found and found[-1].rule == rules.VIOLATIONS_TRUNCATED else None
    if tail is not None:
        count = tail.message.partition(" ")[0]
        if count.isdigit():  # the mapping stopped among the other errors: no key is reached
            return [*found[:-1], truncated(int(count) + len(unknown))]
        found = found[:-1]  # the notice that arrays stopped at their first failing item
    room = min(max(limit - len(found), 0), len(unknown))
    errors: list[InitErrorDetails] = [
        {"type": "extra_forbidden", "loc": ("request", key), "input": None}
        for key in unknown[:room]
    ]
    keys = violations(
        ValidationError.from_exception_data("MxRequest", errors, "json"), model=MxMessage
    )
    left = len(unknown) - room
    if left:
        return [*found, *keys, truncated(left)]
    return [*found, *keys] if tail is None else [*found, *keys, tail]


class MatrixSpec(Spec):
    """Matrix MxEnvelope: requests, responses and error payloads, told apart by ``op``."""

    name: ClassVar[SpecName] = "matrix"
    model = MxMessage

    # The request, response or error payload the document is (MESSAGE_ADAPTER), by op.
    read = staticmethod(_read)
    read_large = staticmethod(_read_large)

    def __init__(self) -> None:
        super().__init__()
        self.validate_large = self._validate_large

    def _validate_large(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        """The verdict of the fail-fast reading (:attr:`read_large`), read with the request open.

        The same violations, in the same order, with the same count of what was left out, and
        for a valid message the same envelope; only the unknown keys past the
        ``max_violations`` cap are never built as errors.
        """
        unknown: list[str] = []
        limit = settings.max_violations
        try:
            envelope = _tolerant().validate_json(raw, by_name=False, context=unknown)
        except ValidationError as exc:
            found = violations(exc, model=MxMessage, limit=limit, partial=True)
            if unknown:
                found = _with_unknown_keys(found, unknown, limit)
            return Verdict(self.name, None, found)
        if unknown:
            return Verdict(self.name, None, _with_unknown_keys([], unknown, limit))
        if isinstance(envelope, MxRequest):
            # A closed model holds no extras (None); the open copy made an empty dict.
            object.__setattr__(envelope, "__pydantic_extra__", None)
        # The context here is the list of unknown keys: the warning cap is kept by hand.
        remember_warning_cap(envelope, limit)
        if envelope.__pydantic_private__ or envelope.__notes__:
            return Verdict(self.name, envelope, [], envelope.envelope_warnings())
        return Verdict(self.name, envelope, [])

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
