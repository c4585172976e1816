"""The optional ``dead_letter`` block carried only by messages on a dead-letter queue."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, Literal, overload

from pydantic import ConfigDict, Field, StrictInt, StrictStr

from .._compat import MISSING
from .._json import INT64_MAX
from .._model import WireModel

__all__ = ["ERROR_TEXT_CHARS", "DeadLetter", "DeadLetterReason", "cut_text"]

ERROR_TEXT_CHARS: Final = 4096
"""The most characters of a failure's text (``error``) and type name (``exception``) that a
dead letter written here carries; the rest is cut, a marker saying how much (:func:`cut_text`).

The spec (and every other SDK) writes the exception message whole; an SDK decision, so that a
handler's 5 MB exception text cannot make a 5 MB dead letter, nor a 1 MB URN quoted in
``UnknownUrnError`` double the message.
"""


@overload
def cut_text(text: str, most: int = ERROR_TEXT_CHARS) -> str: ...
@overload
def cut_text(text: None, most: int = ERROR_TEXT_CHARS) -> None: ...
def cut_text(text: str | None, most: int = ERROR_TEXT_CHARS) -> str | None:
    """``text``, or its first ``most`` characters and a marker saying how many more were cut.

    Cut between two code points (``"... [5238784 more characters cut]"`` follows), never inside
    one, so the text stays valid Unicode as far as it was.
    """
    if text is None or len(text) <= most:
        return text
    return f"{text[:most]}... [{len(text) - most} more characters cut]"


DeadLetterReason = Literal["failed", "unknown_urn", "poison"]
"""Why a message was dead-lettered: its handler kept failing, no handler is mapped for its
URN, or it could not be processed at all."""


class DeadLetter(WireModel):
    """``dead_letter``: why and when a message left its queue for the dead-letter queue.

    ``reason`` is any string on input (other SDKs have written values such as ``max_attempts``);
    this SDK writes only a :data:`DeadLetterReason`. ``error`` and ``exception`` are nullable;
    absent and ``null`` stay distinct when re-emitted.
    """

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    __schema_name__: ClassVar[str] = "message-envelope"

    reason: StrictStr
    """Why the message was dead-lettered."""
    error: StrictStr | MISSING | None = MISSING
    """The failure's message, if any."""
    exception: StrictStr | MISSING | None = MISSING
    """The failure's type name in the dead-lettering SDK's language, if any (informational)."""
    failed_at: Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]
    """Dead-letter time as Unix epoch milliseconds, UTC."""
    original_queue: StrictStr
    """The queue the message was consumed from."""
    attempts: Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]
    """Delivery attempts made before dead-lettering."""
    lang: StrictStr | MISSING = MISSING
    """The language of the SDK that dead-lettered the message."""

    def to_wire(self) -> dict[str, Any]:
        """The block as a JSON-ready dict in spec order, then unknown keys."""
        out: dict[str, Any] = {"reason": self.reason}
        if self.error is not MISSING:
            out["error"] = self.error
        if self.exception is not MISSING:
            out["exception"] = self.exception
        out["failed_at"] = self.failed_at
        out["original_queue"] = self.original_queue
        out["attempts"] = self.attempts
        if self.lang is not MISSING:
            out["lang"] = self.lang
        if self.__pydantic_extra__:
            out.update(self.__pydantic_extra__)
        return out
