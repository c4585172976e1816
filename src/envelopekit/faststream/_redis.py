"""Redis lists under FastStream: the bare-envelope element format and a reliable list reservation.

FastStream's own Redis format wraps every message in a binary frame of its own, which the
official SDKs cannot read. :class:`BareFormat` writes what the Redis binding prescribes: the
element is the envelope bytes, framed (``{"__bq_frame":1,"headers":{...},"body":...}``) only
when there are headers. It reads both, and FastStream's own frames too.

FastStream's list subscriber pops with ``BLPOP``: a worker killed mid-handle loses the message it
held. :func:`reliable` turns a list subscriber into a reservation: ``BLMOVE`` into the worker's own
``<queue>:processing:<worker_id>`` list, settled by the handler in one ``MULTI`` (``LREM`` plus the
republish), and moved back to the head of the queue when a worker of that id starts again.

A processing list belongs to one live worker: a worker that took back another's would run its
messages a second time while the first still runs them. So the default id is unique to the
worker (:func:`default_worker_id`), and a worker that is gone is told by its heartbeat: each
keeps ``<queue>:alive:<worker_id>`` alive (a key expiring after :data:`HEARTBEAT_SECONDS`,
renewed three times within them) and is listed in the set ``<queue>:workers``. Every worker, at
its start and at each renewal, moves the processing list of a listed worker whose heartbeat
lapsed back to the head of the queue, in one script that first checks the heartbeat: a crashed
worker's messages wait at most one heartbeat and one renewal, whatever its id. At each renewal
a worker also puts back what its own list holds that it no longer has in hand (a settle failed
on a Redis error): found so at two renewals in a row, it goes to the tail of the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

import anyio
from faststream.redis.message import DefaultListMessage
from faststream.redis.parser.binary import BinaryMessageFormatV1
from faststream.redis.parser.message import MessageFormat
from faststream.redis.subscriber.usecases.list_subscriber import (
    ListConcurrentSubscriber,
    ListSubscriber,
)
from redis.exceptions import RedisError

from ..babelqueue._bindings import redis as binding

if TYPE_CHECKING:
    from fast_depends.library.serializer import SerializerProto
    from faststream._internal.basic_types import SendableMessage
    from faststream._internal.parser import CodecProto
    from redis.asyncio.client import Redis

__all__ = [
    "HEARTBEAT_SECONDS",
    "RESERVED_IN",
    "TRANSFER",
    "BareFormat",
    "default_worker_id",
    "processing_key",
    "processing_of",
    "reliable",
]

RESERVED_IN: Final = "envelopekit_reserved_in"
"""The raw message key naming the processing list a delivery was reserved into."""

# Headers FastStream adds to every publish on its own; the wire contract has no use for them.
_FASTSTREAM_HEADERS: Final = frozenset({"correlation_id", "content-type"})


class BareFormat(MessageFormat):
    """The Redis binding's element: the body as is, framed only for headers.

    Use it on a publisher (``broker.publisher(list="orders", message_format=BareFormat)``) so
    what FastStream publishes is what the six official SDKs read.
    """

    __slots__ = ()

    @classmethod
    async def encode(
        cls,
        *,
        message: Sequence[SendableMessage] | SendableMessage,
        reply_to: str | None,
        headers: dict[str, Any] | None,
        correlation_id: str,
        serializer: SerializerProto | None = None,
        codec: CodecProto | None = None,
    ) -> bytes:
        """The element for ``message`` (bytes verbatim, else FastStream's encoding of it)."""
        built = await cls.build(
            message=message,
            reply_to=reply_to,
            headers=headers,
            correlation_id=correlation_id,
            serializer=serializer,
            codec=codec,
        )
        kept = {
            str(k): str(v)
            for k, v in built.headers.items()
            if k not in _FASTSTREAM_HEADERS or (headers and k in headers)
        }
        return binding.element(built.data, kept)

    @classmethod
    def parse(cls, data: bytes) -> tuple[bytes, dict[str, Any]]:
        """The body and headers of an element: a frame, FastStream's own frame, or bare."""
        if data.startswith(BinaryMessageFormatV1.IDENTITY_HEADER):
            return BinaryMessageFormatV1.parse(data)
        reserved = binding.reserve(data)
        return reserved.body, dict(reserved.headers)


# KEYS[1] = processing list, KEYS[2] = target; ARGV[1] = the reserved element, ARGV[2] = what to
# push. A MULTI runs every command whatever one of them fails on (a target of the wrong type),
# so it would remove the reservation of a message it never pushed; a script stops at the failing
# push, before the removal, and the message stays reserved. A reservation no longer there (put
# back by a sweep that took this worker for dead) pushes nothing: the message is back already.
TRANSFER: Final = """
if not redis.call('lpos', KEYS[1], ARGV[1]) then return 0 end
redis.call('rpush', KEYS[2], ARGV[2])
return redis.call('lrem', KEYS[1], 1, ARGV[1])
"""

HEARTBEAT_SECONDS: Final = 15.0
"""How long a worker's heartbeat outlives its last renewal: a dead worker's messages wait this."""

# KEYS[1] = the other worker's heartbeat, KEYS[2] = its processing list, KEYS[3] = the queue,
# KEYS[4] = the set of workers; ARGV[1] = its id. The check and the moves are one script, so a
# worker renewing meanwhile keeps what it holds.
_SWEEP: Final = """
if redis.call('exists', KEYS[1]) == 1 then return -1 end
local moved = 0
while redis.call('lmove', KEYS[2], KEYS[3], 'RIGHT', 'LEFT') do moved = moved + 1 end
redis.call('srem', KEYS[4], ARGV[1])
return moved
"""

# KEYS[1] = this worker's processing list, KEYS[2] = its heartbeat, KEYS[3] = the set of
# workers; ARGV[1] = its id. A worker stopped with messages still reserved stays listed: its
# heartbeat lapses and another worker, or its own next start, puts them back.
_LEAVE: Final = """
if redis.call('llen', KEYS[1]) > 0 then return 0 end
redis.call('del', KEYS[2])
redis.call('srem', KEYS[3], ARGV[1])
return 1
"""


def processing_key(queue: str, worker_id: str) -> str:
    """The list holding what worker ``worker_id`` reserved from ``queue`` and has not settled."""
    return f"{queue}:processing:{worker_id}"


def default_worker_id() -> str:
    """A worker id no other worker has: ``<host>-<pid>-<random hex>``.

    Unique per subscriber (and made again at start in a fork of the process it was made in),
    so two workers started without an id never share a processing list; what one leaves when
    it dies is put back by the heartbeat sweep, not by a restart.
    """
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


@dataclass(slots=True)
class _Reservation:
    """The keys of one worker's reservation on one queue."""

    queue: str
    worker_id: str
    processing: str
    heartbeat: str
    workers: str
    # The process a default id was made in: a fork of it (a server preloading the app) makes
    # its own at start, or every fork would share one list.
    made_in: int | None
    keeper: asyncio.Task[None] | None = None
    # Set at stop: the renewals end at their next turn. Cancelling them is not enough: a
    # cancellation landing in a redis-py pipeline is absorbed there (3 times in 4 in a probe).
    stopping: bool = False
    # What this worker took and has not finished with; what its list holds beyond that was
    # left by a settle that failed, and is put back once seen so at two renewals in a row.
    held: Counter[bytes] = field(default_factory=Counter[bytes])
    stranded: Counter[bytes] = field(default_factory=Counter[bytes])


_RESERVATIONS: WeakKeyDictionary[ListSubscriber, _Reservation] = WeakKeyDictionary()


def _reservation(queue: str, worker_id: str | None) -> _Reservation:
    chosen = worker_id if worker_id is not None else default_worker_id()
    return _Reservation(
        queue,
        chosen,
        processing_key(queue, chosen),
        _heartbeat_key(queue, chosen),
        f"{queue}:workers",
        None if worker_id is not None else os.getpid(),
    )


def processing_of(subscriber: Any) -> str:
    """The processing list of a subscriber :func:`reliable` made (as of its last start)."""
    return _RESERVATIONS[subscriber].processing


async def _beat(client: Redis, ours: _Reservation) -> None:
    """Renew this worker's heartbeat (listing it again, had a sweep dropped it)."""
    async with client.pipeline(transaction=True) as pipe:
        pipe.set(ours.heartbeat, b"1", px=int(HEARTBEAT_SECONDS * 1000))
        pipe.sadd(ours.workers, ours.worker_id)
        await pipe.execute()


async def _sweep(client: Redis, ours: _Reservation) -> int:
    """Put back what the listed workers whose heartbeat lapsed had reserved; how many moved."""
    moved = 0
    for member in await client.smembers(ours.workers):
        other = member.decode() if isinstance(member, bytes) else str(member)
        if other == ours.worker_id:
            continue
        keys = (
            _heartbeat_key(ours.queue, other),
            processing_key(ours.queue, other),
            ours.queue,
            ours.workers,
        )
        moved += max(0, int(await client.eval(_SWEEP, 4, *keys, other)))
    return moved


async def _take_back(client: Redis, ours: _Reservation) -> None:
    """Put back, at the tail of the queue, what this worker's own list holds and it does not.

    A settle that failed (a Redis error, an unreachable seen-store) leaves its message reserved
    with nobody handling it; a delivery just taken is counted in ``held`` at once, so what is
    still beyond it a renewal later is stranded, and goes back as a retry would.
    """
    listed = Counter[bytes](_as_bytes(e) for e in await client.lrange(ours.processing, 0, -1))
    stranded = listed - ours.held
    due = stranded & ours.stranded
    ours.stranded = stranded - due
    for element, count in due.items():
        for _ in range(count):
            await client.eval(TRANSFER, 2, ours.processing, ours.queue, element, element)


async def _renew(client: Redis, ours: _Reservation) -> None:
    """One renewal: the heartbeat, the sweep, the take-back, each unless the worker stopped."""
    for step in (_beat, _sweep, _take_back):
        if ours.stopping:
            return
        await step(client, ours)


def _as_bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def _heartbeat_key(queue: str, worker_id: str) -> str:
    return f"{queue}:alive:{worker_id}"


class _Reliable:
    """Reserve with ``BLMOVE`` instead of popping with ``BLPOP`` (mixed into a list subscriber)."""

    __slots__ = ()
    _client: Any
    _read_lock: Any
    list_sub: Any
    consume_one: Any

    async def start(self) -> None:
        # Alive and listed first, so no other worker's sweep takes what this one reserves.
        client: Redis = self._client
        ours = _RESERVATIONS[self]  # type: ignore[index]
        if ours.made_in is not None and ours.made_in != os.getpid():
            ours = _RESERVATIONS[self] = _reservation(ours.queue, None)  # type: ignore[index]
        await _beat(client, ours)
        # What a previous run of this worker reserved and never settled goes back first, to
        # the head of the queue, unchanged: a recovery is not a delivery attempt.
        while await client.lmove(ours.processing, ours.queue, "RIGHT", "LEFT") is not None:
            pass
        await _sweep(client, ours)
        await super().start()  # type: ignore[misc]
        ours.stopping = False
        ours.keeper = asyncio.create_task(self._keep_alive())

    async def _keep_alive(self) -> None:
        client: Redis = self._client
        ours = _RESERVATIONS[self]  # type: ignore[index]
        while not ours.stopping:
            await anyio.sleep(HEARTBEAT_SECONDS / 3)
            # A failure (Redis out of reach) skips one renewal; two more come before the
            # heartbeat lapses. Ending the loop would let the other workers take what this one
            # still runs, so nothing ends it but the worker's stop.
            with contextlib.suppress(Exception):
                await _renew(client, ours)

    async def consume(self, msg: Any) -> Any:
        try:
            return await super().consume(msg)  # type: ignore[misc]
        finally:
            if RESERVED_IN in msg:  # taken by this worker's BLMOVE (not a test broker's call)
                held = _RESERVATIONS[self].held  # type: ignore[index]
                held[msg["data"]] -= 1
                if held[msg["data"]] <= 0:
                    del held[msg["data"]]

    async def stop(self) -> None:
        # The heartbeat goes on while FastStream lets the handlers finish (its graceful
        # timeout), then ends with the worker: what a handler cut short left reserved is put
        # back once it lapses.
        ours = _RESERVATIONS[self]  # type: ignore[index]
        keeper, ours.keeper = ours.keeper, None
        try:
            await super().stop()  # type: ignore[misc]
        finally:
            ours.stopping = True
            if keeper is not None:
                keeper.cancel()
                # Waited for, not awaited (its cancellation is not raised here): a renewal
                # still under way after the stop would open a connection the broker's close
                # has already passed, left unclosed, and outlive the loop's end.
                await asyncio.wait({keeper}, timeout=HEARTBEAT_SECONDS / 3)
        if keeper is None:
            return  # never started
        keys = (ours.processing, ours.heartbeat, ours.workers)
        with contextlib.suppress(RedisError):  # a heartbeat left behind lapses by itself
            await self._client.eval(_LEAVE, 3, *keys, ours.worker_id)

    async def _get_msgs(self, client: Redis) -> None:
        async with self._read_lock:
            ours = _RESERVATIONS[self]  # type: ignore[index]
            raw = await client.blmove(
                self.list_sub.name,
                ours.processing,
                self.list_sub.polling_interval,
                "LEFT",
                "RIGHT",
            )
            if raw is not None:
                data = _as_bytes(raw)
                ours.held[data] += 1  # before any await: a take-back never sees it unheld
                message = DefaultListMessage(type="list", data=data, channel=self.list_sub.name)
                # Marks the delivery as reserved: its settle removes it from this list.
                message[RESERVED_IN] = ours.processing  # type: ignore[typeddict-unknown-key]
                await self.consume_one(message)


# `_Reliable` declares the attributes it reads; FastStream's bases define them as properties.
class _ReliableListSubscriber(_Reliable, ListSubscriber):  # pyright: ignore[reportIncompatibleVariableOverride, reportIncompatibleMethodOverride]
    __slots__ = ()


class _ReliableConcurrentListSubscriber(_Reliable, ListConcurrentSubscriber):  # pyright: ignore[reportIncompatibleVariableOverride, reportIncompatibleMethodOverride]
    __slots__ = ()


_RELIABLE: Final[dict[type[Any], type[Any]]] = {
    ListSubscriber: _ReliableListSubscriber,
    ListConcurrentSubscriber: _ReliableConcurrentListSubscriber,
}


def reliable(subscriber: Any, queue: str, worker_id: str | None) -> None:
    """Make a FastStream list subscriber reserve into its processing list.

    ``worker_id`` names that list; ``None``: an id of its own (:func:`default_worker_id`),
    made again at start in a process forked after it was made. :func:`processing_of` reads it.

    Raises:
        TypeError: for a batch list subscriber (one ``BLMOVE`` reserves one element).
    """
    swapped = _RELIABLE.get(type(subscriber))
    if swapped is None:
        raise TypeError(
            "a reliable reservation needs a list subscriber without batch, "
            f"not {type(subscriber).__name__}"
        )
    subscriber.__class__ = swapped
    _RESERVATIONS[subscriber] = _reservation(queue, worker_id)
