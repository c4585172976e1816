"""``envelopekit validate``: messages validated in N processes (``--jobs``), verdicts in order.

The main process reads (``_cli_input.chunks``: NDJSON in raw blocks of lines, other inputs a
message at a time), packs what it read into tasks of about ``TASK_BYTES`` (``SPAN_TASK_BYTES``
of spans) and hands each to
the worker with the fewest results outstanding, over a pipe of its own. From a regular file a
block goes as a ``Span`` (where its lines lie), and the worker reads it there itself: the main
process only finds line ends and counts lines, and no input bytes cross a pipe. A worker
splits the blocks into messages, validates them and sends back the task's output, already
formatted, and its counts. The main process writes the results in task order, so the output
is byte for byte the one-process output; at most ``WINDOW`` tasks per worker are in flight,
so memory stays flat whatever the input.

* ``--jobs 1`` runs the same tasks in the main process; small inputs (one task) are
  validated in-process whatever ``--jobs`` says: no worker is started for them.
* A file that changes under the run (a span reads short, or its path names another file) ends
  it as a dead worker does, with ``InputChanged``.
* A worker that dies is noticed where its result is awaited (end of file on its pipe) or its
  next task sent (a broken pipe): the verdicts before its task stand, the summary is written
  and the run ends with exit status 2, never a hang.
* Ctrl-C (SIGINT, to the main process or the whole process group): workers ignore it; the main
  process stops reading, has what it read validated and written (a few tasks at most: a
  second Ctrl-C skips that), writes the summary, stops the workers and exits 130.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple, cast

import orjson
from pydantic import ValidationError

from ._check import SPECS, check, clean_reader
from ._cli import CLEAN_LINES, Summary, json_of, text_of, verdict_for
from ._cli_input import (
    JSON_WHITESPACE,
    Block,
    InputChanged,
    InputError,
    Message,
    Span,
    one_line,
    one_line_json,
)
from ._violations import Verdict

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = [
    "PIPE_BYTES",
    "SPAN_TASK_BYTES",
    "TASK_BYTES",
    "TASK_ITEMS",
    "WINDOW",
    "Judge",
    "Pool",
    "WorkerError",
    "default_jobs",
    "merge",
    "run",
]

# A task is about one input block: a few hundred messages, so the pipes, pickling and wake-ups
# cost a few tens of microseconds per task, well under 1% of validating it.
TASK_BYTES: Final = 256 * 1024
# A task of spans (a regular file's blocks, which the worker reads itself) is four blocks: what
# each task costs the main process (a poll, a pickle each way, a result read) came to a third
# of its CPU (400,000 messages: 0.40-0.44 s, 0.27-0.29 s so). Streams keep TASK_BYTES, so a
# slow producer's verdicts come as soon.
SPAN_TASK_BYTES: Final = 4 * TASK_BYTES
# Or this many messages read one at a time (a directory of small files).
TASK_ITEMS: Final = 512
# Tasks in flight per worker: one being validated, one waiting behind it, one being sent.
WINDOW: Final = 3
STOP_SECONDS: Final = 5.0
# Distinct findings a judge keeps written (``Judge._findings``), past which it starts over.
WRITTEN_ITEMS: Final = 1024
# Linux's default limit for a pipe's buffer (/proc/sys/fs/pipe-max-size) without privileges.
PIPE_BYTES: Final = 1024 * 1024

Item = Message | Block | Span


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
    """Validates a task's messages and formats their verdicts, for one process or many."""

    spec: str
    settings: Any
    limit: int
    as_json: bool
    # A verdict with findings, by what it found: its line after the source, and what it counts.
    _written: dict[tuple[object, ...], _Written] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __call__(self, items: Iterable[Item]) -> tuple[bytes, Summary]:
        """The output of the task's messages and their counts."""
        summary = Summary()
        out: list[bytes] = []
        for item in items:
            if isinstance(item, Message):
                self._one(item, summary, out)
            else:
                self._block(item if isinstance(item, Block) else item.block(), summary, out)
        return b"".join(out), summary

    def _one(self, message: Message, summary: Summary, out: list[bytes]) -> None:
        verdict = verdict_for(message, self.spec, self.settings, self.limit)
        summary.add(verdict)
        out.append(
            json_of(message, verdict) if self.as_json else text_of(message, verdict).encode("utf-8")
        )

    def _block(self, block: Block, summary: Summary, out: list[bytes]) -> None:
        """``Block.messages`` inlined, and a run of clean verdicts' lines written in one go.

        A clean line is the block's name, its line number and a constant: no ``Message``, no
        source string, no ``Summary.add``, and nothing built per line at all (``_run`` writes
        the lines of a run of clean verdicts together, when the run ends).
        ``tests/test_cli_jobs.py`` holds it to the generic path.
        """
        spec, settings, limit, as_json = self.spec, self.settings, self.limit, self.as_json
        lines = block.data.split(b"\n")
        if not lines[-1]:
            lines.pop()
        name = block.name
        clean = _clean_json if as_json else _clean_text
        # The source, up to its line number, as each format writes it.
        head = (
            b'{"source":' + one_line_json(orjson.dumps(name))[:-1] + b":"
            if as_json
            else b"valid   " + one_line(name).encode("utf-8") + b":"  # as text_of writes it
        )
        invalid_head = b"INVALID " + head[8:]
        # Lines first .. number - 1 are clean verdicts of spec ``kind``, not written yet.
        first, kind = block.number, spec
        # A line the quick reader takes is a clean verdict of `vouched`: none is built for it.
        quick, most, vouched = clean_reader(spec, settings) or (None, 0, spec)
        for number, line in enumerate(lines, block.number):
            size = len(line)
            if size > limit:
                _closed(out, summary, head, clean, kind, first, number)
                self._one(Message(f"{name}:{number}", line[: limit + 1], size), summary, out)
                first = number + 1
            elif body := line.strip(JSON_WHITESPACE):
                if quick is not None and len(body) <= most:
                    try:
                        if quick(body) is not None:
                            if kind != vouched:  # spec "auto": a run is of one spec
                                _closed(out, summary, head, clean, kind, first, number)
                                first, kind = number, vouched
                            continue
                    except ValidationError:  # not JSON: check reports it
                        pass
                verdict = check(body, spec, settings=settings)
                if verdict.violations or verdict.warnings:
                    _closed(out, summary, head, clean, kind, first, number)
                    written = self._findings(verdict)
                    if written.rules:
                        summary.invalid += 1
                        for rule in written.rules:
                            summary.rules[rule] += 1
                    else:
                        summary.valid += 1
                    if written.warnings:
                        summary.warned += 1
                        for rule in written.warnings:
                            summary.warnings[rule] += 1
                    out.append(
                        (head if as_json or not written.rules else invalid_head)
                        + str(number).encode()
                        + written.rest
                    )
                    first = number + 1
                elif verdict.spec != kind:  # spec "auto": a run is of one spec
                    _closed(out, summary, head, clean, kind, first, number)
                    first, kind = number, verdict.spec
            else:  # a blank line: no verdict
                _closed(out, summary, head, clean, kind, first, number)
                first = number + 1
        end = block.number + len(lines)
        _closed(out, summary, head, clean, kind, first, end)

    def _findings(self, verdict: Verdict[Any]) -> _Written:
        """What a verdict with findings writes and counts, made once per distinct findings.

        The line is ``json_of`` or ``text_of`` itself, of a message with an empty source: the
        part after the source is the same for every message that found the same (a feed's
        invalid messages mostly repeat a few findings).
        """
        key: list[object] = [verdict.spec, len(verdict.violations)]
        for found in (verdict.violations, verdict.warnings):
            for v in found:
                key += (v.rule, v.pointer, v.message, v.source)
        frozen = tuple(key)
        written = self._written.get(frozen)
        if written is None:
            if len(self._written) >= WRITTEN_ITEMS:
                self._written.clear()  # findings that quote the input hardly ever repeat
            blank = Message("", b"", 0)
            line = (
                json_of(blank, verdict)[len(b'{"source":"') :]
                if self.as_json
                else text_of(blank, verdict).encode("utf-8")[len(b"INVALID ") :]
            )
            written = _Written(
                line,
                tuple(dict.fromkeys([v.rule for v in verdict.violations])),
                tuple(dict.fromkeys([w.rule for w in verdict.warnings])),
            )
            self._written[frozen] = written
        return written


class _Written(NamedTuple):
    rest: bytes  # the verdict's line after its source's line number
    rules: tuple[str, ...]  # each violation's rule once, in order
    warnings: tuple[str, ...]  # each warning's rule once, in order


def _closed(
    out: list[bytes],
    summary: Summary,
    head: bytes,
    tails: dict[str, bytes],
    kind: str,
    first: int,
    end: int,
) -> None:
    """A run of clean verdicts of spec ``kind`` ended: its lines written, and counted.

    The run is lines ``first`` .. ``end`` - 1, each ending in ``tails[kind]``; an empty one
    writes nothing (its ``kind`` may then be ``"auto"``, no verdict read yet).
    """
    if end > first:
        out.append(_run(head, tails[kind], first, end))
        summary.valid += end - first


def _run(head: bytes, tail: bytes, first: int, end: int) -> bytes:
    """The clean lines ``head`` + number + ``tail`` of lines ``first`` .. ``end`` - 1.

    The numbers are written by ``str.join`` over ``map(str, ...)`` and the separators put in
    by one ``bytes.replace``: C loops, where a concatenation per line cost a tenth of a
    worker's time.
    """
    numbers = "\n".join(map(str, range(first, end))).encode()
    return head + numbers.replace(b"\n", tail + head) + tail


_clean_json: Final[dict[str, bytes]] = {spec: b'"' + line for spec, line in CLEAN_LINES.items()}
_clean_text: Final[dict[str, bytes]] = {spec: f" ({spec})\n".encode() for spec in SPECS}


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
    inbox: queue.SimpleQueue[list[Item] | None] = queue.SimpleQueue()

    def receive() -> None:
        try:
            while (task := _receive_task(tasks)) is not None:
                inbox.put(task)
        except (EOFError, OSError):
            pass
        inbox.put(None)

    threading.Thread(target=receive, daemon=True).start()
    try:
        while (task := inbox.get()) is not None:
            try:
                out, summary = judge(task)
            except InputChanged as exc:
                results.send_bytes(b"")
                results.send_bytes(pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
                continue
            # The output as it is (no pickle copy of it), then the counts.
            results.send_bytes(out)
            results.send_bytes(pickle.dumps(summary, pickle.HIGHEST_PROTOCOL))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the main process went away: nobody is waiting for the rest


def _send_task(conn: Connection, items: list[Item]) -> None:
    """A task as a pickled list of its items, blocks without their bytes, then those bytes.

    A block's bytes are most of a task: written from the block itself, not copied into a
    pickle first (half the main process's own work per message).
    """
    manifest = [item._replace(data=b"") if isinstance(item, Block) else item for item in items]
    conn.send_bytes(pickle.dumps(manifest, pickle.HIGHEST_PROTOCOL))
    for item in items:
        if isinstance(item, Block):
            conn.send_bytes(item.data)


def _receive_task(conn: Connection) -> list[Item] | None:
    """The next task, or ``None`` for the empty message that stops the worker."""
    head = conn.recv_bytes()
    if not head:
        return None
    manifest: list[Item] = pickle.loads(head)
    return [
        item._replace(data=conn.recv_bytes()) if isinstance(item, Block) else item
        for item in manifest
    ]


# --- the main process's side ------------------------------------------------------------------


@dataclass
class _Worker:
    process: Any
    tasks: Connection
    results: Connection
    # Tasks handed to it whose results are not read yet, in the order it answers them.
    pending: deque[int] = field(default_factory=deque)
    failed: WorkerError | None = None  # its pipe ended: raised when its task's turn comes


def _widen(conn: Connection) -> None:
    """Make a pipe hold a few tasks (Linux; elsewhere, or past the system's limit, as it is).

    With the default 64 KiB, a worker that finished a task ahead of its turn waited, unable to
    write the result, until the main process read the task before it; and the main process
    waited, part-way through writing a task, for the worker's reader thread to get the GIL.
    """
    if sys.platform == "linux":
        import fcntl

        with suppress(OSError):
            fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


class Pool:
    """N workers, started on first need, each task to the least busy; results in task order.

    A task goes to the worker with the fewest results outstanding, counting the results it
    has already written (read early, without waiting): a worker that the machine runs slower
    gets fewer tasks, instead of holding the others to its pace. Results read ahead of their
    turn wait here; at most ``WINDOW`` tasks per worker are in flight in all.
    """

    def __init__(self, jobs: int, judge: Judge) -> None:
        self.jobs = jobs
        self.judge = judge
        self._workers: list[_Worker] = []
        self._sent = 0  # tasks handed out so far
        self._in_flight: deque[int] = deque()  # tasks whose results are not emitted yet
        self._owner: dict[int, _Worker] = {}
        self._ready: dict[int, tuple[bytes, Summary | InputChanged]] = {}

    @property
    def started(self) -> bool:
        """Whether tasks can be handed out: the workers run, or there are none (one job)."""
        return self.jobs == 1 or bool(self._workers)

    @property
    def owed(self) -> list[tuple[int, int]]:
        """Each worker's process id and how many results it owes (not read yet)."""
        return [(w.process.pid, len(w.pending)) for w in self._workers]

    def start(self) -> None:
        """Start the workers (before any thread of this process, so forking is safe)."""
        if self.started:
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
                self._start_one(context, method)
        except OSError as exc:
            # Out of processes, file descriptors or memory: the ones started are stopped.
            started = len(self._workers)
            self.close(finished=False)
            raise WorkerError(
                f"cannot start {self.jobs} validating processes ({started} started): "
                f"{exc.strerror or exc}"
            ) from exc
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _start_one(self, context: Any, method: str) -> None:
        opened: list[Connection] = []
        try:
            task_read, task_write = context.Pipe(duplex=False)
            opened += (task_read, task_write)
            result_read, result_write = context.Pipe(duplex=False)
            opened += (result_read, result_write)
            inherited = [conn for w in self._workers for conn in (w.tasks, w.results)] + [
                task_write,
                result_read,
            ]
            process = context.Process(
                target=_work,
                args=(task_read, result_write, inherited if method == "fork" else [], self.judge),
                name=f"envelopekit-validate-{len(self._workers) + 1}",
                daemon=True,
            )
            for conn in (task_write, result_read):
                _widen(conn)
            process.start()
        except BaseException:
            for conn in opened:
                conn.close()
            raise
        task_read.close()
        result_write.close()
        self._workers.append(_Worker(process, task_write, result_read))

    def submit(self, items: list[Item]) -> Iterator[tuple[bytes, Summary]]:
        """Hand a task out; yields the results that had to be read first to make room.

        With one job the task is validated here, and its result is the one yielded.
        """
        if self.jobs == 1:
            yield self.judge(items)
            return
        if len(self._in_flight) >= WINDOW * self.jobs:
            yield self._next()
        self._collect(block=False)
        while not (live := [w for w in self._workers if w.failed is None]):
            yield self._next()  # ends raising the first failure, after the results before it
        worker = min(live, key=lambda w: len(w.pending))
        try:
            _send_task(worker.tasks, items)
        except OSError as exc:
            raise self._died(worker) from exc
        worker.pending.append(self._sent)
        self._owner[self._sent] = worker
        self._in_flight.append(self._sent)
        self._sent += 1

    def drain(self) -> Iterator[tuple[bytes, Summary]]:
        """Every result still in flight, in task order."""
        while self._in_flight:
            yield self._next()

    def _next(self) -> tuple[bytes, Summary]:
        """The oldest task's result, reading whatever comes first until it is here."""
        index = self._in_flight[0]
        while index not in self._ready:
            failed = self._owner[index].failed
            if failed is not None:
                raise failed
            self._collect(block=True)
        self._in_flight.popleft()
        del self._owner[index]
        out, summary = self._ready.pop(index)
        if isinstance(summary, InputChanged):
            raise summary
        return out, summary

    def _collect(self, *, block: bool) -> None:
        """Read each result already written (with ``block``, wait for one at least)."""
        from multiprocessing.connection import wait

        busy = {w.results: w for w in self._workers if w.pending and w.failed is None}
        if not busy:
            return
        for conn in wait(list(busy), None if block else 0):
            worker = busy[cast("Connection", conn)]
            try:
                out = worker.results.recv_bytes()
                counts = worker.results.recv_bytes()
            except (EOFError, OSError) as exc:
                worker.failed = self._died(worker)
                worker.failed.__cause__ = exc
                continue
            self._ready[worker.pending.popleft()] = (out, pickle.loads(counts))

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
    emit: Callable[[bytes, Summary], None],
) -> None:
    """Validate every item across the pool, emitting each task's output in input order.

    Whatever ends the reading (the input's end, a read error, Ctrl-C), every message read by
    then is validated and emitted first, as one process reading and validating in turn would.

    Raises:
        InputError: after the results of everything read before it were emitted.
        WorkerError: when a worker died, after the results before its task.
        InputChanged: when a file changed under the run, after the results before its task.
        KeyboardInterrupt: after the results of everything read before it were emitted.
    """
    task: list[Item] = []
    size = 0
    waiting: list[Item] | None = None  # the first task, held until a second shows the need
    finished = False
    try:
        try:
            with _Interrupts() as interrupts:
                for item in items:
                    budget = TASK_BYTES
                    if isinstance(item, Span):
                        length, budget = item.length, SPAN_TASK_BYTES
                    elif isinstance(item, Block):
                        length = len(item.data)
                    else:
                        length = item.size + 1
                    task.append(item)
                    size += length
                    if size < budget and len(task) < TASK_ITEMS:
                        continue
                    with interrupts.held():
                        if waiting is None and not pool.started:
                            waiting = task
                        else:
                            pool.start()
                            for ready in _hand_out(pool, waiting, task):
                                emit(*ready)
                            waiting = None
                        task, size = [], 0
        except (WorkerError, InputChanged):
            raise
        except (InputError, KeyboardInterrupt):
            # What was read before stands: validate it, then report what ended the reading
            # (a second Ctrl-C while that runs ends it at once).
            _finish(pool, waiting, task, emit)
            finished = True
            raise
        _finish(pool, waiting, task, emit)
        finished = True
    finally:
        if pool.started:
            pool.close(finished=finished)


class _Interrupts:
    """Ctrl-C at once while reading; held while a task is handed out or a result written.

    A ``KeyboardInterrupt`` in the middle of a pipe write or read would leave a half message
    in the pipe; held, it is raised as the operation ends. A second Ctrl-C is not held (a
    worker that stopped answering cannot keep the command from ending).
    """

    def __init__(self) -> None:
        self._holding = False
        self._pending = False
        self._previous: Any = None

    def __enter__(self) -> _Interrupts:
        # Only over Python's own Ctrl-C: an ignored SIGINT (nohup, a shell's `&`) stays so.
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum: int, frame: object) -> None:
        if self._holding and not self._pending:
            self._pending = True
            return
        raise KeyboardInterrupt

    @contextmanager
    def held(self) -> Generator[None, None, None]:
        """Hold Ctrl-C until the block ends, then raise it."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt


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
