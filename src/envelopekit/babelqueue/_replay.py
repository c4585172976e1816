"""Replay-Bypass (ADR-0027): the ``bq-replay-bypass`` transport header and its handler view.

A redrive with ``bypass=True`` stamps the header beside the body, never in the envelope (the
envelope is frozen); the consumer reads it from the broker's native headers and runs the handler
inside :func:`replay_scope`, where :func:`is_replay` is true and :func:`bypass_external_effects`
skips what already happened once (the second charge, the duplicate email).

```python
from envelopekit.babelqueue import BabelEnvelope, Router, bypass_external_effects, kafka

charged, saved = [], []
router = Router()

@router.on("urn:babel:orders:created")
def charge(env: BabelEnvelope) -> None:
    saved.append(env.data)                                   # idempotent: always runs
    bypass_external_effects(lambda: charged.append(env.data))  # skipped on a replay

record_headers = [("bq-replay-bypass", b"true")]
body = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}).to_json()
router.dispatch(body, queue="orders", replay=kafka.is_replay(record_headers))
assert saved == [{"order_id": 1042}] and charged == []
```
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from typing import Any, Final, TypeVar

__all__ = [
    "REPLAY_BYPASS_HEADER",
    "bypass_external_effects",
    "header_says_replay",
    "is_replay",
    "replay_headers",
    "replay_scope",
]

REPLAY_BYPASS_HEADER: Final = "bq-replay-bypass"
"""The out-of-band header a replaying redrive sets (value ``"1"``)."""

T = TypeVar("T")

_REPLAY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "envelopekit_babelqueue_replay", default=False
)


def replay_headers() -> dict[str, str]:
    """The headers a replaying redrive publishes with: ``{"bq-replay-bypass": "1"}``."""
    return {REPLAY_BYPASS_HEADER: "1"}


def header_says_replay(value: object) -> bool:
    """Whether one header value marks a replay: present and not empty, as the official runtime.

    ``bytes`` (Kafka, AMQP stacks) count by their length; ``None`` is absent.
    """
    if value is None:
        return False
    if isinstance(value, (bytes, bytearray, str)):
        return len(value) > 0
    return str(value) != ""


def is_replay(headers: Mapping[str, Any] | None = None) -> bool:
    """Whether a message is a deliberate replay.

    Args:
        headers: a plain header mapping (the Redis frame's, an in-memory transport's) to read
            ``bq-replay-bypass`` from. Without it, whether the handler now running was
            dispatched as a replay (inside :func:`replay_scope`, which ``Router`` enters).
    """
    if headers is None:
        return _REPLAY.get()
    return header_says_replay(headers.get(REPLAY_BYPASS_HEADER))


def bypass_external_effects(effect: Callable[[], T]) -> T | None:
    """Run ``effect`` unless the message being handled is a replay; ``None`` when skipped."""
    if _REPLAY.get():
        return None
    return effect()


@contextmanager
def replay_scope(active: bool) -> Generator[None, None, None]:
    """Mark the current context as handling a replay (or not) for the span of one dispatch.

    The hook an integration enters around a handler (``Router`` does; a FastStream
    middleware would, with the binding's ``is_replay(native_headers)``). Context-local, so
    concurrent tasks and threads never see each other's flag.
    """
    token = _REPLAY.set(bool(active))
    try:
        yield
    finally:
        _REPLAY.reset(token)
