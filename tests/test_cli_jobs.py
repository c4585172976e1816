"""``envelopekit validate --jobs N`` against ``--jobs 1``, the real executable as a subprocess.

Every comparison runs the same inputs both ways and asks for the same bytes on stdout and
stderr and the same exit status, while watching the process: the ``--jobs`` run must really
have had its worker processes (a run that quietly stayed in one process would pass the
comparison alone). Inputs are 1-4 MiB, so the work is split into several tasks across workers.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, NamedTuple
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).parent.parent
ENTRY = shutil.which("envelopekit", path=str(Path(sys.executable).parent)) or "envelopekit"
EXAMPLES = ROOT / "examples" / "messages"
# Compacted by the standard library, which keeps the example's NaN as it is.
SAMPLES = [
    json.dumps(json.loads(p.read_bytes()), separators=(",", ":")).encode()
    for p in sorted(EXAMPLES.rglob("*.json"))
]
GOOD = orjson.dumps(orjson.loads((EXAMPLES / "babelqueue" / "order-created.json").read_bytes()))


def env(**extra: str) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("ENVELOPEKIT_")}
    return {**found, **extra}


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def watched(
    args: list[str], stdin: bytes = b"", **extra: str
) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """Run the CLI; also the most worker processes it had at once (polled from /proc)."""
    proc = subprocess.Popen(
        [ENTRY, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env(**extra),
    )
    most = 0

    def watch() -> None:
        nonlocal most
        while proc.poll() is None:
            most = max(most, len(children(proc.pid)))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    out, err = proc.communicate(stdin, timeout=600)
    watcher.join()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), most


def same_both_ways(
    args: list[str], stdin: bytes = b"", jobs: int = 2, **extra: str
) -> subprocess.CompletedProcess[bytes]:
    one, _ = watched(["validate", "--jobs", "1", *args], stdin, **extra)
    many, workers = watched(["validate", "--jobs", str(jobs), *args], stdin, **extra)
    assert b"Traceback" not in one.stderr, one.stderr.decode(errors="replace")
    assert workers == jobs, f"--jobs {jobs} ran {workers} worker processes"
    assert many.returncode == one.returncode
    assert many.stderr == one.stderr
    assert many.stdout == one.stdout
    return many


def mixed_lines(count: int) -> bytes:
    """Every example message, and lines that are not messages: broken JSON, blank, CRLF,
    a repeated member name, a number beyond 64 bits."""
    extra = [
        b"{broken",
        b"",
        b"   ",
        GOOD + b"\r",
        b'{"job":"x","job":"y"}',
        b'{"n":1' + b"0" * 30 + b"}",
    ]
    pool = SAMPLES + extra
    return b"".join(pool[i % len(pool)] + b"\n" for i in range(count))


# Past two tasks of a regular file's spans (SPAN_TASK_BYTES, 1 MiB): workers start.
FEED_LINES = 12_000


@pytest.fixture(scope="module")
def feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("jobs") / "feed.ndjson"
    path.write_bytes(mixed_lines(FEED_LINES))
    return path


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_mixed_feed_gives_the_same_output(feed: Path, output: str) -> None:
    out = same_both_ways(["--format", output, str(feed)]).stdout
    assert out.count(b"\n") > FEED_LINES * 0.9


def test_three_jobs_and_a_spec_named(feed: Path) -> None:
    same_both_ways(["--spec", "som", "--format", "json", str(feed)], jobs=3)


def test_many_tasks_on_three_jobs_keep_every_line_in_order(tmp_path: Path) -> None:
    """Tens of tasks across three workers: each verdict once, at its line, in input order, runs
    of clean lines and invalid ones told apart by their line numbers alone."""
    path = tmp_path / "many.ndjson"
    count = 30_000  # about 8 MiB: 30 tasks or so
    path.write_bytes(FEED * (count // len(FEED.splitlines())))
    done, workers = watched(["validate", "--jobs", "3", "--format", "json", str(path)])
    assert done.returncode == 1, done.stderr
    assert workers == 3
    verdicts = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [v["source"] for v in verdicts] == [f"{path}:{i + 1}" for i in range(count)]
    assert [v["ok"] for v in verdicts] == [(i + 1) % 10 != 0 for i in range(count)]
    assert done.stderr.startswith(f"{count} messages: {count * 9 // 10} valid,".encode())


def _nan_at(key: str) -> bytes:
    """GOOD with ``data`` holding ``key`` with the value NaN: a violation pointing at it."""
    return GOOD.replace(b'"data":{', b'"data":{' + orjson.dumps(key) + b":NaN,", 1)


# A member name whose newline would print a line that reads as a verdict, and a terminal's
# escape sequence, a C1 control and a line separator; in a file name too.
_FORGED = "a\nvalid   forged:3 (babelqueue)"
_CONTROLS = "\x1b[2J\x85\u2028"


def test_text_escapes_control_characters_the_same_with_workers(tmp_path: Path) -> None:
    path = tmp_path / f"feed{_CONTROLS}.ndjson"
    lines = mixed_lines(FEED_LINES).splitlines()
    for at in (0, FEED_LINES // 2, FEED_LINES - 1):  # in the first, a middle and the last task
        lines[at] = _nan_at(_FORGED if at else _CONTROLS)
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = same_both_ways([str(path)]).stdout.decode()
    verdicts = out.partition("\n\n")[0].split("\n")
    name = f"{path}".replace(_CONTROLS, "\\x1b[2J\\x85\\u2028")
    heads = (f"valid   {name}:", f"INVALID {name}:", "    ", "  ! ")
    assert [line for line in verdicts if not line.startswith(heads)] == []
    assert out.count("/data/a\\nvalid   forged:3 (babelqueue) ") == 2
    assert out.count("/data/\\x1b[2J\\x85\\u2028 ") == 1
    assert not any(c in out for c in "\x1b\x85\u2028")


def test_a_block_writes_text_escaped_as_its_messages_one_by_one() -> None:
    """The block's own clean and invalid lines (its name written once for a run of lines) and
    each message's ``text_of`` escape alike."""
    from envelopekit._cli import text_of, verdict_for
    from envelopekit._cli_input import Block
    from envelopekit._cli_jobs import Judge
    from envelopekit._settings import get_settings

    config = get_settings()
    judge = Judge("auto", config, 1 << 20, as_json=False)
    block = Block(f"feed{_CONTROLS}\n", 1, b"\n".join([GOOD, _nan_at(_FORGED), GOOD, b""]))
    out, _ = judge([block])
    one_by_one = b"".join(
        text_of(message, verdict_for(message, "auto", config, 1 << 20)).encode()
        for message in block.messages(1 << 20)
    )
    assert out == one_by_one
    assert out.decode().count("\n") == 4
    assert not any(c in out.decode() for c in "\x1b\x85\u2028")


def test_duplicate_keys_refused_the_same(feed: Path) -> None:
    out = same_both_ways(["--duplicate-keys", "refuse", "--format", "json", str(feed)]).stdout
    assert b"json.duplicate_key" in out


def test_too_large_messages_in_blocks_and_across_them(tmp_path: Path) -> None:
    # Under a 600-byte limit: lines of 2 KiB inside a block, and one of 600 KiB that runs past
    # several blocks (read to the limit, the rest skipped).
    lines = mixed_lines(2_000).split(b"\n")
    lines[100] = b'{"x":"' + b"a" * 2048 + b'"}'
    lines[1_000] = b'{"x":"' + b"b" * (600 * 1024) + b'"}'
    path = tmp_path / "feed.ndjson"
    path.write_bytes(b"\n".join(lines))
    done = same_both_ways(["--format", "json", str(path)], ENVELOPEKIT_MAX_MESSAGE_BYTES="600")
    out = done.stdout
    verdicts = [orjson.loads(x) for x in out.splitlines()]
    sources = {v["source"]: v for v in verdicts}
    assert sources[f"{path}:1001"]["violations"][0]["message"] == "614408 bytes exceeds 600."
    assert sources[f"{path}:101"]["violations"][0]["rule"] == "message.too_large"


def test_files_a_directory_gzip_and_stdin_together(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(1_200):  # more than two tasks of single-message files
        (folder / f"m{i:05}.json").write_bytes(SAMPLES[i % len(SAMPLES)])
    packed = tmp_path / "feed.log.gz"
    packed.write_bytes(gzip.compress(mixed_lines(1_000)))
    done = same_both_ways(
        ["--format", "json", str(folder), str(packed), "-"], stdin=mixed_lines(1_000)
    )
    sources = [orjson.loads(x)["source"] for x in done.stdout.splitlines()]
    assert sources[0] == f"{folder}/m00000.json"
    assert sources[-1].startswith("<stdin>:")


def test_a_read_error_part_way_keeps_what_was_read(tmp_path: Path) -> None:
    packed = gzip.compress(mixed_lines(4_000))
    path = tmp_path / "cut.ndjson.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    done = same_both_ways(["--format", "json", str(path)])
    assert done.returncode == 2
    assert b"cannot read" in done.stderr
    assert b"messages:" in done.stderr  # the summary of what stood


def test_a_small_input_starts_no_worker() -> None:
    done, workers = watched(["validate", "--jobs", "4", "-"], stdin=GOOD + b"\n" + GOOD + b"\n")
    assert done.returncode == 0
    assert workers == 0
    assert b"2 messages: 2 valid" in done.stdout


MOST_JOBS = max(256, len(os.sched_getaffinity(0)))


@pytest.mark.parametrize("value", ["0", "-1", "two", str(MOST_JOBS + 1), "100000"])
def test_jobs_must_be_a_number_from_1_to_the_ceiling(value: str) -> None:
    done = subprocess.run(
        [ENTRY, "validate", "--jobs", value, "-"], capture_output=True, env=env(), check=False
    )
    assert done.returncode == 2
    expected = f"--jobs: not a number of processes from 1 to {MOST_JOBS}: '{value}'"
    assert expected.encode() in done.stderr
    assert b"Traceback" not in done.stderr


def test_the_ceiling_itself_is_accepted() -> None:
    # A small input starts no worker: the number is taken without forking 256 processes.
    done, workers = watched(
        ["validate", "--jobs", str(MOST_JOBS), "-"], stdin=GOOD + b"\n" + GOOD + b"\n"
    )
    assert done.returncode == 0, done.stderr
    assert workers == 0
    assert b"2 messages: 2 valid" in done.stdout


def test_workers_that_cannot_start_are_a_clear_error(feed: Path) -> None:
    """Out of file descriptors part-way through starting the workers: a message and status 2,
    not a traceback (and not status 1, which says a message was invalid)."""
    import resource

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))

    done = subprocess.run(
        [ENTRY, "validate", "--jobs", "8", str(feed)],
        capture_output=True,
        env=env(),
        check=False,
        preexec_fn=few_files,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"envelopekit: cannot start 8 validating processes (" in done.stderr
    assert b"started): Too many open files" in done.stderr


# --- signals and failures while workers run -------------------------------------------------


def wait_until(ready: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "the child never got there"
        time.sleep(0.02)


class Started(NamedTuple):
    """The CLI on a pipe it has read lines from, its two workers running."""

    proc: subprocess.Popen[bytes]
    workers: list[int]
    out: IO[bytes]
    err: IO[bytes]

    def finish(self, more: bytes = b"") -> tuple[bytes, bytes]:
        """Write ``more`` (unless the run has ended), close stdin; stdout and stderr."""
        # communicate() writes with a timeout and takes a broken pipe as the run's end.
        self.proc.communicate(more or None, timeout=60)
        return read_back(self.out), read_back(self.err)


def read_back(file: IO[bytes]) -> bytes:
    file.seek(0)
    data = file.read()
    file.close()
    return data


def started(lines: bytes, **popen: object) -> Started:
    """The CLI reading ``lines`` from a pipe, its two workers running.

    Its stdout and stderr are files, not pipes: a run that fills a pipe nobody reads yet
    would stop reading stdin, and the test writing to it would wait forever.
    """
    # Closed by Started.finish, so not in a with block.
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115
    proc = subprocess.Popen(
        [ENTRY, "validate", "--jobs", "2", "--spec", "babelqueue", "-"],
        stdin=subprocess.PIPE,
        stdout=out,
        stderr=err,
        env=env(),
        **popen,  # type: ignore[call-overload]
    )
    assert proc.stdin is not None
    proc.stdin.write(lines)
    proc.stdin.flush()
    wait_until(lambda: len(children(proc.pid)) == 2)
    return Started(proc, children(proc.pid), out, err)


def in_order(out: bytes) -> int:
    """The verdict lines are the first ones of stdin, in order; how many there are."""
    marks = [line for line in out.splitlines() if line[:7] in (b"valid  ", b"INVALID")]
    assert marks == [
        f"{'valid  ' if (i + 1) % 10 else 'INVALID'} <stdin>:{i + 1} (babelqueue)".encode()
        for i in range(len(marks))
    ]
    return len(marks)


BAD = GOOD.replace(b'"schema_version":1', b'"schema_version":2')
FEED = b"".join((BAD if (i + 1) % 10 == 0 else GOOD) + b"\n" for i in range(6_000))


@pytest.mark.parametrize("whom", ["main process", "process group"])
def test_ctrl_c_with_workers_prints_the_summary_so_far(whom: str) -> None:
    run = started(FEED, start_new_session=True)
    proc, workers = run.proc, run.workers
    # It has read what was written and waits for more on the pipe.
    wait_until(lambda: "pipe" in Path(f"/proc/{proc.pid}/wchan").read_text())
    if whom == "main process":
        proc.send_signal(signal.SIGINT)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = run.finish()
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    assert b"Traceback" not in err
    shown = in_order(out)
    valid = shown - shown // 10
    assert f"{shown} messages: {valid} valid, {shown // 10} invalid".encode() in out
    wait_until(lambda: not any(alive(pid) for pid in workers), timeout=30)


@pytest.mark.parametrize("when", ["at once", "idle"])
def test_a_worker_that_dies_ends_the_run_with_status_2(when: str) -> None:
    run = started(FEED)
    proc, workers = run.proc, run.workers
    if when == "idle":
        # Every task handed out (the main process waits on stdin) and done (the workers wait
        # for more): the run has some 64 KiB of verdicts to write before it meets the death.
        def idle() -> bool:
            waits = [Path(f"/proc/{pid}/wchan").read_text() for pid in [proc.pid, *workers]]
            return "pipe" in waits[0] and all("futex" in w for w in waits[1:])

        wait_until(idle)
        time.sleep(0.2)
        wait_until(idle)
    os.kill(workers[0], signal.SIGKILL)
    # More tasks, one of them for the dead worker (unless a result it owed was awaited first,
    # and the run has already ended).
    out, err = run.finish(FEED)
    assert proc.returncode == 2, err
    assert b"a validating process ended unexpectedly (killed by signal 9)" in err
    assert b"Traceback" not in err
    shown = in_order(out)
    assert shown < 12_000
    assert f"\n{shown} messages:".encode() in out
    wait_until(lambda: not any(alive(pid) for pid in workers), timeout=30)


def test_a_closed_reader_ends_the_run_quietly(feed: Path) -> None:
    done = subprocess.run(
        ["sh", "-c", f'"$EK" validate --jobs 2 "{feed}" | head -n 1'],
        capture_output=True,
        env=env(EK=ENTRY),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 1
    assert b"Traceback" not in done.stderr


# --- a task judged in one go, as its messages one by one ----------------------------------------

_JUDGED = [
    GOOD,
    BAD,
    GOOD + b"\r",
    b"",
    b" \t",
    b"{broken",
    b'{"job":"x","job":"y"}',
    # The same rule at other pointers, and with other messages: findings told apart in full.
    *(
        orjson.dumps({k: v for k, v in orjson.loads(GOOD).items() if k != gone})
        for gone in ("trace_id", "data")
    ),
    GOOD.replace(b'"attempts":0', b'"attempts":-1'),
    GOOD.replace(b'"attempts":0', b'"attempts":1.5'),
    GOOD.replace(b'"schema_version":1', b'"schema_version":0'),  # BAD's rule and pointer
    *SAMPLES[::4],
]


@settings(max_examples=150, deadline=None)
@given(
    tasks=st.lists(st.lists(st.sampled_from(_JUDGED), max_size=30), min_size=1, max_size=3),
    limit=st.sampled_from([40, 400, 1 << 20]),
    as_json=st.booleans(),
    spec=st.sampled_from(["auto", "babelqueue", "som"]),
    duplicates=st.sampled_from(["allow", "warn", "refuse"]),
    kept=st.sampled_from([1, 2, 1024]),
)
def test_a_block_is_judged_as_its_messages_one_by_one(
    tasks: list[list[bytes]], limit: int, as_json: bool, spec: str, duplicates: str, kept: int
) -> None:
    """Blocks judged one after the other by one judge (its written findings kept, or started
    over every ``kept`` distinct ones) write and count what each message alone would."""
    from envelopekit._cli import Summary, json_of, text_of, verdict_for
    from envelopekit._cli_input import Block
    from envelopekit._cli_jobs import Judge
    from envelopekit._settings import get_settings

    config = get_settings().model_copy(update={"duplicate_keys": duplicates})
    judge = Judge(spec, config, limit, as_json)
    number = 7
    for lines in tasks:
        block = Block('feeds/é "x".ndjson', number, b"\n".join(lines) + b"\n")
        number += len(lines) + 1
        with mock.patch("envelopekit._cli_jobs.WRITTEN_ITEMS", kept):
            out, summary = judge([block])
        expected = Summary()
        parts = []
        for message in block.messages(limit):
            verdict = verdict_for(message, spec, config, limit)
            expected.add(verdict)
            parts.append(
                json_of(message, verdict) if as_json else text_of(message, verdict).encode("utf-8")
            )
        assert out == b"".join(parts)
        assert summary == expected
        assert list(summary.rules.items()) == list(expected.rules.items())
        assert list(summary.warnings.items()) == list(expected.warnings.items())
    assert len(judge._written) <= kept


# --- spans: a regular file's blocks by position, read by the process that validates them --------


def _spans_of(path: Path, limit: int) -> list[object]:
    from envelopekit._cli_input import Block, Span, chunks, plan

    found: list[object] = []
    for item in chunks(plan([str(path)], "ndjson", True), None, limit, spans=True):
        assert not isinstance(item, Block), "a regular file's block came with its bytes"
        found.extend(item.block().messages(limit) if isinstance(item, Span) else [item])
    return found


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 9_000), min_size=1, max_size=40),
    ending=st.sampled_from([b"\n", b"\r\n", b""]),
    limit=st.sampled_from([100, 1_000, 5_000]),
)
def test_spans_hold_the_lines_blocks_hold(sizes: list[int], ending: bytes, limit: int) -> None:
    import tempfile

    from envelopekit import _cli_input
    from envelopekit._cli_input import messages, plan

    body = b"\n".join(b'{"x":"' + b"a" * n + b'"}' + ending.rstrip(b"\n") for n in sizes)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "feed.ndjson"
        path.write_bytes(body + (b"\n" if ending.endswith(b"\n") else b""))
        # Lines across blocks, and lines longer than a block.
        with mock.patch.object(_cli_input, "BLOCK", 4_096):
            spans = _spans_of(path, limit)
            lines = list(messages(plan([str(path)], "ndjson", True), None, limit))
    assert spans == lines


def test_a_gzip_file_a_fifo_and_stdin_are_read_as_blocks(tmp_path: Path) -> None:
    from envelopekit._cli_input import Span, chunks, plan

    packed = tmp_path / "feed.ndjson.gz"
    packed.write_bytes(gzip.compress(mixed_lines(50)))
    fifo = tmp_path / "feed.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(mixed_lines(50)))
    writer.start()
    read = list(chunks(plan([str(packed), str(fifo)], "auto", True), None, 1 << 20, spans=True))
    writer.join()
    assert read
    assert not any(isinstance(item, Span) for item in read)


def _changed_span(tmp_path: Path, change: str) -> object:
    from envelopekit._cli_input import Span, chunks, plan

    path = tmp_path / "feed.ndjson"
    path.write_bytes(FEED)
    spans = [
        item
        for item in chunks(plan([str(path)], "auto", True), None, 1 << 20, spans=True)
        if isinstance(item, Span)
    ]
    if change == "cut":
        path.write_bytes(FEED[: len(FEED) // 2])
    else:  # the path now names another file of the same bytes (the old one kept: a new inode)
        path.rename(tmp_path / "old.ndjson")
        path.write_bytes(FEED)
    return spans[-1]


@pytest.mark.parametrize("change", ["cut", "replaced"])
def test_a_file_that_changes_under_the_run_is_an_input_error(tmp_path: Path, change: str) -> None:
    from envelopekit._cli_input import InputChanged, Message, Span
    from envelopekit._cli_jobs import Judge, Pool
    from envelopekit._settings import get_settings

    span = _changed_span(tmp_path, change)
    assert isinstance(span, Span)
    config = get_settings()
    judge = Judge("babelqueue", config, config.max_message_bytes, True)
    with pytest.raises(InputChanged, match="changed while it was read"):
        judge([span])
    # From a worker, the same error reaches the main process in the task's place.
    pool = Pool(2, judge)
    pool.start()
    try:
        good = Message(f"{span.name}:1", GOOD, len(GOOD))
        assert list(pool.submit([good])) == []
        assert list(pool.submit([span])) == []
        results = pool.drain()
        out, _ = next(results)
        assert out.startswith(b'{"source":')
        with pytest.raises(InputChanged, match="changed while it was read"):
            next(results)
    finally:
        pool.close(finished=False)


def test_a_worker_held_up_gets_no_more_tasks_and_the_order_stands() -> None:
    from envelopekit._cli_input import Message
    from envelopekit._cli_jobs import Judge, Pool
    from envelopekit._settings import get_settings

    config = get_settings()
    pool = Pool(2, Judge("babelqueue", config, config.max_message_bytes, True))
    pool.start()
    held = pool.owed[0][0]
    os.kill(held, signal.SIGSTOP)
    try:
        results: list[bytes] = []
        for i in range(5):
            message = Message(f"m:{i}", GOOD, len(GOOD))
            results.extend(out for out, _ in pool.submit([message]))
            time.sleep(0.3)  # the running worker answers in well under that
        # Round-robin would have given the held worker three of the five tasks.
        assert pool.owed[0] == (held, 1)
        assert results == []
        os.kill(held, signal.SIGCONT)
        results.extend(out for out, _ in pool.drain())
    finally:
        os.kill(held, signal.SIGCONT)
        pool.close(finished=True)
    assert [orjson.loads(out)["source"] for out in results] == [f"m:{i}" for i in range(5)]
