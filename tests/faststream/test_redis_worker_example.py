"""``examples/redis_worker.py`` runs against the real server and does what it says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import redis

from envelopekit.babelqueue import redis as binding
from envelopekit.faststream import RULES_HEADER

EXAMPLE = Path(__file__).parents[2] / "examples" / "redis_worker.py"


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_produce_then_work_once(redis_url: str) -> None:
    assert _run(redis_url, "--produce", "10") == "pushed 10 orders to 'orders'\n"
    out = _run(redis_url, "--worker-id", "example-1", "--once")
    charged = [line for line in out.splitlines() if line.startswith("charged order")]
    assert len(charged) == 8  # orders 0 and 5 carry a negative amount
    assert out.splitlines()[-1] == "2 message(s) in orders.dlq"
    with redis.Redis.from_url(redis_url) as client:
        framed = [binding.reserve(e) for e in client.lrange("orders.dlq", 0, -1)]
        dead = [orjson.loads(r.body) for r in framed]
        assert client.llen("orders") == 0 and client.llen("orders:processing:example-1") == 0
    assert sorted(d["data"]["order_id"] for d in dead) == [0, 5]
    assert all(d["attempts"] == 3 and d["dead_letter"]["reason"] == "failed" for d in dead)
    assert all(r.headers == {RULES_HEADER: "handler.failed"} for r in framed)
    # A second worker run over the same ids does nothing: nothing is left to run.
    assert "charged" not in _run(redis_url, "--worker-id", "example-2", "--once")
