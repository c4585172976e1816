# pyright: standard
"""A BabelQueue worker on Redis with FastStream: start as many as you like, on any machines.

```
pip install 'envelopekit[faststream,redis]' 'faststream[redis]'
python examples/redis_worker.py redis://127.0.0.1:6379/0 --worker-id "$(hostname)-1"
python examples/redis_worker.py redis://127.0.0.1:6379/0 --produce 10   # push 10 orders
```

Every worker consumes the list ``orders``; a message whose handler raises is retried with
``attempts + 1`` (3 deliveries), then dead-lettered to ``orders.dlq``, as is anything that is
not a BabelQueue v1 envelope. ``meta.id`` is remembered in Redis after success, so a duplicate
delivery runs once across the fleet; a lease stops two workers running the same message at
once. A worker killed mid-handle leaves what it held reserved: the other workers put it back
once its heartbeat lapses (15 s), or at once when it starts again under a stable
``--worker-id`` (each running worker its own). ``--once`` stops when the queue is drained.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from datetime import timedelta

import redis.asyncio
from faststream.redis import RedisBroker
from pydantic import BaseModel

from envelopekit.babelqueue import AsyncRedisSeenStore, BabelEnvelope, Router
from envelopekit.babelqueue import redis as binding
from envelopekit.faststream import babelqueue_subscriber

QUEUE = "orders"


class OrderCreated(BaseModel):
    """The ``data`` of ``urn:babel:orders:created``."""

    order_id: int
    amount_cents: int


router = Router(unknown_urn="dead_letter", max_attempts=3)


@router.on("urn:babel:orders:created", OrderCreated)
async def order_created(env: BabelEnvelope[OrderCreated]) -> None:
    """Charge an order; a negative amount stands in for a payment gateway that refuses."""
    if env.data.amount_cents < 0:
        raise ValueError(f"order {env.data.order_id}: negative amount")
    print(f"charged order {env.data.order_id} ({env.data.amount_cents} cents), try {env.attempts}")


async def produce(url: str, count: int) -> None:
    """Push ``count`` orders the way every official SDK does: RPUSH of the bare envelope."""
    async with redis.asyncio.Redis.from_url(url) as client:
        for n in range(count):
            env = BabelEnvelope.create(
                "urn:babel:orders:created",
                {"order_id": n, "amount_cents": 100 * n if n % 5 else -1},
                queue=QUEUE,
            )
            await client.rpush(QUEUE, binding.element(env))
    print(f"pushed {count} orders to {QUEUE!r}")


async def work(url: str, worker_id: str | None, once: bool) -> None:
    """Consume until SIGINT/SIGTERM (or, with ``once``, until the queue is drained)."""
    broker = RedisBroker(url, logger=None)  # type: ignore[arg-type]  # None: logging off
    async with redis.asyncio.Redis.from_url(url) as client:
        seen = AsyncRedisSeenStore(client, ttl=timedelta(days=7), lease=timedelta(seconds=30))
        consumer = babelqueue_subscriber(broker, QUEUE, router, seen=seen, worker_id=worker_id)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with broker:
            await broker.start()
            print(f"worker consuming {QUEUE!r} (reservations in {consumer.processing})")
            while not stop.is_set():
                if (
                    once
                    and not await client.llen(QUEUE)
                    and not await client.llen(str(consumer.processing))
                ):
                    break
                await asyncio.sleep(0.2)
        print(f"{await client.llen(QUEUE + '.dlq')} message(s) in {QUEUE}.dlq")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("url", help="redis://host:port/db")
    parser.add_argument("--worker-id", help="a stable id (default: one unique to this worker)")
    parser.add_argument("--produce", type=int, metavar="N", help="push N orders and exit")
    parser.add_argument("--once", action="store_true", help="stop when the queue is drained")
    args = parser.parse_args()
    if args.produce is not None:
        asyncio.run(produce(args.url, args.produce))
    else:
        asyncio.run(work(args.url, args.worker_id, args.once))


if __name__ == "__main__":
    main()
