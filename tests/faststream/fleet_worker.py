"""One worker process of the fleet test and of ``bench/fleet.py``: FastStream over a real Redis.

``python tests/faststream/fleet_worker.py URL WORKER_ID MODE`` consumes the list ``fleet`` until
SIGTERM. Modes:

* ``fleet``: ``babelqueue_subscriber`` with a Router and an ``AsyncRedisSeenStore`` with a lease;
  the handler counts each run in the hash ``fleet:runs``, each success in ``fleet:successes``
  (and the first in ``fleet:completed`` as ``<worker>:<attempts>``); a ``flaky`` job fails its
  first try (counted in ``fleet:failures``);
* ``bare``: a plain FastStream list subscriber taking the bytes and counting them, the floor
  our validation and idempotency are measured against.

``bare`` counts what it takes in ``fleet:runs`` under ``bare``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pydantic
import redis.asyncio
from faststream import Context, StreamMessage
from faststream.redis import RedisBroker

from envelopekit.babelqueue import AsyncRedisSeenStore, BabelEnvelope, Router
from envelopekit.faststream import BareFormat, babelqueue_subscriber

QUEUE = "fleet"
JOB = "urn:babel:fleet:job"


class Job(pydantic.BaseModel):
    n: int
    flaky: bool = False


async def run(url: str, worker: str, mode: str) -> None:
    broker = RedisBroker(url, logger=None)  # type: ignore[arg-type]  # None: logging off
    client = redis.asyncio.Redis.from_url(url)
    if mode == "fleet":
        router = Router(unknown_urn="dead_letter", max_attempts=3)

        @router.on(JOB, Job)
        async def job(env: BabelEnvelope[Job]) -> None:
            pipe = client.pipeline(transaction=False)  # the job's effect, in one round trip
            pipe.hincrby("fleet:runs", env.meta.id, 1)
            if env.data.flaky and env.attempts == 0:
                pipe.hincrby("fleet:failures", env.meta.id, 1)
                await pipe.execute()
                raise RuntimeError("fails on its first try")
            pipe.hincrby("fleet:successes", env.meta.id, 1)
            pipe.hsetnx("fleet:completed", env.meta.id, f"{worker}:{env.attempts}")
            await pipe.execute()

        store = AsyncRedisSeenStore(client, prefix="fleet:idem:", lease=2.0)
        babelqueue_subscriber(broker, QUEUE, router, seen=store, worker_id=worker)
    else:

        async def bare(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
            await client.hincrby("fleet:runs", "bare", 1)

        broker.subscriber(list=QUEUE, message_format=BareFormat)(bare)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with broker:
        await broker.start()
        print("ready", flush=True)
        await stop.wait()
    await client.aclose()


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2], sys.argv[3]))
