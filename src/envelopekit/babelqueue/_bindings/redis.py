"""Redis lists (broker-bindings §1): the queue element IS the envelope JSON, byte for byte.

Redis carries no metadata, so there is no projection: :func:`element` is what to ``RPUSH`` and
:func:`reserve` gives the body back unchanged. Out-of-band headers (a W3C ``traceparent``) need
a transport-owned frame ``{"__bq_frame":1,"headers":{...},"body":"<envelope JSON>"}``, written
only when there are headers, so a plain publish stays the bare envelope.

What is a frame: the reference (``babelqueue.redis_transport``) unwraps any JSON object with a
truthy ``__bq_frame`` and a ``body``, trusting that "a frozen envelope never carries it". But
an envelope keeps unknown top-level keys and re-emits them (the spec requires it), so a stored
envelope may carry ``__bq_frame`` and ``body``, and reading it as a frame would replace the
message by whatever its ``body`` says. Here a frame is an object with no key but the frame's
three, and ``__bq_frame`` exactly the integer 1, the only version any SDK writes. Anything else
is the body as stored: an envelope carrying the keys is validated as the envelope it is, and a
``__bq_frame: 2`` object (a frame version no SDK defines, which the reference would unwrap as
version 1) is not a v1 envelope either, so the Router quarantines it as received instead of
guessing what its ``body`` means.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from ... import _exports
from ..._json import dumps, loads
from .._envelope import BabelEnvelope
from .._replay import is_replay as _headers_say_replay
from .._routing import received_bytes

__all__ = ["FRAME_KEY", "Reserved", "element", "is_replay", "reserve"]
__dir__ = _exports.listing(__name__, __all__)

FRAME_KEY: Final = "__bq_frame"
_FRAME_VERSION: Final = 1
_FRAME_KEYS: Final = frozenset({FRAME_KEY, "headers", "body"})


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
    """Read a reserved element: a frame is unwrapped, anything else is the body as is.

    A ``str`` element (redis-py with ``decode_responses=True``) is turned back into the bytes
    it was decoded from, invalid UTF-8 included when the client used ``surrogateescape``.
    """
    raw = received_bytes(value)
    # A frozen envelope never carries the sentinel key, so only its presence marks a frame.
    if not raw.startswith(b"{") or FRAME_KEY.encode() not in raw:
        return Reserved(raw, {})
    try:
        decoded = loads(raw)
    except ValueError:
        return Reserved(raw, {})
    if not isinstance(decoded, dict) or not decoded.keys() <= _FRAME_KEYS:
        return Reserved(raw, {})  # an envelope may carry the key: only a frame has no other
    version = decoded.get(FRAME_KEY)
    if type(version) is not int or version != _FRAME_VERSION:
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
