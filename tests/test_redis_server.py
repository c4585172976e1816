"""The test suite's Redis-protocol server is real, on loopback, and stopped by its pid."""

from __future__ import annotations

import os

import pytest
import redis

from tests.support.redis_server import RedisServer, RedisServerError


def test_session_server_answers_on_loopback(redis_url: str, redis_server: RedisServer) -> None:
    assert redis_url.startswith("redis://127.0.0.1:")
    with redis.Redis.from_url(redis_url) as client:
        assert client.ping()
        client.rpush("q", b"\x00\xffbytes")
        assert client.lrange("q", 0, -1) == [b"\x00\xffbytes"]
        info = client.info("server")
        assert int(info["process_id"]) == redis_server.pid
        assert int(info["tcp_port"]) == redis_server.port


def test_a_server_of_its_own_is_stopped_by_pid() -> None:
    with RedisServer() as server:
        pid = server.pid
        with redis.Redis.from_url(server.url) as client:
            assert client.ping()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(RedisServerError):
        _ = server.pid


def test_a_missing_executable_is_an_error_not_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_TEST_REDIS_SERVER", "/nonexistent/redis-server")
    with pytest.raises(RedisServerError, match="not executable"):
        RedisServer()
