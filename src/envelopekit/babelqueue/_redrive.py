"""Redrive (ADR-0026): a dead-lettered message made live again, or kept exactly as it was.

:func:`redrive` decides for one message off a dead-letter queue; the worker (or the
``envelopekit redrive`` command over an NDJSON feed) publishes a :class:`Redriven` to its queue,
and writes a :class:`Kept` back to the dead-letter queue byte for byte:

```python
from envelopekit.babelqueue import BabelEnvelope, Kept, Redriven, redrive

failed = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}, queue="orders")
body = failed.dead_lettered("failed", error="gateway timeout").to_json()
sent = []
publish, ack = (lambda queue, raw, headers=None: sent.append(queue)), (lambda: None)
match redrive(body, to_queue=None, select=lambda env: env.job == "urn:babel:orders:created"):
    case Redriven(queue=queue, headers=headers) as done:
        publish(queue, done.body(), headers); ack()
    case Kept(raw=raw):
        publish("orders.dlq", raw); ack()           # never dropped
assert sent == ["orders"]
```
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .._check import check
from .._json import dumps
from .._settings import Settings, given_settings
from .._violations import Violation
from ._bindings.redis import reserve
from ._envelope import BabelEnvelope
from ._forbidden import FORBIDDEN_META_KEYS, FORBIDDEN_TOP_LEVEL_KEYS
from ._replay import replay_headers
from ._routing import received_bytes
from ._urn import is_blank

__all__ = ["Kept", "KeptReason", "Redriven", "redrive"]

KeptReason = Literal["invalid", "not_selected", "dry_run"]
"""Why a message stays on the dead-letter queue: not a v1 envelope this SDK accepts, filtered
out by ``select``, or a dry run."""


@dataclass(frozen=True, slots=True)
class Redriven:
    """Publish :meth:`body` to ``queue`` with ``headers``, then ack the dead-letter message.

    Attributes:
        envelope: the message reset for reprocessing (:meth:`BabelEnvelope.redriven`).
        queue: the target (:meth:`BabelEnvelope.redrive_queue`).
        headers: the out-of-band headers to publish with: ``bq-replay-bypass`` on a replay.
        received: the dead-lettered message as received.
    """

    envelope: BabelEnvelope[Any]
    queue: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    received: BabelEnvelope[Any] | None = field(default=None, repr=False)
    wire: bytes | None = field(default=None, repr=False)

    def body(self) -> bytes:
        """The bytes to publish: what the official Python redrive publishes for the same input.

        Members keep the order they had in the dead-letter message (``envelope.to_json()``
        writes the canonical order instead; the two agree for any message an SDK wrote).
        """
        return self.wire if self.wire is not None else self.envelope.to_json()

    @property
    def replay(self) -> bool:
        """Whether it carries the replay-bypass header."""
        return bool(self.headers)


@dataclass(frozen=True, slots=True)
class Kept:
    """Leave the message on the dead-letter queue: write ``raw`` back unchanged.

    Attributes:
        raw: the message exactly as received.
        reason: ``invalid``, ``not_selected`` or ``dry_run``.
        queue: on a dry run, where it would have gone; else ``""``.
        violations: why an ``invalid`` message could not be decoded.
        envelope: the decoded message, unless ``invalid``.
    """

    raw: bytes
    reason: KeptReason
    queue: str = ""
    violations: list[Violation] = field(default_factory=list)
    envelope: BabelEnvelope[Any] | None = field(default=None, repr=False)


def redrive(
    message: bytes | str | BabelEnvelope[Any],
    *,
    to_queue: str | None = None,
    select: Callable[[BabelEnvelope[Any]], bool] | None = None,
    bypass: bool = False,
    dry_run: bool = False,
    settings: Settings | None = None,
) -> Redriven | Kept:
    """Decide the redrive of one dead-lettered message.

    Args:
        message: the body as read off the dead-letter queue (a Redis element framed for its
            headers is unwrapped), or an envelope already decoded.
        to_queue: republish here instead of each message's own queue (a sandbox replay).
        select: which messages to redrive; the others are kept.
        bypass: a replay: the redriven message carries ``bq-replay-bypass: 1`` so its handler
            can skip external effects that already fired.
        dry_run: decide, but keep every message (``Kept.queue`` says where it would go).
        settings: the limits a body is checked under (``max_message_bytes``, ``max_depth``...);
            the environment's when not given.

    Returns:
        :class:`Redriven` (``dead_letter`` removed, ``attempts`` 0, everything else verbatim),
        or :class:`Kept` with the input bytes, never altered.

    Raises:
        TypeError: for ``settings`` that are no :class:`~envelopekit.Settings` (nor ``None``).
    """
    settings = given_settings(settings)
    body: bytes | None = None  # the bytes the envelope was read from, when it was
    if isinstance(message, BabelEnvelope):
        envelope: BabelEnvelope[Any] = message
        raw = message.to_json()
    else:
        # A str from a client decoding with `surrogateescape` goes back to the bytes it held.
        raw = received_bytes(message)
        # A Redis dead letter with headers (the rule ids a consumer refused it for) is a frame:
        # its body is the message, as the official redrive's Redis transport pops it. A frame
        # has no member but its three, so no v1 envelope is ever read as one.
        body = reserve(raw).body
        # The consumer's own gate, with its size, depth and violation limits: a hostile body
        # costs what it costs `check`, and is kept with the reason.
        verdict = check(body, "babelqueue", settings=settings)
        if verdict.envelope is None:
            return Kept(raw, "invalid", violations=verdict.violations)
        envelope = verdict.envelope
    if select is not None and not select(envelope):
        return Kept(raw, "not_selected", envelope=envelope)
    queue = envelope.redrive_queue(to_queue)
    if dry_run:
        return Kept(raw, "dry_run", queue=queue, envelope=envelope)
    headers = replay_headers() if bypass else {}
    # The standard library's reading, as the official redrive's: integers of any width stay
    # exact and members keep their order (the model accepted these bytes already).
    wire = None if body is None else _reset(json.loads(body))
    return Redriven(envelope.redriven(), queue, headers, envelope, wire)


def _reset(document: dict[str, Any]) -> bytes:
    """The redriven body from the decoded document, member order kept, as the official writes it.

    Only called for a document the envelope model accepted, so ``job``/``urn`` are strings.
    """
    for key in FORBIDDEN_TOP_LEVEL_KEYS:
        document.pop(key, None)
    meta = document["meta"]
    for key in FORBIDDEN_META_KEYS:
        meta.pop(key, None)
    if "urn" in document:
        alias = document.pop("urn")
        # The alias stands in for a missing or blank `job`, and lands where the official puts it.
        job = document.get("job")
        if not isinstance(job, str) or is_blank(job):
            document["job"] = alias
    document.pop("dead_letter", None)
    document["attempts"] = 0
    return dumps(document)
