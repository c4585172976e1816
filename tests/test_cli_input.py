"""The command line on hostile input and a hostile environment (issue 12), as a subprocess.

Every case runs the real ``envelopekit`` executable: a message and an exit status, never a
traceback; verdicts already computed are kept; memory stays flat on any line.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envelopekit import _cli_input
from envelopekit._cli_input import one_line_json
from tests.conftest import DATA
from tests.test_duplicates import _lines_run

ROOT = Path(__file__).parent.parent
ENTRY = shutil.which("envelopekit", path=str(Path(sys.executable).parent)) or "envelopekit"
GOOD = orjson.dumps(
    orjson.loads((DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes())
)
PRETTY = (DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes()


def env(**extra: str) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("ENVELOPEKIT_")}
    return {**found, **extra}


def run(
    *args: str | bytes, stdin: bytes = b"", user: int | None = None, **extra: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [ENTRY, *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env=env(**extra),
        check=False,
        user=user,
    )


def shell(script: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["sh", "-c", script], capture_output=True, cwd=ROOT, env=env(EK=ENTRY), check=False
    )


def no_traceback(done: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can enter (pytest's own tmp dirs are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="ek-cli-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def unprivileged(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI where file permissions apply: as root, without the capabilities that skip
    them (``setpriv`` drops them from the bounding set, so the executed program lacks them)."""
    command = [ENTRY, *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None, "setpriv (util-linux) is needed to test permissions as root"
        command = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", *command]
    return subprocess.run(command, capture_output=True, cwd=ROOT, env=env(), check=False)


# --- bounded memory -------------------------------------------------------------------------


def peak_rss_kib(proc: subprocess.Popen[bytes]) -> int:
    """The child's peak resident set until it exits, in KiB (its stdout and stderr must not
    fill their pipes meanwhile: send them to files, or keep them short).

    The child's own peak (VmHWM of its image after exec); rusage would also count the pages a
    fork shares with this (large) test process before the exec.
    """
    peak_kib = 0
    while proc.poll() is None:
        with suppress(OSError, StopIteration):
            status = Path(f"/proc/{proc.pid}/status").read_text()
            line = next(x for x in status.splitlines() if x.startswith("VmHWM"))
            peak_kib = max(peak_kib, int(line.split()[1]))
        time.sleep(0.02)
    return peak_kib


def test_a_huge_line_is_too_large_in_flat_memory() -> None:
    size = 300 * 1024 * 1024
    producer = subprocess.Popen(["head", "-c", str(size), "/dev/zero"], stdout=subprocess.PIPE)
    assert producer.stdout is not None
    proc = subprocess.Popen(
        [ENTRY, "validate", "--format", "json", "-"],
        stdin=producer.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    producer.stdout.close()
    peak_kib = peak_rss_kib(proc)
    out, err = proc.communicate()
    producer.wait()
    assert proc.returncode == 1, err
    line = orjson.loads(out)
    assert line["source"] == "<stdin>:1"
    assert [v["rule"] for v in line["violations"]] == ["message.too_large"]
    assert line["violations"][0]["message"] == f"{size} bytes exceeds 1048576."
    assert 0 < peak_kib < 200 * 1024, f"peak RSS {peak_kib} KiB for a {size}-byte line"


def test_a_large_json_file_is_read_only_to_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.write(b'{"a":"')
        out.truncate(64 * 1024 * 1024)
    done = run("validate", "--format", "json", str(big), ENVELOPEKIT_MAX_MESSAGE_BYTES="1000")
    assert done.returncode == 1
    line = orjson.loads(done.stdout)
    assert line["violations"][0]["rule"] == "message.too_large"
    assert line["violations"][0]["message"] == f"{64 * 1024 * 1024} bytes exceeds 1000."


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("limit", [str(1 << 36), str((1 << 63) - 1)], ids=["64GiB", "int64-max"])
def test_a_limit_of_no_limit_reads_as_any_limit(tmp_path: Path, limit: str, jobs: str) -> None:
    # read(limit + 1) set aside the limit before reading a byte (MemoryError), and readline's
    # limit + 2 did not fit an index (OverflowError).
    document = tmp_path / "one.json"
    document.write_bytes(PRETTY)
    feed = tmp_path / "feed.ndjson"
    feed.write_bytes(b"\n".join([GOOD, b"{not json"] * 3) + b"\n" + GOOD * 2)
    for argument, stdin in [(str(document), b""), (str(feed), b""), ("-", feed.read_bytes())]:
        done = run(
            "validate", "--jobs", jobs, argument, stdin=stdin, ENVELOPEKIT_MAX_MESSAGE_BYTES=limit
        )
        no_traceback(done)
        usual = run("validate", "--jobs", jobs, argument, stdin=stdin)
        assert (done.returncode, done.stdout) == (usual.returncode, usual.stdout)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("MAX_MESSAGE_BYTES", "abc", "Input should be a valid integer"),
        ("DUPLICATE_KEYS", "REFUSE", "Input should be 'allow', 'warn' or 'refuse'"),
        ("MAX_DEPTH", "0", "Input should be greater than or equal to 1"),
        # Bytes that are not UTF-8 (a lone surrogate to Python): no message could carry them.
        *(
            (variable, "desk-\udcff", "Input should be a valid string, unable to parse raw data")
            for variable in ("SOM_SYSTEM_TYPE", "MATRIX_FROM")
        ),
    ],
)
@pytest.mark.parametrize("command", ["validate", "redrive"])
def test_a_bad_setting_in_the_environment_is_a_usage_error(
    command: str, variable: str, value: str, said: str
) -> None:
    # Exit 1 would read as "a message is invalid" to a gate; a traceback tells a user nothing.
    options = ["--duplicate-keys", "warn"] if command == "validate" else ["--dry-run"]
    path = str(DATA / "babelqueue" / "fixtures" / "order-created.json")
    done = subprocess.run(
        [ENTRY, command, *options, path],
        capture_output=True,
        env=env(**{f"ENVELOPEKIT_{variable}": value}),
        check=False,
    )
    no_traceback(done)
    assert done.returncode == 2
    prefix = "envelopekit: " if command == "validate" else "envelopekit redrive: "
    assert done.stderr.startswith(
        f"{prefix}bad setting in the environment: ENVELOPEKIT_{variable}={value!r}: {said}".encode()
    )
    assert done.stderr.count(b"\n") == 1 and done.stderr.endswith(b"\n")


@pytest.mark.parametrize(
    "arguments",
    [
        ["validate", ""],
        ["validate", "-", ""],
        ["redrive", "", "--dry-run"],
        ["schema", "--out", ""],
    ],
    ids=["validate", "validate-among-others", "redrive", "schema-out"],
)
def test_an_empty_path_is_a_usage_error_not_the_working_directory(
    tmp_path: Path, arguments: list[str]
) -> None:
    # Path("") is ".": an unset variable (`validate "$FEED"`) read every file below, and
    # `schema --out ""` wrote into the working directory.
    (tmp_path / "feed.ndjson").write_bytes(GOOD + b"\n" + GOOD + b"\n")
    done = subprocess.run(
        [ENTRY, *arguments], capture_output=True, cwd=tmp_path, env=env(), check=False
    )
    no_traceback(done)
    assert done.returncode == 2
    assert b"an empty path names no " in done.stderr
    assert done.stdout == b""
    assert [path.name for path in tmp_path.iterdir()] == ["feed.ndjson"]


# --- Ctrl-C, closed streams, a full disk ------------------------------------------------------


def wait_until(ready: Callable[[], bool], timeout: float = 120.0) -> None:
    """Poll the child's /proc entries (a loaded machine may take seconds to start Python)."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "the child never got there"
        time.sleep(0.05)


def read_bytes(pid: int) -> int:
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["rchar"])


def test_ctrl_c_prints_the_summary_so_far_and_exits_130() -> None:
    proc = subprocess.Popen(
        [ENTRY, "validate", "--spec", "babelqueue", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(GOOD + b"\n" + GOOD + b"\n" + b"{broken\n")
    proc.stdin.flush()
    # Past start-up and the three verdicts, it waits for more on the pipe, which stays open.
    wait_until(lambda: "pipe" in Path(f"/proc/{proc.pid}/wchan").read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"3 messages: 2 valid, 1 invalid" in out
    assert b"interrupted" in err
    assert b"Traceback" not in err


def interrupted_on_dev_zero(*args: str) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """The command line on an endless line, interrupted once it has read 256 MiB of it.

    Returns the run, and its ``/proc/<pid>/status`` just before the interrupt.
    """
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.Popen(
            [ENTRY, *args, "-"],
            stdin=zero,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env(),
        )
        # Well past start-up: reading /dev/zero (imports read a few MiB, not 256).
        wait_until(lambda: read_bytes(proc.pid) > 256 * 1024 * 1024)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), status


def status_kib(status: str, field: str) -> int:
    """A ``/proc/<pid>/status`` field in KiB (``VmRSS``, ``VmHWM``)."""
    return int(next(x for x in status.splitlines() if x.startswith(field + ":")).split()[1])


def test_ctrl_c_on_an_endless_line_exits_130() -> None:
    done, status = interrupted_on_dev_zero("validate")
    out, err = done.stdout, done.stderr
    assert status_kib(status, "VmRSS") < 200 * 1024
    assert done.returncode == 130, err
    assert b"0 messages" in out
    assert b"Traceback" not in err


def test_closed_stdin() -> None:
    done = shell('"$EK" validate - <&-')
    assert done.returncode == 2
    assert done.stderr == b"envelopekit: standard input is closed\n"


def test_closed_stdout() -> None:
    done = shell(f'"$EK" validate {DATA}/babelqueue/fixtures/order-created.json >&-')
    assert done.returncode == 2
    assert done.stderr == b"envelopekit: standard output is closed\n"


def test_a_full_disk() -> None:
    done = shell(f'"$EK" validate {DATA}/babelqueue/fixtures >/dev/full')
    assert done.returncode == 2
    assert done.stderr == b"envelopekit: cannot write the output: No space left on device\n"


SCHEMAS = ROOT / "src" / "envelopekit" / "schemas" / "babelqueue"


@pytest.mark.parametrize(
    "command",
    [
        "schema",
        "asyncapi --spec som",
        f"compat {SCHEMAS}/envelope.schema.json {SCHEMAS}/envelope.schema.json",
        f"redrive --kept /dev/null {DATA}/babelqueue/fixtures/order-created.json",
    ],
    ids=["schema", "asyncapi", "compat", "redrive"],
)
def test_a_full_disk_is_a_message_for_every_command(command: str) -> None:
    done = shell(f'"$EK" {command} >/dev/full')
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr.endswith(b"envelopekit: cannot write the output: No space left on device\n")


@pytest.mark.parametrize(
    "command",
    [
        f"validate {DATA}/babelqueue/fixtures/order-created.json",
        "schema",
        "schema --spec matrix",
        "asyncapi --spec som",
        "asyncapi --spec matrix",
        f"compat {SCHEMAS}/envelope.schema.json {SCHEMAS}/envelope.schema.json",
        f"redrive --kept /dev/null {DATA}/babelqueue/fixtures/order-created.json",
    ],
    ids=[
        "validate",
        "schema",
        "schema-one-spec",
        "asyncapi",
        "asyncapi-matrix",
        "compat",
        "redrive",
    ],
)
def test_a_reader_gone_before_the_output_is_status_141_for_every_command(command: str) -> None:
    # The read end closed before anything is written: every write is EPIPE, whatever the size.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [ENTRY, *command.split()],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=env(),
            check=False,
        )
    finally:
        os.close(write_end)
    no_traceback(done)
    assert (done.returncode, done.stderr) == (141, b"")


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (f"validate --format json {DATA}/babelqueue/fixtures/order-created.json", 0),
        (f"validate {DATA}/babelqueue/fixtures/order-created.json", 0),
        ("validate no/such.json", 2),
        (f"redrive --kept /dev/null {DATA}/babelqueue/fixtures/order-created.json", 0),
    ],
    ids=["json-summary", "text", "usage-error", "redrive"],
)
@pytest.mark.parametrize("stderr", ["2>/dev/full", "2>&-"], ids=["full", "closed"])
def test_messages_that_cannot_be_written_leave_the_exit_status(
    command: str, status: int, stderr: str
) -> None:
    # A summary (or a usage message) that cannot be written must not turn into status 1.
    done = shell(f'"$EK" {command} >/dev/null {stderr}')
    assert done.returncode == status


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_reader_that_goes_away_is_status_141(tmp_path: Path, jobs: str) -> None:
    feed = tmp_path / "feed.ndjson"
    feed.write_bytes((GOOD + b"\n") * 20_000 + b"{broken\n")  # past any pipe's buffer
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f'"$EK" validate --jobs {jobs} "{feed}" | head -n 1'],
        capture_output=True,
        env=env(EK=ENTRY),
        check=False,
    )
    # Not 0 ("all valid"): the run stopped before the broken line was judged.
    assert done.returncode == 141
    assert done.stdout == f"valid   {feed}:1 (babelqueue)\n".encode()
    assert done.stderr == b""


def test_schema_out_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    done = run("schema", "--out", str(tmp_path / "taken" / "schemas"))
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr.startswith(b"envelopekit: cannot write ")
    assert b"Not a directory" in done.stderr


# --- paths ------------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    name = os.fsencode(tmp_path) + b"/order-\xff.json"
    with open(name, "wb") as out:
        out.write(GOOD)
    text = run("validate", name)
    no_traceback(text)
    assert text.returncode == 0
    assert b"order-\\xff.json" in text.stdout
    lines = run("validate", "--format", "json", name)
    assert lines.returncode == 0
    assert orjson.loads(lines.stdout)["source"].endswith("/order-\\xff.json")


def test_permission_denied_on_a_file(shared_dir: Path) -> None:
    locked = shared_dir / "locked.json"
    locked.write_bytes(GOOD)
    locked.chmod(0)
    done = unprivileged("validate", str(locked))
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr == f"envelopekit: cannot read {locked}: Permission denied\n".encode()
    assert done.stdout == b""


def test_an_unreadable_subdirectory_is_reported_before_validating(shared_dir: Path) -> None:
    (shared_dir / "a.json").write_bytes(GOOD)
    hidden = shared_dir / "z-private"
    hidden.mkdir()
    (hidden / "b.json").write_bytes(GOOD)
    hidden.chmod(0)
    done = unprivileged("validate", str(shared_dir))
    no_traceback(done)
    assert done.returncode == 2
    assert (
        done.stderr == f"envelopekit: cannot read directory {hidden}: Permission denied\n".encode()
    )
    assert done.stdout == b""


@pytest.mark.parametrize("kind", ["broken-link", "link-loop", "fifo"])
def test_a_message_file_below_a_directory_that_cannot_be_read_is_reported(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "a.json").write_bytes(GOOD)
    odd = tmp_path / "z.json"
    if kind == "broken-link":
        odd.symlink_to(tmp_path / "gone.json")
        said = f"no such file: {odd} (a broken symbolic link)"
    elif kind == "link-loop":
        odd.symlink_to(tmp_path / "y.json")
        (tmp_path / "y.json").symlink_to(odd)
        said = f"cannot read {tmp_path / 'y.json'}: Too many levels of symbolic links"
    else:
        os.mkfifo(odd)  # nobody writes to it: reading it would wait for ever
        said = (
            f"cannot read {odd}: not a regular file "
            "(a FIFO or a device is read only when named on its own)"
        )
    done = run("validate", str(tmp_path))
    no_traceback(done)
    assert done.returncode == 2
    assert done.stderr == f"envelopekit: {said}\n".encode()
    assert done.stdout == b""


def test_links_to_directories_are_followed_each_directory_once(tmp_path: Path) -> None:
    root = tmp_path / "messages"
    (root / "a").mkdir(parents=True)
    (root / "a" / "one.json").write_bytes(GOOD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "two.json").write_bytes(GOOD)
    (root / "b").symlink_to(elsewhere)
    (root / "c").symlink_to(elsewhere)  # the same directory again
    (root / "a" / "up").symlink_to(root)  # a loop
    (root / "a" / "self").symlink_to(root / "a")
    done = run("validate", "--format", "json", str(root))
    assert done.returncode == 0, done.stderr
    assert [orjson.loads(x)["source"] for x in done.stdout.splitlines()] == [
        str(root / "a" / "one.json"),
        str(root / "b" / "two.json"),
    ]


def test_a_missing_path_after_good_ones_is_found_first() -> None:
    good = str(DATA / "babelqueue" / "fixtures" / "order-created.json")
    done = run("validate", good, good, "no/such.json")
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr == b"envelopekit: no such file or directory: no/such.json\n"


def test_a_read_error_part_way_keeps_the_verdicts_and_the_summary(tmp_path: Path) -> None:
    feed = tmp_path / "feed.ndjson.gz"
    whole = gzip.compress((GOOD + b"\n") * 3)
    feed.write_bytes(whole[:-8])  # the trailer cut off: the lines decode, the end fails
    done = run("validate", "--format", "json", str(feed))
    no_traceback(done)
    assert done.returncode == 2
    assert [orjson.loads(x)["source"] for x in done.stdout.splitlines()] == [
        f"{feed}:{n}" for n in (1, 2, 3)
    ]
    assert b"3 messages: 3 valid, 0 invalid" in done.stderr
    assert done.stderr.startswith(b"3 messages: 3 valid, 0 invalid")
    assert f"\nenvelopekit: cannot read {feed}: ".encode() in done.stderr


# --- streams ----------------------------------------------------------------------------------


def test_dev_stdin_is_read_as_a_stream() -> None:
    done = run("validate", "/dev/stdin", stdin=GOOD + b"\n" + GOOD + b"\n")
    assert done.returncode == 0, done.stderr
    assert b"2 messages: 2 valid" in done.stdout


def test_process_substitution_is_read_as_a_stream() -> None:
    if shutil.which("bash") is None:
        pytest.fail("bash is needed for process substitution")
    fixture = DATA / "babelqueue" / "fixtures" / "order-created.json"
    done = subprocess.run(
        ["bash", "-c", f'"$EK" validate <(cat {fixture})'],
        capture_output=True,
        env=env(EK=ENTRY),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"1 message: 1 valid" in done.stdout


def test_a_fifo_is_read_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("wb") as out:
            out.write(GOOD + b"\n" + b"{bad\n")

    writer = threading.Thread(target=feed)
    writer.start()
    done = run("validate", "--format", "json", str(fifo))
    writer.join()
    assert done.returncode == 1, done.stderr
    assert [orjson.loads(x)["ok"] for x in done.stdout.splitlines()] == [True, False]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


# --- NDJSON by content ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["feed.json", "feed.txt", "feed.log", "feed"])
def test_ndjson_is_recognised_whatever_the_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\n" + GOOD + b"\n\n" + GOOD + b"\n{bad\n")
    done = run("validate", "--format", "json", str(path))
    assert done.returncode == 1, done.stderr
    lines = [orjson.loads(x) for x in done.stdout.splitlines()]
    assert [(x["source"], x["ok"]) for x in lines] == [
        (f"{path}:2", True),
        (f"{path}:4", True),
        (f"{path}:5", False),
    ]


@pytest.mark.parametrize("name", ["feed.txt", "feed.ndjson", "feed"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_byte_order_mark_and_crlf_do_not_hide_ndjson(
    tmp_path: Path, name: str, jobs: str
) -> None:
    # As Windows tools write it: a UTF-8 byte order mark, lines ending in CR LF.
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + GOOD + b"\r\n" + GOOD + b"\r\n")
    done = run("validate", "--jobs", jobs, "--format", "json", str(path))
    lines = [orjson.loads(x) for x in done.stdout.splitlines()]
    # The lines are told apart; the first is json.invalid, as check reads it.
    assert [(x["source"], [v["rule"] for v in x["violations"]]) for x in lines] == [
        (f"{path}:1", ["json.invalid"]),
        (f"{path}:2", []),
    ]
    import envelopekit as ek

    assert ek.check(b"\xef\xbb\xbf" + GOOD).rules() == ["json.invalid"]


def test_a_pretty_printed_document_is_one_message(tmp_path: Path) -> None:
    path = tmp_path / "order.txt"
    path.write_bytes(PRETTY)
    done = run("validate", "--format", "json", str(path))
    assert done.returncode == 0, done.stdout
    assert [orjson.loads(x)["source"] for x in done.stdout.splitlines()] == [str(path)]
    piped = run("validate", "--format", "json", "-", stdin=PRETTY)
    assert [orjson.loads(x)["source"] for x in piped.stdout.splitlines()] == ["<stdin>"]


def test_the_read_flag_forces_either_reading(tmp_path: Path) -> None:
    feed = tmp_path / "feed.json"
    feed.write_bytes(GOOD + b"\n" + GOOD + b"\n")
    as_document = run("validate", "--format", "json", "--read", "json", str(feed))
    assert [orjson.loads(x)["violations"][0]["rule"] for x in as_document.stdout.splitlines()] == [
        "json.invalid"
    ]
    pretty = tmp_path / "order.json"
    pretty.write_bytes(PRETTY)
    as_lines = run("validate", "--format", "json", "--read", "ndjson", str(pretty))
    assert len(as_lines.stdout.splitlines()) == len([x for x in PRETTY.splitlines() if x.strip()])
    assert as_lines.returncode == 1


def test_gzip_is_decompressed_as_a_stream(tmp_path: Path) -> None:
    (tmp_path / "feed.ndjson.gz").write_bytes(gzip.compress((GOOD + b"\n") * 4))
    (tmp_path / "order.json.gz").write_bytes(gzip.compress(PRETTY))
    (tmp_path / "disguised.json").write_bytes(gzip.compress(GOOD))
    done = run("validate", "--format", "json", str(tmp_path))
    assert done.returncode == 0, done.stderr
    sources = [orjson.loads(x)["source"] for x in done.stdout.splitlines()]
    assert sources == [
        str(tmp_path / "disguised.json"),
        *(f"{tmp_path / 'feed.ndjson.gz'}:{n}" for n in range(1, 5)),
        str(tmp_path / "order.json.gz"),
    ]
    piped = run("validate", "-", stdin=gzip.compress((GOOD + b"\n") * 2))
    assert b"2 messages: 2 valid" in piped.stdout


@pytest.mark.parametrize("spans", [False, True])
def test_the_progress_of_a_file_adds_up_to_its_size_gzip_in_compressed_bytes(
    tmp_path: Path, spans: bool
) -> None:
    # The bar's total is the inputs' sizes on disk: counted decompressed (twice the size here),
    # a gzip file's progress filled the bar at once.
    import base64

    from envelopekit import _cli_input

    text = b"".join(
        orjson.dumps({"note": base64.b64encode(os.urandom(600)).decode()}) + b"\n"
        for _ in range(1500)
    )
    (tmp_path / "feed.ndjson").write_bytes(text)
    (tmp_path / "feed.ndjson.gz").write_bytes(gzip.compress(text))
    (tmp_path / "order.json").write_bytes(PRETTY)
    (tmp_path / "order.json.gz").write_bytes(gzip.compress(PRETTY))
    steps: dict[str, list[int]] = {}
    for name in ("feed.ndjson", "feed.ndjson.gz", "order.json", "order.json.gz"):
        path = tmp_path / name
        source = _cli_input.Input(name, path, None)
        steps[name] = []
        items = list(
            _cli_input.chunks([source], None, 1 << 20, spans=spans, advance=steps[name].append)
        )
        assert sum(steps[name]) == source.size == path.stat().st_size, name
        assert len(steps[name]) == len(items) + 1  # as each item came, then what followed
        assert min(steps[name]) >= 0
    # A large gzip file advances as it is read, not all at the end.
    assert sum(step > 0 for step in steps["feed.ndjson.gz"][:-1]) > 1


# --- lines as check reads them, and nothing to read ---------------------------------------------


@pytest.mark.parametrize("ending", [b"\x0b", b"\x0c"], ids=["vt", "ff"])
def test_a_line_ends_as_check_reads_it(ending: bytes) -> None:
    import envelopekit as ek

    assert ek.check(GOOD + ending).rules() == ["json.invalid"]
    done = run("validate", "--format", "json", "-", stdin=GOOD + b"\n" + GOOD + ending + b"\n")
    lines = [orjson.loads(x) for x in done.stdout.splitlines()]
    assert [(x["ok"], [v["rule"] for v in x["violations"]]) for x in lines] == [
        (True, []),
        (False, ["json.invalid"]),
    ]


def test_empty_file_stdin_and_directory_alike(tmp_path: Path) -> None:
    empty_file = tmp_path / "empty.json"
    empty_file.write_bytes(b"")
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    outcomes = [
        run("validate", str(empty_file)),
        run("validate", "-", stdin=b""),
        run("validate", "-", stdin=b"\n \n"),
        run("validate", str(empty_dir)),
    ]
    names = [str(empty_file), "<stdin>", "<stdin>", str(empty_dir)]
    for done, name in zip(outcomes, names, strict=True):
        assert done.returncode == 2
        assert done.stdout == b""
        assert done.stderr == f"envelopekit: no messages in {name}\n".encode()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_empty_input_among_others_is_said_after_their_verdicts(
    tmp_path: Path, jobs: str
) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(GOOD)
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.json").write_bytes(GOOD)
    (folder / "blank.ndjson").write_bytes(b"\n \n\t\n")  # read as lines by its name
    done = run("validate", "--jobs", jobs, str(good), str(empty), str(folder), "-", stdin=b"\n\n")
    assert done.returncode == 2
    assert b"2 messages: 2 valid, 0 invalid" in done.stdout
    assert done.stderr == (
        f"envelopekit: no messages in {empty}, {folder / 'blank.ndjson'}, <stdin>\n".encode()
    )


# --- NDJSON read in blocks, as line by line ---------------------------------------------------


def _by_line(data: bytes, limit: int) -> list[tuple[str, bytes, int]]:
    """The reading before blocks: ``_line`` to the end, each line a message or skipped."""
    from envelopekit import _cli_input

    stream = io.BytesIO(data)
    found = []
    number = 1
    while (line := _cli_input._line(stream, limit, number)) is not None:
        if line.body or line.size > limit:
            # A too-large message's bytes are never validated: only its size is reported.
            found.append((f"in:{number}", line.body if line.size <= limit else b"", line.size))
        number += 1
    return found


_LINE_BYTES = st.sampled_from([b"{}", b" ", b"\r", b"\t", b"x", b"\x0b", b'{"a":1}', b"\n"])


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(_LINE_BYTES, max_size=60).map(b"".join),
    limit=st.integers(1, 12),
    block=st.integers(1, 16),
)
def test_blocks_split_as_lines_are_read(data: bytes, limit: int, block: int) -> None:
    from envelopekit import _cli_input

    source = _cli_input.Input("in", None, True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cli_input, "BLOCK", block)
        read = list(_cli_input.messages([source], io.BytesIO(data), limit))
    assert [(m.source, m.raw if m.size <= limit else b"", m.size) for m in read] == _by_line(
        data, limit
    )
    assert all(len(m.raw) <= limit + 1 for m in read)


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(_LINE_BYTES, max_size=60).map(b"".join),
    limit=st.integers(1, 12),
    block=st.integers(1, 16),
    lines=st.sampled_from([True, False, None]),
)
def test_verbatim_and_spill_give_back_each_message_as_read_in_order(
    data: bytes, limit: int, block: int, lines: bool | None
) -> None:
    from envelopekit import _cli_input

    source = _cli_input.Input("in", None, lines)
    spilled: list[bytes] = []
    found: list[tuple[str, bytes, int]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cli_input, "BLOCK", block)
        plain = list(_cli_input.messages([source], io.BytesIO(data), limit))
        for message in _cli_input.messages(
            [source], io.BytesIO(data), limit, verbatim=True, spill=spilled.append
        ):
            whole = b"".join(spilled)
            spilled.clear()
            if message.size > limit:
                # Handed to spill whole, in chunks, just before the message came.
                assert whole[: limit + 1] == message.raw
                found.append((message.source, whole, message.size))
            else:
                assert whole == b""
                found.append((message.source, message.raw, message.size))
    # The same messages as the plain reading, each exactly the bytes of its line (or input).
    assert [(s, size) for s, _, size in found] == [(m.source, m.size) for m in plain]
    split = data.split(b"\n")
    for where, raw, size in found:
        assert len(raw) == size
        number = where.partition(":")[2]
        assert raw == (split[int(number) - 1] if number else data)


@pytest.mark.parametrize(
    "text",
    ["\u2028" * 100_000, "a\u2029\u0085\x7f\u009fé€" * 20_000, "£\u0085" * 50_000],
    ids=["line-separators", "mixed", "latin-1-and-next-lines"],
)
def test_a_json_line_dense_with_characters_to_escape_costs_no_python_step_each(text: str) -> None:
    # Each was escaped by a Python callback of a regex substitution: a JSON line of a MiB of
    # U+2028 (a dead letter's body, redrive --records) took 154 ms, orjson.loads of it 0.8 ms.
    raw = orjson.dumps({"body": text})
    escaped = {code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0), 0x2028, 0x2029)}
    expected = json.dumps({"body": text}, ensure_ascii=False, separators=(",", ":"))
    assert one_line_json(raw) == expected.translate(escaped).encode()
    assert _lines_run(lambda: one_line_json(raw), _cli_input.__file__) < 200
