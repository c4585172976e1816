"""The error payload (``error-payload.json``) and the error-code catalogue."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final

from pydantic import BeforeValidator, ConfigDict, Field, Strict, ValidationError
from pydantic_core import PydanticKnownError

from .. import rules
from .._compat import MISSING
from .._errors import ProducerError
from .._json import plain_json
from .._violations import Violation, quote, violation
from ._base import FalseConst, JsonData, MxModel, number_warnings

__all__ = ["MxErrorCode", "MxErrorPayload"]


class MxErrorCode(str, Enum):
    """The eleven machine-readable error codes of `error-payload.json`, in the schema's order.

    The names are the gRPC / `google.rpc.Code` canonical codes; `http_status` is the HTTP
    status that definition maps each one to (matrix.md §6), which `MxRequest.fail` writes as
    `statusCode` unless told otherwise.
    """

    OK = "OK"
    """Not an error (HTTP 200). Listed by the schema, but contradicts ``ok: false``."""
    NOT_FOUND = "NOT_FOUND"
    """The requested entity, such as a file or directory, does not exist (HTTP 404)."""
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    """The argument is bad whatever the system state, e.g. a malformed path (HTTP 400)."""
    UNAUTHENTICATED = "UNAUTHENTICATED"
    """The caller has no valid credentials for the op (HTTP 401)."""
    PERMISSION_DENIED = "PERMISSION_DENIED"
    """The caller is known but not allowed; not for quota or anonymity (HTTP 403)."""
    UNAVAILABLE = "UNAVAILABLE"
    """Transiently unavailable; retry with backoff (HTTP 503)."""
    INTERNAL = "INTERNAL"
    """A broken invariant: a serious server-side bug (HTTP 500)."""
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    """The deadline passed first; a write may still have happened (HTTP 504)."""
    ALREADY_EXISTS = "ALREADY_EXISTS"
    """The entity the caller tried to create already exists (HTTP 409)."""
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    """A quota, rate limit or space ran out; retry with backoff (HTTP 429)."""
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    """The system is not in the state the op needs, e.g. a non-empty directory (HTTP 400)."""

    @property
    def http_status(self) -> int:
        """The HTTP status ``google.rpc.Code`` maps this code to."""
        return _HTTP_STATUS[self]

    @property
    def http_statuses(self) -> frozenset[int]:
        """Every HTTP status consistent with this code (412 is allowed for preconditions)."""
        if self is MxErrorCode.FAILED_PRECONDITION:
            return frozenset({400, 412})
        return frozenset({_HTTP_STATUS[self]})

    @property
    def retryable(self) -> bool:
        """Whether matrix.md §6 advises a retry: with backoff, and for a write an idempotency key.

        ``UNAVAILABLE``, ``RESOURCE_EXHAUSTED`` and ``DEADLINE_EXCEEDED``. ``INTERNAL`` is not:
        its advice is "maybe" (a broken invariant, a server-side bug, that a retry fixes only
        where it happened to be transient, which the code does not say).
        """
        return self in _RETRYABLE


_HTTP_STATUS: Final[dict[MxErrorCode, int]] = {
    MxErrorCode.OK: 200,
    MxErrorCode.NOT_FOUND: 404,
    MxErrorCode.INVALID_ARGUMENT: 400,
    MxErrorCode.UNAUTHENTICATED: 401,
    MxErrorCode.PERMISSION_DENIED: 403,
    MxErrorCode.UNAVAILABLE: 503,
    MxErrorCode.INTERNAL: 500,
    MxErrorCode.DEADLINE_EXCEEDED: 504,
    MxErrorCode.ALREADY_EXISTS: 409,
    MxErrorCode.RESOURCE_EXHAUSTED: 429,
    MxErrorCode.FAILED_PRECONDITION: 400,
}
_RETRYABLE: Final = frozenset(
    {
        MxErrorCode.UNAVAILABLE,
        MxErrorCode.DEADLINE_EXCEEDED,
        MxErrorCode.RESOURCE_EXHAUSTED,
    }
)

StatusCode = Annotated[int, Field(ge=100, le=599)]


def _a_code(value: Any) -> Any:
    """Hands the enum validator its members' values only, refusing anything else with its error.

    pydantic-core calls the enum class with a value no member matches, and the class's error
    quotes the value whole: a 1 MiB array cost 30 ms and a repr as large, a 1 MiB string 3 ms
    (``bench/hostile.py``).
    """
    if isinstance(value, str) and value in _VALUES:
        return value
    raise PydanticKnownError("enum", _EXPECTED)


# pydantic-core's own `enum` error, with the list its message gives.
_VALUES: Final = frozenset(code.value for code in MxErrorCode)
_CODES: Final = [repr(code.value) for code in MxErrorCode]
_EXPECTED: Final = {"expected": f"{', '.join(_CODES[:-1])} or {_CODES[-1]}"}


def _refused(keyword: str, at: str, message: str) -> ProducerError:
    """The producer's refusal of an argument the schema's ``keyword`` refuses at ``at``."""
    rule = rules.structural(MxErrorPayload.__schema_name__, keyword)
    return ProducerError(message, [violation(rule, at, message)])


# Strict mode takes an enum from Python only as a member, so `model_validate(json.loads(raw))`
# would refuse the very string `model_validate_json(raw)` accepts; lax, an enum of strings
# still takes exactly its values (never a number or a near-miss), from JSON and from Python.
ErrorCode = Annotated[MxErrorCode, Strict(False), BeforeValidator(_a_code)]


class MxErrorPayload(MxModel):
    """The payload of a failed reply: ``{ok: false, error, code?, statusCode?, details?}``.

    Open, as ``error-payload.json`` is written: unknown keys are kept (``model_extra``) and
    re-emitted after the known ones. ``details`` is any JSON value, ``null`` included.

    Validation context (``model_validate_json(raw, context={...})``): ``"max_violations"``,
    the most number warnings :meth:`envelope_warnings` builds for each part (past it they are
    counted in one ``violations.truncated``); defaults to ``Settings.max_violations``.
    ``ek.check`` passes its settings' value.

    Example:
        >>> MxErrorPayload.of(MxErrorCode.NOT_FOUND, "no such dir").to_json()
        b'{"ok":false,"error":"no such dir","code":"NOT_FOUND","statusCode":404}'
    """

    __schema_name__: ClassVar[str] = "error-payload"
    model_config = ConfigDict(extra="allow")
    # pydantic's documented way to type the extras (the base declares them `dict[str, Any]`).
    # The `Field(init=False)` that keeps them out of the checkers' `__init__` is for the checkers
    # only: at run time pydantic would also store the extras under this name in `__dict__`.
    if TYPE_CHECKING:
        __pydantic_extra__: dict[str, JsonData] = Field(init=False)  # pyright: ignore[reportIncompatibleVariableOverride]
    else:
        __pydantic_extra__: dict[str, JsonData]

    ok: FalseConst
    """Always ``false``."""
    error: str
    """A human-readable message."""
    code: ErrorCode | MISSING = MISSING
    """The machine-readable code, if any."""
    status_code: StatusCode | MISSING = Field(
        default=MISSING, validation_alias="statusCode", serialization_alias="statusCode"
    )
    """An HTTP-style status (100-599), if the op maps to HTTP."""
    details: JsonData | MISSING = MISSING
    """Op-specific structured detail: any JSON value."""

    @classmethod
    def of(
        cls,
        code: MxErrorCode,
        error: str,
        *,
        status_code: int | None = None,
        details: JsonData | None = None,
    ) -> MxErrorPayload:
        """Build an error payload; ``statusCode`` defaults to the code's HTTP status.

        Args:
            code: the error code; ``OK`` is refused (it is not an error).
            error: the human-readable message.
            status_code: the HTTP status to write instead of ``code.http_status``.
            details: structured detail; ``None`` leaves ``details`` out.

        Raises:
            ProducerError: with ``violations`` naming each rule and pointer: a code that is
                none of the eleven (``error-payload.enum``), ``MxErrorCode.OK``
                (``error_code.inconsistent``), a status that is no integer or outside 100-599,
                ``error`` or ``details`` that are not JSON (NaN, Infinity, an integer beyond
                signed 64-bit, a non-JSON value).
        """
        given: object = code  # (typed callers pass a member; others may pass anything)
        if not isinstance(given, MxErrorCode) and (
            not isinstance(given, str) or given not in _VALUES
        ):
            raise _refused("enum", "/code", f"code must be one of {_EXPECTED['expected']}")
        code = MxErrorCode(code)
        if code is MxErrorCode.OK:
            message = "MxErrorCode.OK is not an error; reply with a success payload"
            refused = violation(rules.ERROR_CODE_INCONSISTENT, "/code", message)
            raise ProducerError(message, [refused])
        status = code.http_status if status_code is None else status_code
        if isinstance(status, bool) or not isinstance(status, int):
            raise _refused(
                "type", "/statusCode", f"status_code must be an integer, not {quote(status)}"
            )
        if not 100 <= status <= 599:
            keyword = "minimum" if status < 100 else "maximum"
            # quote(): an integer past 4,300 digits has no str(), a long input no short repr.
            raise _refused(
                keyword, "/statusCode", f"status_code must be 100-599, not {quote(status)}"
            )
        fields: dict[str, Any] = {"ok": False, "error": error, "code": code, "status_code": status}
        if details is not None:
            fields["details"] = details
        try:
            return cls(**fields)
        except ValidationError as exc:
            if details is not None:
                plain_json(details, "/details")  # a non-JSON value, named at its member
            raise ProducerError.from_validation(exc, cls) from exc

    def _notes(self) -> list[Violation]:
        """Lints for ``envelope_warnings``: a code contradicting ``ok: false`` or its status."""
        return self.warnings_at("")

    def warnings_at(self, base: str, max_warnings: int | None = None) -> list[Violation]:
        """The warnings of :meth:`envelope_warnings`, with pointers under ``base``.

        At most ``max_warnings`` number warnings in each part (``details``, the unknown keys);
        by default the cap this payload was validated with.
        """
        found: list[Violation] = []
        if self.code is MxErrorCode.OK:
            found.append(
                violation(
                    rules.ERROR_CODE_INCONSISTENT,
                    base + "/code",
                    "code OK on an error payload (ok: false): a producer bug",
                )
            )
        elif (
            self.code is not MISSING
            and self.status_code is not MISSING
            and self.status_code not in self.code.http_statuses
        ):
            found.append(
                violation(
                    rules.ERROR_CODE_INCONSISTENT,
                    base + "/statusCode",
                    f"statusCode {self.status_code} is not the HTTP status of "
                    f"{self.code.value} ({self.code.http_status})",
                )
            )
        if self.details is not MISSING:
            found += number_warnings(self, self.details, base + "/details", max_warnings)
        if self.model_extra:
            found += number_warnings(self, self.model_extra, base, max_warnings)
        return found
