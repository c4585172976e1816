"""``check`` reads a Matrix message with the model its bytes show, not through the union.

The union's selector is a Python function: pydantic-core hands it the whole document as Python
objects before validating it, so every message was converted twice. ``check`` reads a text
with ``"$reply"`` as a response, one with ``"ok"`` and without ``"op"`` as a bare error payload,
any other as a request, and only when the errors show that was not the document's kind (or the
text has a ``\\u`` escape) through the union. The
verdict must be the union's, finding for finding, for small and large messages alike.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from functools import partial
from typing import Any

import hypothesis
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import envelopekit as ek
from envelopekit.matrix import message_kind
from envelopekit.matrix._spec import SEARCHED_BYTES, SPEC, _direct_kind
from tests._calls import python_calls
from tests._verdicts import same, without
from tests.matrix.test_differential import corpus

_SETTINGS = [ek.Settings(max_violations=3), ek.Settings()]


def union_reading(raw: bytes, settings: ek.Settings) -> ek.Verdict[Any]:
    """What ``Spec.validate`` gives a small message without Matrix's own reading: the union's."""
    return without(SPEC, "validate_small", raw, settings)


def padded(raw: bytes, rng: random.Random, size: int = 17000) -> bytes:
    """``raw`` past ``size`` bytes (by default FULL_REPORT_BYTES): a long unknown key first, or
    a long payload member of numbers (one of them, at times, to note)."""
    doc = json.loads(raw)
    if isinstance(doc, dict) and isinstance(doc.get("payload"), dict) and rng.random() < 0.5:
        last: list[list[Any]] = [[], [2**60], [0.5], [-(2**63)]]
        doc["payload"]["pad"] = [1] * (size // 2) + rng.choice(last)
        return json.dumps(doc, ensure_ascii=rng.random() < 0.2).encode("utf-8", "surrogatepass")
    body = raw.lstrip()
    if not body.startswith(b"{") or body[1:].lstrip().startswith(b"}"):
        return raw + b" " * size
    return b'{"pad":"' + b"x" * size + b'",' + body[1:]


@pytest.mark.parametrize("kind", ["request", "response", "error-payload"])
def test_the_verdict_is_the_unions(kind: str) -> None:
    rng = random.Random(kind)
    seen: set[str | None] = set()
    for index, (text, _) in enumerate(corpus(kind)):
        raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        seen.add(_direct_kind(raw))
        for settings in _SETTINGS:
            assert same(SPEC.validate(raw, settings), union_reading(raw, settings)), raw
        if index % 4 == 0:
            large = padded(raw, rng)
            for settings in _SETTINGS:
                new = SPEC._validate_large(large, settings)
                assert same(new, SPEC._validate_union_large(large, settings)), large[-300:]
        elif index % 4 == 1:  # past READ_BYTES: read with a NumberReading
            medium = padded(raw, rng, 2500)
            for settings in _SETTINGS:
                assert same(SPEC.validate(medium, settings), union_reading(medium, settings))
    assert seen == {"request", "response", "error-payload", None}


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b'{"op":"$reply","payload":1}', "response"),
        (b'{"op":"a.b","replyTo":"$replies.c","payload":"$reply"}', "response"),
        (b'{"op":"a.b","correlationId":"c","replyTo":"$replies.c","payload":1}', "request"),
        (b'{"op":"\\u0024reply","payload":1}', None),
        (b'{"ok":false,"error":"x"}', "error-payload"),
        # "op" in its bytes (here a member of details): read as a request first.
        (b'{"ok":false,"error":"x","details":{"op":1}}', "request"),
        # No "op" anywhere, an "ok" that is not its own: the errors send it to the union.
        (b'{"error":"x","details":{"ok":1}}', "error-payload"),
    ],
)
def test_the_kind_tried_first(raw: bytes, kind: str | None) -> None:
    assert _direct_kind(raw) == kind
    # Past SEARCHED_BYTES the same bytes are searched by patterns: the same answer.
    assert _direct_kind(raw + b" " * SEARCHED_BYTES) == kind


def _kind_by_in(raw: bytes) -> str | None:
    """The rule :func:`_direct_kind` follows, written with ``bytes in bytes`` searches."""
    if b"\\u" in raw:
        return None
    if b'"$reply"' in raw:
        return "response"
    return "error-payload" if b'"op"' not in raw and b'"ok"' in raw else "request"


_PIECES = [b'"', b"$", b"reply", b"op", b"ok", b"\\", b"u", b"9", b'"$reply"', b'"op"', b'"ok"']


@hypothesis.settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=12),
    st.lists(st.sampled_from(_PIECES), max_size=12),
    st.sampled_from([b"9", b'"', b"$", b"y", b"o"]),
)
def test_a_long_text_is_searched_for_the_same_bytes(
    head: list[bytes], tail: list[bytes], filler: bytes
) -> None:
    """Over SEARCHED_BYTES ``_direct_kind`` searches with compiled patterns (``in`` stepped a
    byte at a time through a long run of a needle's bytes): the needles are found wherever
    they stand, and pieces of them found nowhere."""
    raw = b"".join(head) + filler * SEARCHED_BYTES + b"".join(tail)
    assert _direct_kind(raw) == _kind_by_in(raw)


def _selector_calls(call: Callable[[], object]) -> int:
    """How many times the union's selector (``message_kind``) runs during ``call()``."""
    return python_calls(call).count(message_kind.__code__)


def test_a_request_and_a_reply_are_read_without_the_unions_selector() -> None:
    # The selector is where the union has pydantic-core convert the document to Python objects.
    request = orjson.dumps(
        {"op": "fs.list", "replyTo": "$replies.c", "correlationId": "c", "payload": {"a": 1}}
    )
    reply = orjson.dumps({"op": "$reply", "correlationId": "c", "payload": {"ok": True}})
    bad = b'{"op":"fs.list","payload":[18446744073709551616]}'
    for raw in (request, reply, bad, request + b" " * 17000, reply + b" " * 17000):
        assert _selector_calls(partial(ek.check, raw, "matrix")) == 0
    # The union still reads what the bytes cannot tell: an escape, a document whose "ok" or
    # "op" is not its own.
    escaped = b'{"op":"\\u0024reply","correlationId":"c","payload":1}'
    assert _selector_calls(lambda: ek.check(escaped, "matrix")) == 1
    assert ek.check(escaped, "matrix").envelope.__class__.__name__ == "MxResponse"
    bare = b'{"ok":false,"error":"x"}'
    for raw in (bare, b'{"ok":true,"error":1}', bare + b" " * 17000):
        assert _selector_calls(partial(ek.check, raw, "matrix")) == 0
    nested = b'{"error":"x","details":{"ok":1}}'
    assert _selector_calls(lambda: ek.check(nested, "matrix")) == 1
