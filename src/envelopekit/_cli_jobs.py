"""``envelopekit validate --jobs N``: the messages validated in N processes, verdicts in order.

The main process reads (``_cli_input.chunks``: NDJSON in raw blocks of lines, other inputs a
message at a time), packs what it read into tasks of about ``TASK_BYTES`` and hands task *i* to
worker *i mod N* over a pipe of its own. A worker splits the blocks into messages, validates
them and sends back the task's output, already formatted, and its counts. The main process
writes the results in task order, so the output is byte for byte the one-process output; at
most ``WINDOW`` tasks per worker are in flight, so memory stays flat whatever the input.

* Small inputs (one task) are validated in-process: no worker is started for them.
* A worker that dies is noticed where its result is awaited (end of file on its pipe) or its
  next task sent (a broken pipe): the verdicts before its task stand, the summary is written
  and the run ends with exit status 2, never a hang.
* Ctrl-C (SIGINT, to the main process or the whole process group): workers ignore it; the main
  process writes the summary of what it has written, stops the workers and exits 130.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ._cli import Summary, json_of, text_of, verdict_for
from ._cli_input import Block, InputError, Message

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["TASK_BYTES", "WINDOW", "Judge", "Pool", "WorkerError", "default_jobs", "run"]

# A task is about one input block: a few hundred messages, so the pipes, pickling and wake-ups
# cost a few tens of microseconds per task, well under 1% of validating it.
TASK_BYTES: Final = 256 * 1024
# Or this many messages read one at a time (a directory of small files).
TASK_ITEMS: Final = 512
# Tasks in flight per worker: one being validated, one waiting behind it, one being sent.
WINDOW: Final = 3
STOP_SECONDS: Final = 5.0

Item = Message | Block


class WorkerError(InputError):
    """A worker process died: the verdicts before its task stand."""


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(len(affinity(0)), 1)
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Judge:
    """Validates a task's messages and formats their verdicts as ``--jobs 1`` does."""

    spec: str
    settings: Any
    limit: int
    as_json: bool

    def __call__(self, items: Iterable[Item]) -> tuple[bytes, Summary]:
        """The output of the task's messages and their counts."""
        summary = Summary()
        out: list[bytes] = []
        spec, settings, limit, as_json = self.spec, self.settings, self.limit, self.as_json
        for message in _each(items, limit):
            verdict = verdict_for(message, spec, settings, limit)
            summary.add(verdict)
            out.append(
                json_of(message, verdict) if as_json else text_of(message, verdict).encode("utf-8")
            )
        return b"".join(out), summary


def _each(items: Iterable[Item], limit: int) -> Iterator[Message]:
    for item in items:
        if isinstance(item, Block):
            yield from item.messages(limit)
        else:
            yield item


def merge(summary: Summary, part: Summary) -> None:
    """Add a task's counts; rules first seen earlier stay first (``most_common`` ties)."""
    summary.valid += part.valid
    summary.invalid += part.invalid
    summary.warned += part.warned
    summary.rules.update(part.rules)
    summary.warnings.update(part.warnings)


# --- the worker -------------------------------------------------------------------------------


def _work(
    tasks: Connection, results: Connection, inherited: list[Connection], judge: Judge
) -> None:
    """A worker's life: tasks in, results out, until the main process sends an empty task."""
    # Ctrl-C reaches the whole process group: the main process alone decides what it means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for conn in inherited:
        # A forked worker holds the main process's ends of every pipe made before it; closed,
        # so that each pipe ends when the process at its other end does.
        conn.close()
    # Tasks are drained by a thread as they come, so the main process never blocks sending a
    # task while this process blocks sending it a result.
    inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def receive() -> None:
        try:
            while blob := tasks.recv_bytes():
                inbox.put(blob)
        except (EOFError, OSError):
            pass
        inbox.put(None)

    threading.Thread(target=receive, daemon=True).start()
    try:
        while (blob := inbox.get()) is not None:
            out, summary = judge(pickle.loads(blob))
            results.send_bytes(pickle.dumps((out, summary), pickle.HIGHEST_PROTOCOL))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the main process went away: nobody is waiting for the rest


# --- the main process's side ------------------------------------------------------------------


@dataclass
class _Worker:
    process: Any
    tasks: Connection
    results: Connection


class Pool:
    """N workers, started on first need, fed tasks round-robin and read back in task order."""

    def __init__(self, jobs: int, judge: Judge) -> None:
        self.jobs = jobs
        self.judge = judge
        self._workers: list[_Worker] = []
        self._sent = 0  # tasks handed out so far; task i went to worker i % jobs
        self._in_flight: deque[int] = deque()

    @property
    def started(self) -> bool:
        """Whether the workers run."""
        return bool(self._workers)

    def start(self) -> None:
        """Start the workers (before any thread of this process, so forking is safe)."""
        if self._workers:
            return
        # Fork where there is one: a worker starts with every module the main process has
        # loaded and none of its start-up cost. Elsewhere, a fresh interpreter per worker.
        import multiprocessing  # here: a run that needs no worker does not pay its import

        method = "fork" if sys.platform == "linux" else "spawn"
        context: Any = multiprocessing.get_context(method)  # typeshed's BaseContext has no Process
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # a forked child flushes its copy of these buffers at its exit
        # A Ctrl-C between a fork and the worker's SIG_IGN would print a traceback there.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for _ in range(self.jobs):
                task_read, task_write = context.Pipe(duplex=False)
                result_read, result_write = context.Pipe(duplex=False)
                inherited = [conn for w in self._workers for conn in (w.tasks, w.results)] + [
                    task_write,
                    result_read,
                ]
                process = context.Process(
                    target=_work,
                    args=(task_read, result_write, inherited if method == "fork" else [],
                          self.judge),
                    name=f"envelopekit-validate-{len(self._workers) + 1}",
                    daemon=True,
                )  # fmt: skip
                process.start()
                task_read.close()
                result_write.close()
                self._workers.append(_Worker(process, task_write, result_read))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def submit(self, items: list[Item]) -> Iterator[tuple[bytes, Summary]]:
        """Hand a task out; yields the results that had to be read first to make room."""
        if len(self._in_flight) >= WINDOW * self.jobs:
            yield self._receive()
        worker = self._workers[self._sent % self.jobs]
        try:
            worker.tasks.send_bytes(pickle.dumps(items, pickle.HIGHEST_PROTOCOL))
        except OSError as exc:
            raise self._died(worker) from exc
        self._in_flight.append(self._sent)
        self._sent += 1

    def drain(self) -> Iterator[tuple[bytes, Summary]]:
        """Every result still in flight, in task order."""
        while self._in_flight:
            yield self._receive()

    def _receive(self) -> tuple[bytes, Summary]:
        index = self._in_flight[0]
        worker = self._workers[index % self.jobs]
        try:
            blob = worker.results.recv_bytes()
        except (EOFError, OSError) as exc:
            raise self._died(worker) from exc
        self._in_flight.popleft()
        result: tuple[bytes, Summary] = pickle.loads(blob)
        return result

    def _died(self, worker: _Worker) -> WorkerError:
        worker.process.join(STOP_SECONDS)
        code = worker.process.exitcode
        how = (
            f"killed by signal {-code}"
            if code is not None and code < 0
            else f"exit status {code}"
            if code is not None
            else "its pipe closed"
        )
        return WorkerError(f"a validating process ended unexpectedly ({how})")

    def close(self, *, finished: bool) -> None:
        """Stop the workers: asked to (``finished``), else at once (Ctrl-C, an error)."""
        for worker in self._workers:
            if finished:
                with suppress(OSError):
                    worker.tasks.send_bytes(b"")
            worker.tasks.close()
            worker.results.close()  # a worker still sending a result gets a broken pipe
        for worker in self._workers:
            if not finished:
                worker.process.terminate()
            worker.process.join(STOP_SECONDS)
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join()
        self._workers.clear()


def run(
    items: Iterable[Item],
    pool: Pool,
    advance: Callable[[int], None],
    emit: Callable[[bytes, Summary], None],
) -> None:
    """Validate every item across the pool, emitting each task's output in input order.

    Raises:
        InputError: after the results of everything read before it were emitted.
        WorkerError: when a worker died, after the results before its task.
    """
    task: list[Item] = []
    size = 0
    waiting: list[Item] | None = None  # the first task, held until a second shows the need
    finished = False
    try:
        try:
            for item in items:
                length = len(item.data) if isinstance(item, Block) else item.size + 1
                advance(length)
                task.append(item)
                size += length
                if size >= TASK_BYTES or len(task) >= TASK_ITEMS:
                    if waiting is None and not pool.started:
                        waiting = task
                    else:
                        if not pool.started:
                            pool.start()
                        for ready in _hand_out(pool, waiting, task):
                            emit(*ready)
                        waiting = None
                    task, size = [], 0
        except WorkerError:
            raise
        except InputError:
            # What was read before the failure stands: validate it, then report the failure.
            _finish(pool, waiting, task, emit)
            finished = True
            raise
        _finish(pool, waiting, task, emit)
        finished = True
    finally:
        if pool.started:
            pool.close(finished=finished)


def _hand_out(
    pool: Pool, waiting: list[Item] | None, task: list[Item]
) -> Iterator[tuple[bytes, Summary]]:
    if waiting is not None:
        yield from pool.submit(waiting)
    yield from pool.submit(task)


def _finish(
    pool: Pool,
    waiting: list[Item] | None,
    task: list[Item],
    emit: Callable[[bytes, Summary], None],
) -> None:
    if not pool.started:
        # Never more than one task and what followed it: not worth a process.
        for items in (waiting or [], task):
            if items:
                emit(*pool.judge(items))
        return
    if task:
        for ready in pool.submit(task):
            emit(*ready)
    for ready in pool.drain():
        emit(*ready)
