"""Matrix MxEnvelope as ``ek.check`` reads it (its registry entry: ``_check.REGISTRY``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, ClassVar, Final, cast

from pydantic import ValidationError, ValidationInfo
from pydantic_core import SchemaValidator, core_schema

from .._check import Spec, SpecName
from .._failfast import fail_fast_validator, own_config, restored
from .._json import reading_context
from .._settings import Settings
from .._violations import Verdict, Violation, violations, with_unknown_keys
from ._classify import MESSAGE_ADAPTER, MxMessage
from ._error_payload import MxErrorPayload
from ._request import MxRequest
from ._response import MxResponse

__all__ = ["SPEC", "MatrixSpec"]


@cache
def _fail_fast() -> SchemaValidator:
    return fail_fast_validator(MESSAGE_ADAPTER.core_schema, absent=True, inputs=False)


_NOTED: Final = "envelopekit_noted_keys"
"""The validation context's entry for the list the open request notes its unknown keys in."""


def _note_unknown_key(key: str, info: ValidationInfo) -> str:
    cast("dict[str, list[str]]", info.context)[_NOTED].append(key)
    return key


@cache
def _tolerant() -> SchemaValidator:
    """The fail-fast reading with the request open: its unknown keys noted, none an error.

    For a closed request pydantic-core builds an error per unknown key in Rust, then every one
    of them as a Python dict (110,000 keys: 0.7 s and 75 MiB); here each key is one call that
    appends it to the validation context's list (:data:`_NOTED`).
    """
    keys = core_schema.with_info_plain_validator_function(_note_unknown_key)
    return fail_fast_validator(
        MESSAGE_ADAPTER.core_schema, open_models={MxRequest: keys}, absent=True, inputs=False
    )


@cache
def _tolerant_request() -> SchemaValidator:
    """:func:`_tolerant`'s request alone (read without the union, see :func:`_direct_kind`)."""
    keys = core_schema.with_info_plain_validator_function(_note_unknown_key)
    schema = MxRequest.__pydantic_core_schema__
    return fail_fast_validator(
        schema, own_config(schema, MxRequest), {MxRequest: keys}, absent=True, inputs=False
    )


@cache
def _fail_fast_response() -> SchemaValidator:
    schema = MxResponse.__pydantic_core_schema__
    return fail_fast_validator(schema, own_config(schema, MxResponse), absent=True, inputs=False)


@cache
def _fail_fast_error() -> SchemaValidator:
    schema = MxErrorPayload.__pydantic_core_schema__
    return fail_fast_validator(
        schema, own_config(schema, MxErrorPayload), absent=True, inputs=False
    )


READ_BYTES: Final = 1024
"""Past this size ``check`` reads a Matrix message's numbers with a ``_json.NumberReading``:
its free-form JSON is walked once, not again for the warnings, and not at all where C passes
prove the text's numbers plain (where the walk would cost more). On a 1.2 KB request of 32
small objects the two walks cost 16 µs and the proof 6.7 µs; on 4 KB of small integers,
``check`` went from 188 to 40 µs."""

_validate_json = MESSAGE_ADAPTER.validator.validate_json
_validate_request = MxRequest.__pydantic_validator__.validate_json
_validate_response = MxResponse.__pydantic_validator__.validate_json
_validate_error = MxErrorPayload.__pydantic_validator__.validate_json


@cache
def _reading(kind: str) -> Callable[..., Any]:
    """The ``validate_json`` of ``kind``'s model read with a NumberReading (past READ_BYTES).

    A copy of its schema whose free-form JSON reads the validation context
    (``_failfast.CONTEXT_READERS``), reporting every error as the model does: the model's own
    validator does not read the context, which would cost every small message a
    ``ValidationInfo``.
    """
    model = _MODELS[kind]
    schema = model.__pydantic_core_schema__
    validator = fail_fast_validator(schema, own_config(schema, model), failing=False, inputs=False)
    return validator.validate_json


def _direct_kind(raw: bytes | str) -> str | None:
    """The model to try first for ``raw`` without the union, from what its bytes show.

    The union's selector (:func:`message_kind`) is a Python function, so pydantic-core hands
    it the whole document as Python objects, and then validates the document again: every
    Matrix message was converted twice (1 µs of a small request's 4; a 1 MiB payload, as long
    as ``orjson.loads``). Without a backslash-u escape, an ``op`` of ``"$reply"`` is those
    exact bytes: a text without them is no response, so it is read as a request; a text with
    them, as a response. A text with ``"ok"`` and without ``"op"`` has no ``op`` anywhere:
    a bare error payload if its ``ok`` is its own, so it is read as one. Whether that was the
    document's kind is then told by the errors (:func:`_was_request`, :func:`_was_response`,
    :func:`_was_error_payload`); when it was not, the union reads it. ``None`` (the union)
    for a text with one, or a ``str``.
    """
    # A search for a byte is memchr's; for two or more, a step every few bytes (0.8 ms a MiB):
    # the cheap question first, and a request's early "op" before a search for "ok".
    if type(raw) is not bytes:
        return None
    if len(raw) > SEARCHED_BYTES:
        return _large_kind(raw)
    if b"\\" in raw and b"\\u" in raw:
        return None
    if b'"$reply"' in raw:
        return "response"
    return "error-payload" if b'"op"' not in raw and b'"ok"' in raw else "request"


SEARCHED_BYTES: Final = 4096
"""Past this size :func:`_direct_kind` searches the bytes with compiled patterns.

``bytes in bytes`` steps a byte at a time where the text repeats the needle's bytes:
``"$reply"`` in a 1 MiB number token of nines took 3.7 ms (orjson reads the token in 0.6),
``"op"`` in 1 MiB of ``b``, 2.8 ms. A pattern's search reads any text in at most 0.9 ms a
MiB, but its call costs more than ``in`` on a small message."""


def _searched(needle: bytes) -> Callable[[bytes], re.Match[bytes] | None]:
    return re.compile(re.escape(needle)).search


_UNICODE_ESCAPE: Final = _searched(b"\\u")
_REPLY: Final = _searched(b'"$reply"')
_OP: Final = _searched(b'"op"')
_OK: Final = _searched(b'"ok"')


def _large_kind(raw: bytes) -> str | None:
    """:func:`_direct_kind` of a text over :data:`SEARCHED_BYTES`, by the same questions."""
    if b"\\" in raw and _UNICODE_ESCAPE(raw):
        return None
    if _REPLY(raw):
        return "response"
    return "error-payload" if not _OP(raw) and _OK(raw) else "request"


def _was_request(exc: ValidationError, raw: bytes, unknown: list[str] | None = None) -> bool:
    """Whether a document that failed as a request is one (not a bare error payload).

    A document is a request unless it has no ``op`` and has an ``ok`` (``message_kind``); its
    ``op`` is then a missing field and its ``ok`` an unknown key (an error of the closed
    request, or noted in ``unknown`` by the open one).
    """
    if not (_OK(raw) if len(raw) > SEARCHED_BYTES else b'"ok"' in raw):
        return True
    if unknown is not None and "ok" not in unknown:
        return True
    errors = restored(exc.errors(include_url=False))
    if not any(e["type"] == "missing" and e["loc"] == ("op",) for e in errors):
        return True
    return unknown is None and not any(
        e["type"] == "extra_forbidden" and e["loc"] == ("ok",) for e in errors
    )


def _was_error_payload(exc: ValidationError) -> bool:
    """Whether a document without ``op`` that failed as an error payload is one.

    It is unless it is no object (an error at the top) or has no ``ok`` of its own.
    """
    return all(
        error["loc"] and not (error["type"] == "missing" and error["loc"] == ("ok",))
        for error in restored(exc.errors(include_url=False))
    )


def _was_response(exc: ValidationError) -> bool:
    """Whether a document that failed as a response is one: an object whose ``op`` is right."""
    return all(error["loc"] and error["loc"][0] != "op" for error in exc.errors(include_url=False))


_MODELS: Final[dict[str, Any]] = {
    "request": MxRequest,
    "response": MxResponse,
    "error-payload": MxErrorPayload,
}


def _was(kind: str, exc: ValidationError, raw: bytes, unknown: list[str] | None = None) -> bool:
    """Whether a document that failed as the model of ``kind`` is of that kind."""
    if kind == "request":
        return _was_request(exc, raw, unknown)
    return _was_response(exc) if kind == "response" else _was_error_payload(exc)


def _read(raw: bytes | str, context: dict[str, Any] | None = None) -> Any:
    return _validate_json(raw, by_name=False, context=context)


def _read_large(raw: bytes | str, context: dict[str, Any] | None = None) -> Any:
    return _fail_fast().validate_json(raw, by_name=False, context=context)


def _with_unknown_keys(found: list[Violation], unknown: list[str], limit: int) -> list[Violation]:
    """What the closed request reports: ``found`` (its other errors), then its unknown keys."""
    return with_unknown_keys(
        found, unknown, limit, model=MxMessage, title="MxRequest", at=("request",)
    )


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
        self.validate_small = self._validate_small

    def _validate_small(self, raw: bytes | str, settings: Settings) -> Verdict[Any] | None:
        """The verdict of the model :func:`_direct_kind` picks; ``None`` for the union's."""
        kind = _direct_kind(raw)
        if kind is None:
            return None
        context = self.context_of(settings)
        try:
            if len(raw) > READ_BYTES:
                read = _reading(kind)
                envelope = read(raw, by_name=False, context=reading_context(raw, context))
            elif kind == "request":
                envelope = _validate_request(raw, by_name=False, context=context)
            elif kind == "response":
                envelope = _validate_response(raw, by_name=False, context=context)
            else:
                envelope = _validate_error(raw, by_name=False, context=context)
        except ValidationError as exc:
            if not _was(kind, exc, cast("bytes", raw)):
                return None
            found = violations(exc, model=_MODELS[kind], limit=settings.max_violations)
            return Verdict(self.name, None, found)
        return Verdict(self.name, envelope, [], envelope.envelope_warnings())

    def _validate_large(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        """The verdict of the fail-fast reading (:attr:`read_large`), read with the request open.

        The same violations, in the same order, with the same count of what was left out, and
        for a valid message the same envelope; only the unknown keys past the
        ``max_violations`` cap are never built as errors. The request, the response or the
        error payload alone where :func:`_direct_kind` tells which, else the union.
        """
        unknown: list[str] = []
        limit = settings.max_violations
        context = self._large_context(raw, settings, unknown)
        kind = _direct_kind(raw)
        model = MxMessage if kind is None else _MODELS[kind]
        try:
            if kind == "request":
                envelope = _tolerant_request().validate_json(raw, by_name=False, context=context)
            elif kind == "response":
                envelope = _fail_fast_response().validate_json(raw, by_name=False, context=context)
            elif kind == "error-payload":
                envelope = _fail_fast_error().validate_json(raw, by_name=False, context=context)
            else:
                envelope = _tolerant().validate_json(raw, by_name=False, context=context)
        except ValidationError as exc:
            if kind is not None and not _was(kind, exc, cast("bytes", raw), unknown):
                unknown.clear()  # the union's reading notes them again
                return self._union_large(raw, context, limit)
            found = violations(exc, model=model, limit=limit, partial=True)
            if unknown:
                found = _with_unknown_keys(found, unknown, limit)
            return Verdict(self.name, None, found)
        return self._accepted(envelope, unknown, limit)

    def _validate_union_large(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        """The verdict of the union's fail-fast reading, read with the request open."""
        context = self._large_context(raw, settings, [])
        return self._union_large(raw, context, settings.max_violations)

    def _union_large(self, raw: bytes | str, context: dict[str, Any], limit: int) -> Verdict[Any]:
        unknown: list[str] = context[_NOTED]
        try:
            envelope = _tolerant().validate_json(raw, by_name=False, context=context)
        except ValidationError as exc:
            found = violations(exc, model=MxMessage, limit=limit, partial=True)
            if unknown:
                found = _with_unknown_keys(found, unknown, limit)
            return Verdict(self.name, None, found)
        return self._accepted(envelope, unknown, limit)

    def _large_context(
        self, raw: bytes | str, settings: Settings, unknown: list[str]
    ) -> dict[str, Any]:
        """The context of a large reading: the settings', and the list for the unknown keys.

        With the message's ``_json.NumberReading``: its free-form JSON walked once, or not at
        all where C passes prove its numbers plain (1 MiB of small integers was walked twice,
        each walk about 5x ``orjson.loads``).
        """
        context = reading_context(raw, {**self.context_of(settings), _NOTED: unknown})
        return cast("dict[str, Any]", context)

    def _accepted(self, envelope: Any, unknown: list[str], limit: int) -> Verdict[Any]:
        if unknown:
            return Verdict(self.name, None, _with_unknown_keys([], unknown, limit))
        if isinstance(envelope, MxRequest):
            # A closed model holds no extras (None); the open copy made an empty dict.
            object.__setattr__(envelope, "__pydantic_extra__", None)
        return Verdict(self.name, envelope, [], envelope.envelope_warnings())

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
