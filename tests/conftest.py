"""Shared fixtures: paths to the vendored data, and settings isolated from the environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from envelopekit import get_settings
from tests.support.redis_server import RedisServer

DATA = Path(__file__).parent / "data"

# CI replays the same examples on every run (a red CI must mean a regression, not a new draw);
# local runs keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test depends on the ambient ENVELOPEKIT_* environment."""
    for name in list(os.environ):
        if name.upper().startswith("ENVELOPEKIT_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real Redis-protocol server for the whole run, stopped by its pid at the end.

    It fails the tests that need it when it cannot start: they never skip.
    """
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, its database emptied for this test."""
    import redis

    with redis.Redis.from_url(redis_server.url) as client:
        client.flushall()
    return redis_server.url
