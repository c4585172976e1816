"""Redis lists (broker-bindings §1): the queue element IS the envelope JSON, byte for byte.

Redis carries no metadata, so there is no projection: :func:`element` is what to ``RPUSH`` and
:func:`reserve` gives the body back unchanged. Out-of-band headers (a W3C ``traceparent``) need
a transport-owned frame ``{"__bq_frame":1,"headers":{...},"body":"<envelope JSON>"}``, written
only when there are headers, so a plain publish stays the bare envelope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from ..._json import dumps, loads
from .._envelope import BabelEnvelope
from .._replay import is_replay as _headers_say_replay

__all__ = ["FRAME_KEY", "Reserved", "element", "is_replay", "reserve"]

FRAME_KEY: Final = "__bq_frame"
_FRAME_VERSION: Final = 1


class Reserved(NamedTuple):
    """A reserved element: the envelope body exactly as produced, and any framed headers."""

    body: bytes
    headers: dict[str, str]


def element(message: BabelEnvelope[Any] | bytes, headers: Mapping[str, str] | None = None) -> bytes:
    """The list element for ``message``: its JSON unchanged, or framed when headers are given.

    Args:
        message: an envelope (encoded with ``to_json()``) or body bytes already encoded, which
            are stored verbatim.
        headers: out-of-band headers; blank names and values are dropped, and none left means
            no frame.

    Raises:
        UnicodeDecodeError: when headers must be framed and the body is not UTF-8.
    """
    body = message.to_json() if isinstance(message, BabelEnvelope) else bytes(message)
    kept = _clean(headers)
    if not kept:
        return body
    return dumps({FRAME_KEY: _FRAME_VERSION, "headers": kept, "body": body.decode("utf-8")})


def reserve(value: bytes | str) -> Reserved:
    """Read a reserved element: a frame is unwrapped, anything else is the body as is."""
    raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    # A frozen envelope never carries the sentinel key, so only its presence marks a frame.
    if not raw.startswith(b"{") or FRAME_KEY.encode() not in raw:
        return Reserved(raw, {})
    try:
        decoded = loads(raw)
    except ValueError:
        return Reserved(raw, {})
    if not isinstance(decoded, dict) or decoded.get(FRAME_KEY) != _FRAME_VERSION:
        return Reserved(raw, {})
    body = decoded.get("body")
    if not isinstance(body, str):
        return Reserved(raw, {})
    carried = decoded.get("headers")
    headers = {
        k: v
        for k, v in (carried.items() if isinstance(carried, dict) else ())
        if isinstance(v, str)
    }
    return Reserved(body.encode("utf-8"), _clean(headers))


def is_replay(reserved: Reserved) -> bool:
    """Whether a reserved element's frame carries ``bq-replay-bypass`` (a deliberate replay).

    A replaying redrive writes ``element(env, replay_headers())``: the framed form.
    """
    return _headers_say_replay(reserved.headers)


def _clean(headers: Mapping[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (headers or {}).items() if k and v}
