"""Typed helpers for the page's payload conventions (matrix.md §4.1-4.3).

The schemas leave ``payload`` untyped; the page's conventions are what most ops follow:

* success: ``{ok: true, ...result}``, the result fields beside ``ok`` (:class:`SuccessPayload`);
* list results: ``count``, ``items`` and ``cursor`` (:class:`Page`), where an absent
  ``cursor`` marks the last page and ``count`` is the number of items on this page
  (matrix.md §14.4; conventions of these helpers, not wire checks);
* write ops: an optional caller-supplied ``idempotencyKey`` in the request payload
  (:class:`WriteArgs`).

Use them as the type argument of the envelopes, ``MxRequest[WriteFileArgs]`` and
``MxResponse[Page[Entry]]``, or subclass them for an op's own fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar, Generic

from pydantic import ConfigDict, Field
from typing_extensions import TypeVar

from .._compat import MISSING
from ._base import JsonData, TrueConst, WireNames

__all__ = ["IdempotencyKey", "Page", "SuccessPayload", "WriteArgs"]

ItemT = TypeVar("ItemT", default=JsonData)

IdempotencyKey = Annotated[str, Field(strict=True)]
"""A caller-supplied key that makes a write safe to retry (the same key is applied once)."""


class SuccessPayload(WireNames):
    """A successful result, ``{ok: true, ...result}``.

    Open: result fields the model does not name are kept in ``model_extra``. Subclass it to
    type an op's result fields (and set ``extra="forbid"`` there if the op's result is closed).
    """

    model_config = ConfigDict(extra="allow")
    # A response's payload: what it refuses read alone is the response schema's rule.
    __schema_name__: ClassVar[str] = "response"

    ok: TrueConst
    """Always ``true`` (required: a payload without ``ok`` does not follow the convention)."""


class Page(SuccessPayload, Generic[ItemT]):
    """One page of a list result: ``{ok: true, count, items, cursor?}``.

    Example:
        >>> page = Page[str].of(["a", "b"], cursor="eyJvIjoyfQ")
        >>> (page.count, page.has_more)
        (2, True)
    """

    count: Annotated[int, Field(ge=0)]
    """How many items this page holds."""
    items: list[ItemT]
    """The items of this page."""
    cursor: str | MISSING = MISSING
    """An opaque cursor for the next page; absent on the last page."""

    @classmethod
    def of(cls, items: Sequence[ItemT], *, cursor: str | None = None) -> Page[ItemT]:
        """Build a page with ``count`` set to ``len(items)``; no ``cursor`` means the last page."""
        if cursor is None:
            return cls(ok=True, count=len(items), items=list(items))
        return cls(ok=True, count=len(items), items=list(items), cursor=cursor)

    @property
    def has_more(self) -> bool:
        """Whether another page follows (a ``cursor`` is present)."""
        return self.cursor is not MISSING


class WriteArgs(WireNames):
    """The arguments of a write op: subclass it and add the op's fields.

    Closed by default, like the request envelope; the ``idempotencyKey`` lets the handler apply
    a retried write once (matrix.md §4.3: same key, op, caller and iface means the same write).
    """

    model_config = ConfigDict(extra="forbid")
    # A request's payload: what it refuses read alone is the request schema's rule.
    __schema_name__: ClassVar[str] = "request"

    idempotency_key: IdempotencyKey | MISSING = Field(
        default=MISSING, validation_alias="idempotencyKey", serialization_alias="idempotencyKey"
    )
    """Optional caller-supplied key for retry-safe writes."""
