"""The response envelope (``response.json``): ``op`` is ``"$reply"``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Literal, cast

from pydantic import ConfigDict, Discriminator, Field, Tag
from typing_extensions import TypeVar

from .._compat import MISSING
from .._schema import ref_to
from .._text import InstancesRead
from .._violations import Violation
from ._base import (
    JsonData,
    LamportValue,
    MxModel,
    number_warnings,
    payload_data,
    unsafe_integer,
    warning_cap,
)
from ._error_payload import MxErrorPayload
from ._ops import iface_warnings
from ._trace import trace_warnings

__all__ = ["MxResponse", "payload_kind"]

# Covariant: a failed reply (`MxResponse[Never]`) is a valid answer wherever an
# `MxResponse[Page[Entry]]` is expected, because every reply's payload may be an error.
ResultT = TypeVar("ResultT", covariant=True, default=JsonData)


def payload_kind(value: Any) -> str:
    """The payload's branch: ``"error"`` when ``ok`` is ``false``, else ``"result"``."""
    if isinstance(value, dict):
        # `is False`: JSON `0` is not `false` (and is then no error payload at all).
        ok = cast("dict[str, Any]", value).get("ok")
        return "error" if ok is False else "result"
    return "error" if isinstance(value, MxErrorPayload) else "result"


def _response_json_schema(schema: dict[str, Any]) -> None:
    """The payload as the model chooses it: an error payload exactly when ``ok`` is ``false``.

    A plain ``oneOf`` of the two would refuse every error payload, which is also JSON data.
    """
    payload = schema["properties"]["payload"]
    branches = payload.pop("oneOf")
    error = ref_to(MxErrorPayload, branches)
    payload["if"] = {"type": "object", "properties": {"ok": {"const": False}}, "required": ["ok"]}
    payload["then"] = error
    payload["else"] = next(branch for branch in branches if branch != error)


class MxResponse(MxModel, Generic[ResultT]):
    """A reply: ``{op: "$reply", correlationId, payload, ...}``.

    Open, as ``response.json`` is written: unknown keys are kept and re-emitted after the
    known ones. A payload whose ``ok`` is ``false`` is an :class:`MxErrorPayload` (validated
    against ``error-payload.json``); any other payload is the result type, ``ResultT`` (any
    JSON by default, or e.g. ``Page[Entry]``).

    Validation context (``model_validate_json(raw, context={...})``): ``"max_violations"``,
    the most number warnings :meth:`envelope_warnings` builds for each part (past it they are
    counted in one ``violations.truncated``); defaults to ``Settings.max_violations``.
    ``ek.check`` passes its settings' value.

    Build one with :meth:`MxRequest.reply` or :meth:`MxRequest.fail` rather than by hand:
    they echo ``correlationId``, continue the trace and tick the Lamport clock.
    """

    __schema_name__: ClassVar[str] = "response"
    model_config = ConfigDict(extra="allow", json_schema_extra=_response_json_schema)
    # pydantic's documented way to type the extras (the base declares them `dict[str, Any]`).
    # The `Field(init=False)` that keeps them out of the checkers' `__init__` is for the checkers
    # only: at run time pydantic would also store the extras under this name in `__dict__`.
    if TYPE_CHECKING:
        __pydantic_extra__: dict[str, JsonData] = Field(init=False)  # pyright: ignore[reportIncompatibleVariableOverride]
    else:
        __pydantic_extra__: dict[str, JsonData]

    op: Literal["$reply"]
    """Always ``"$reply"``."""
    correlation_id: str = Field(
        validation_alias="correlationId", serialization_alias="correlationId"
    )
    """The ``correlationId`` of the request this answers."""
    payload: Annotated[
        Annotated[MxErrorPayload, Tag("error")]
        | Annotated[ResultT, InstancesRead(), Tag("result")],
        Discriminator(payload_kind),
    ]
    """The result, or an :class:`MxErrorPayload` when ``ok`` is ``false``."""
    iface: str | MISSING = MISSING
    """The contracted interface, e.g. ``"FsDaemon@1"``."""
    lamport: LamportValue | MISSING = MISSING
    """The replier's Lamport timestamp."""
    from_: str | MISSING = Field(
        default=MISSING, validation_alias="from", serialization_alias="from"
    )
    """The replier's mount path (informational; never trust it for authorization)."""
    trace_id: str | MISSING = Field(
        default=MISSING, validation_alias="traceId", serialization_alias="traceId"
    )
    """The trace id (W3C Trace Context), the same as the request's."""
    span_id: str | MISSING = Field(
        default=MISSING, validation_alias="spanId", serialization_alias="spanId"
    )
    """The replier's span id."""
    parent_span_id: str | MISSING = Field(
        default=MISSING, validation_alias="parentSpanId", serialization_alias="parentSpanId"
    )
    """The request's span id."""

    @property
    def is_error(self) -> bool:
        """Whether the payload is an error payload."""
        return isinstance(self.payload, MxErrorPayload)

    def _notes(self) -> list[Violation]:
        """Lints for ``envelope_warnings``: the iface's form, trace ids, error codes, integers."""
        found = [] if self.iface is MISSING else iface_warnings(self.iface)
        found += trace_warnings(self.trace_id, self.span_id, self.parent_span_id)
        if self.lamport is not MISSING:
            found += unsafe_integer(self.lamport, "/lamport")
        room = warning_cap(self)
        if isinstance(self.payload, MxErrorPayload):
            found += self.payload.warnings_at("/payload", room)
        else:
            found += number_warnings(self, payload_data(self), "/payload", room)
        if self.model_extra:
            found += number_warnings(self, self.model_extra, "", room)
        return found
