"""Redis lists under FastStream: the bare-envelope element format and a reliable list reservation.

FastStream's own Redis format wraps every message in a binary frame of its own, which the
official SDKs cannot read. :class:`BareFormat` writes what the Redis binding prescribes: the
element is the envelope bytes, framed (``{"__bq_frame":1,"headers":{...},"body":...}``) only
when there are headers. It reads both, and FastStream's own frames too.

FastStream's list subscriber pops with ``BLPOP``: a worker killed mid-handle loses the message it
held. :func:`reliable` turns a list subscriber into a reservation: ``BLMOVE`` into the worker's own
``<queue>:processing:<worker_id>`` list, settled by the handler in one ``MULTI`` (``LREM`` plus the
republish), and moved back to the head of the queue when a worker of that id starts again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

from faststream.redis.message import DefaultListMessage
from faststream.redis.parser.binary import BinaryMessageFormatV1
from faststream.redis.parser.message import MessageFormat
from faststream.redis.subscriber.usecases.list_subscriber import (
    ListConcurrentSubscriber,
    ListSubscriber,
)

from ..babelqueue._bindings import redis as binding

if TYPE_CHECKING:
    from fast_depends.library.serializer import SerializerProto
    from faststream._internal.basic_types import SendableMessage
    from faststream._internal.parser import CodecProto
    from redis.asyncio.client import Redis

__all__ = ["RESERVED_IN", "BareFormat", "processing_key", "reliable"]

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


_PROCESSING: WeakKeyDictionary[ListSubscriber, str] = WeakKeyDictionary()


def processing_key(queue: str, worker_id: str) -> str:
    """The list holding what worker ``worker_id`` reserved from ``queue`` and has not settled."""
    return f"{queue}:processing:{worker_id}"


class _Reliable:
    """Reserve with ``BLMOVE`` instead of popping with ``BLPOP`` (mixed into a list subscriber)."""

    __slots__ = ()
    _client: Any
    _read_lock: Any
    list_sub: Any
    consume_one: Any

    async def start(self) -> None:
        # What a previous run of this worker reserved and never settled goes back first, to
        # the head of the queue, unchanged: a recovery is not a delivery attempt.
        client: Redis = self._client
        key = _PROCESSING[self]  # type: ignore[index]
        while await client.lmove(key, self.list_sub.name, "RIGHT", "LEFT") is not None:
            pass
        await super().start()  # type: ignore[misc]

    async def _get_msgs(self, client: Redis) -> None:
        async with self._read_lock:
            raw = await client.blmove(
                self.list_sub.name,
                _PROCESSING[self],  # type: ignore[index]
                self.list_sub.polling_interval,
                "LEFT",
                "RIGHT",
            )
            if raw is not None:
                message = DefaultListMessage(
                    type="list",
                    data=raw.encode() if isinstance(raw, str) else raw,
                    channel=self.list_sub.name,
                )
                # Marks the delivery as reserved: its settle removes it from this list.
                message[RESERVED_IN] = _PROCESSING[self]  # type: ignore[typeddict-unknown-key,index]
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


def reliable(subscriber: Any, queue: str, worker_id: str) -> str:
    """Make a FastStream list subscriber reserve into its processing list; return that key.

    Raises:
        TypeError: for a batch list subscriber (one ``BLMOVE`` reserves one element).
    """
    swapped = _RELIABLE.get(type(subscriber))
    if swapped is None:
        raise TypeError(
            "a reliable reservation needs a list subscriber without batch, "
            f"not {type(subscriber).__name__}"
        )
    key = processing_key(queue, worker_id)
    subscriber.__class__ = swapped
    _PROCESSING[subscriber] = key
    return key
