"""What every producer keeps its message within: the size and depth ``check`` reads.

``ek.check`` refuses a text past ``Settings.max_message_bytes`` (or a spec's own limit, SOM's
240,000 bytes) as ``message.too_large``, and one nesting past ``Settings.max_depth`` (or the
parser's 200 levels) as ``message.too_deep``, before anything parses it. A producer refuses
the same messages, with the same rule ids, as a :class:`~envelopekit.ProducerError`. It writes
the wire data it validates once, as orjson writes it, and hands the text to the validation
that would write it again to probe it (:data:`~envelopekit._text.WRITTEN`), rather than write
the message once it is built (a model dump: 26 µs of SOM's 150 µs beat-6).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, TypeVar

import orjson

from . import rules
from ._errors import ProducerError
from ._json import PARSER_MAX_DEPTH, PLAIN_DATA, dumps, exceeds_depth, respelled
from ._settings import Settings, get_settings
from ._text import too_deep_at
from ._violations import violation

__all__ = ["SOM_MAX_BYTES", "bounded", "refuse_unbounded"]

_M = TypeVar("_M")

SOM_MAX_BYTES: Final = 240_000
"""SOM's own size limit: the bus refuses a message over 240,000 bytes (``message.too_large``,
its 413), whatever ``Settings.max_message_bytes`` allows."""


def refuse_unbounded(
    wire: Any,
    settings: Settings | None = None,
    max_bytes: int | None = None,
    levels: int | None = None,
) -> bytes | None:
    """Refuse wire data whose text ``check`` with ``settings`` refuses for its size or depth.

    Args:
        wire: the message as wire data (JSON values, and an ``orjson.Fragment`` for a part
            written already: a model payload's own text).
        settings: the limits (the environment's when not given), as ``check`` reads them.
        max_bytes: the spec's own size limit, if it has one (:data:`SOM_MAX_BYTES`).
        levels: the levels of arrays and objects ``wire`` nests, where the producer read them
            as it copied it (:func:`~envelopekit._json.plain_json_nesting`); else the text's
            depth is read.

    Returns:
        The text, where orjson wrote it of plain JSON data (:data:`PLAIN_DATA`, what the
        models' fast paths take: the validation context's :data:`WRITTEN`); ``None`` where
        another encoder wrote it (a subclass of a JSON type, an integer beyond 64 bits), or
        none did (a lone surrogate, a value no JSON holds), for validation to refuse.

    Raises:
        ProducerError: ``message.too_large`` at ``""``, as ``check`` reports it;
            ``message.too_deep`` at the first array or object past the limit (``check``
            reports it at ``""``).
    """
    settings = settings if settings is not None else get_settings()
    plain: bytes | None
    try:
        text = plain = orjson.dumps(wire, option=PLAIN_DATA)
    except (orjson.JSONEncodeError, RecursionError):
        plain = None
        try:
            text = dumps(wire)
        except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
            return None
    _refuse_size(text, settings, max_bytes)
    _refuse_depth(text, settings, levels, wire)
    return plain


def bounded(message: _M, to_json: Callable[[], bytes]) -> _M:
    """``message``, made from another by a producer, refused where its text is out of bounds.

    ``to_json`` is its writer: a message derived from one already read (retried, dead-lettered)
    is written once more, as it carries no text of its own. One it cannot write is for its
    ``to_json`` to refuse when it is sent, as it was before.

    Raises:
        ProducerError: as :func:`refuse_unbounded`, with the environment's settings.
    """
    try:
        text = to_json()
    except (TypeError, ValueError, RecursionError):  # a serializer's error is a ValueError
        return message
    settings = get_settings()
    _refuse_size(text, settings, None)
    _refuse_depth(text, settings)
    return message


def _refuse_depth(
    text: bytes, settings: Settings, levels: int | None = None, wire: Any = None
) -> None:
    # Past the parser's own 200 levels, `check` refuses the text whatever its limit.
    depth = min(settings.max_depth, PARSER_MAX_DEPTH)
    if levels > depth if levels is not None else exceeds_depth(text, depth):
        # `check` says so of the whole text; the producer names the first array or object
        # past the limit in the wire data, where it can (not inside a fragment).
        at = "" if wire is None else too_deep_at(wire, depth) or ""
        message = f"The JSON nests deeper than {depth}."
        raise ProducerError.of([violation(rules.MESSAGE_TOO_DEEP, at, message)])


def _refuse_size(text: bytes, settings: Settings, max_bytes: int | None) -> None:
    limit = settings.max_message_bytes
    if max_bytes is not None and max_bytes < limit:
        limit = max_bytes
    size = len(text)
    # The reference encoder (`to_json`) spells a float below 1e-4 up to a byte longer (per
    # float of 4 bytes or more) or two shorter: near the limit, its text is measured.
    if size * 6 > limit * 5 and respelled(text):
        size = len(dumps(json.loads(text)))
    if size > limit:
        message = f"{size} bytes exceeds {limit}."
        raise ProducerError.of([violation(rules.MESSAGE_TOO_LARGE, "", message)])
