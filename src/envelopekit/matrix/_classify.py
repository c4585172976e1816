"""Telling incoming bytes apart: request, response or bare error payload, in one parse.

A document's ``op`` decides (matrix.md §14.9): ``"$reply"`` is a response, whatever else it
carries; any other ``op`` (a non-string one included, which then fails ``request.type``) is a
request. A document without ``op`` but with ``ok`` is a payload document, checked against
``error-payload.json``; anything else is read as a request (and fails ``request.required``).
Inside a response, a payload whose ``ok`` is ``false`` is an :class:`MxErrorPayload`.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import Discriminator, Tag, TypeAdapter

from .._model import titled
from ._error_payload import MxErrorPayload
from ._ops import REPLY_OP
from ._request import MxRequest
from ._response import MxResponse

__all__ = ["MESSAGE_ADAPTER", "MxMessage", "classify", "message_kind"]


def message_kind(value: Any) -> str:
    """The schema a document is checked against: ``request``, ``response`` or ``error-payload``."""
    if isinstance(value, dict):
        if "op" in value:
            return "response" if value["op"] == REPLY_OP else "request"
        return "error-payload" if "ok" in value else "request"
    if isinstance(value, MxResponse):
        return "response"
    if isinstance(value, MxErrorPayload):
        return "error-payload"
    # Not an object at all: the request schema reports the `type` failure.
    return "request"


MxMessage = Annotated[
    Annotated[MxRequest, Tag("request")]
    | Annotated[MxResponse, Tag("response")]
    | Annotated[MxErrorPayload, Tag("error-payload")],
    Discriminator(message_kind),
]
"""Any Matrix document: a request, a response, or a bare error payload."""

MESSAGE_ADAPTER: Final[TypeAdapter[MxRequest | MxResponse | MxErrorPayload]] = TypeAdapter(
    MxMessage, config=titled("MxMessage", MxMessage)
)
"""Built once: parses and classifies raw bytes in a single pass; its errors titled ``MxMessage``."""


def classify(raw: bytes | bytearray | str) -> MxRequest | MxResponse | MxErrorPayload:
    """Parse one Matrix document and return the model its ``op`` (or ``ok``) selects.

    Only wire (camelCase) names are accepted, as with ``model_validate_json``.

    Raises:
        pydantic.ValidationError: when the document is not valid for the schema it selects;
            ``envelopekit.violations(exc)`` maps it to rule ids.
    """
    return MESSAGE_ADAPTER.validate_json(raw, by_name=False)
