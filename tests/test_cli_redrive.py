"""`envelopekit redrive`, the real executable in a subprocess, against the official redrive."""

from __future__ import annotations

import gzip
import logging
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
from babelqueue.redrive import redrive as official_redrive
from babelqueue.transport import InMemoryTransport

from envelopekit.babelqueue import BabelEnvelope
from tests.conftest import DATA
from tests.test_cli import run
from tests.test_cli_input import (
    ENTRY,
    env,
    interrupted_on_dev_zero,
    peak_rss_kib,
    shell,
    status_kib,
    wait_until,
)
from tests.test_cli_input import run as run_with

logging.getLogger("babelqueue.codec").setLevel(logging.ERROR)

FIXTURES = DATA / "babelqueue" / "fixtures"


def _dead(
    urn: str, queue: str, reason: str = "failed", failed_at: int = 1_750_000_000_000
) -> bytes:
    env = BabelEnvelope.create(urn, {"n": 1, "s": "é/\u2028"}, queue=queue).retried()
    return env.dead_lettered(reason, error="boom", failed_at=failed_at).to_json()  # type: ignore[arg-type]


ORDERS = _dead("urn:babel:orders:created", "orders")
USERS = _dead(
    "urn:babel:users:registered", "users", reason="unknown_urn", failed_at=1_760_000_000_000
)
LEGACY = orjson.dumps(orjson.loads((FIXTURES / "dead-lettered.json").read_bytes()))
NOT_JSON = b"{not json   "
SCHEMA_V2 = orjson.dumps(
    orjson.loads((FIXTURES / "invalid-unknown-schema-version.json").read_bytes())
)
FEED = [ORDERS, USERS, NOT_JSON, LEGACY + b"  \r", SCHEMA_V2]


def _feed(tmp_path: Path) -> Path:
    path = tmp_path / "orders.dlq.ndjson"
    path.write_bytes(b"\n".join(FEED) + b"\n\n")
    return path


def _official(bodies: list[bytes], **options: object) -> list[bytes]:
    transport = InMemoryTransport()
    for body in bodies:
        transport.publish("dlq", body.decode())
    official_redrive(transport, "dlq", **options)  # type: ignore[arg-type]
    out = []
    for queue in list(transport._queues):
        if queue != "dlq":
            while (message := transport.pop(queue)) is not None:
                out.append(message.body.encode())
    return out


def test_redrives_the_selected_and_keeps_the_rest_byte_identical(tmp_path: Path) -> None:
    kept = tmp_path / "kept.ndjson"
    done = run(
        "redrive", str(_feed(tmp_path)), "--kept", str(kept), "--urn", "urn:babel:orders:created"
    )
    assert done.returncode == 1, done.stderr  # two lines are not v1 envelopes
    assert done.stdout.splitlines() == _official([ORDERS, LEGACY])
    assert kept.read_bytes() == b"\n".join([USERS, NOT_JSON, SCHEMA_V2]) + b"\n"
    report = done.stderr.decode()
    assert "orders.dlq.ndjson:1 urn:babel:orders:created -> orders" in report
    assert "kept" in report and "json.invalid" in report and "schema_version.unsupported" in report
    assert "5 messages: 2 redriven, 3 kept, 2 not BabelQueue v1 envelopes" in report


@pytest.mark.parametrize(
    ("job", "asked"),
    [
        (" urn:babel:orders:created\t", "urn:babel:orders:created"),
        ("urn:babel:orders:created", " urn:babel:orders:created "),
    ],
    ids=["padded-job", "padded-option"],
)
def test_the_urn_filter_reads_a_job_as_the_router_does(
    tmp_path: Path, job: str, asked: str
) -> None:
    # A producer that does not strip the URN (the job as written), or an option typed with a
    # space: the Router routes the message to the URN's handler, so the filter selects it too.
    body = ORDERS.replace(b'"job":"urn:babel:orders:created"', orjson.dumps({"job": job})[1:-1])
    assert orjson.loads(body)["job"] == job
    kept = tmp_path / "kept.ndjson"
    done = run("redrive", "-", "--kept", str(kept), "--urn", asked, stdin=body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == _official([body])
    assert kept.read_bytes() == b""


def test_kept_lines_are_written_back_exactly_as_read(tmp_path: Path) -> None:
    kept = tmp_path / "kept.ndjson"
    done = run("redrive", str(_feed(tmp_path)), "--kept", str(kept), "--reason", "nope")
    assert done.stdout == b""
    assert kept.read_bytes() == b"\n".join(FEED) + b"\n"  # the trailing "  \r" included


def test_stdin_and_filters_by_reason_and_time(tmp_path: Path) -> None:
    kept = tmp_path / "kept.ndjson"
    feed = b"\n".join([ORDERS, USERS, LEGACY])
    by_reason = run("redrive", "-", "--kept", str(kept), "--reason", "unknown_urn", stdin=feed)
    assert by_reason.returncode == 0, by_reason.stderr
    assert by_reason.stdout.splitlines() == _official([USERS])
    since = run("redrive", "--kept", str(kept), "--since", "2025-06-15T15:06:40Z", stdin=feed)
    assert since.stdout.splitlines() == _official([ORDERS, USERS])
    until = run("redrive", "--kept", str(kept), "--until", "1750000000001", stdin=feed)
    assert until.stdout.splitlines() == _official([ORDERS, LEGACY])
    window = run(
        "redrive",
        "--kept",
        str(kept),
        "--since",
        "1750000000001",
        "--until",
        "2026-01-01",
        stdin=feed,
    )
    assert window.stdout.splitlines() == _official([USERS])
    assert kept.read_bytes() == b"\n".join([ORDERS, LEGACY]) + b"\n"


def test_to_queue_max_and_records_with_bypass(tmp_path: Path) -> None:
    kept = tmp_path / "kept.ndjson"
    feed = b"\n".join([ORDERS, USERS, LEGACY])
    done = run(
        "redrive",
        "--kept",
        str(kept),
        "--to-queue",
        "sandbox",
        "--max",
        "2",
        "--records",
        "--bypass",
        stdin=feed,
    )
    assert done.returncode == 0, done.stderr
    records = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [r["queue"] for r in records] == ["sandbox", "sandbox"]
    assert all(r["headers"] == {"bq-replay-bypass": "1"} for r in records)
    expected = _official([ORDERS, USERS], to_queue="sandbox", bypass=True)
    assert [r["body"].encode() for r in records] == expected
    assert kept.read_bytes() == LEGACY + b"\n"


def test_dry_run_writes_only_the_plan(tmp_path: Path) -> None:
    out = tmp_path / "out.ndjson"
    done = run("redrive", str(_feed(tmp_path)), "--dry-run", "--out", str(out))
    assert done.returncode == 1
    assert not out.exists()
    report = done.stderr.decode()
    assert "would redrive" in report and "-> users" in report
    assert "5 messages: 3 would be redriven, 5 kept, 2 not BabelQueue v1 envelopes" in report


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    feed = str(_feed(tmp_path))
    no_kept = run("redrive", feed)
    assert no_kept.returncode == 2 and b"--kept FILE is required" in no_kept.stderr
    bypass = run("redrive", feed, "--kept", str(tmp_path / "k"), "--bypass")
    assert bypass.returncode == 2 and b"--records" in bypass.stderr
    bad_time = run("redrive", feed, "--kept", str(tmp_path / "k"), "--since", "yesterday")
    assert bad_time.returncode == 2 and b"ISO 8601" in bad_time.stderr
    absent = tmp_path / "absent.ndjson"
    missing = run("redrive", str(absent), "--kept", str(tmp_path / "k"))
    assert missing.returncode == 2
    assert missing.stderr == f"envelopekit redrive: no such file or directory: {absent}\n".encode()
    assert not (tmp_path / "k").exists()  # the feed is found before anything is written
    negative = run("redrive", feed, "--kept", str(tmp_path / "k"), "--max", "-1")
    assert negative.returncode == 2
    no_queue = run("redrive", feed, "--kept", str(tmp_path / "k"), "--to-queue", "")
    assert no_queue.returncode == 2
    assert no_queue.stderr == b"envelopekit redrive: --to-queue: an empty name names no queue\n"
    assert not (tmp_path / "k").exists()


@pytest.mark.parametrize(
    ("out", "kept", "said"),
    [
        ("o.ndjson", "{feed}", "--kept {feed} is the input {feed}"),
        ("{feed}", "k.ndjson", "--out {feed} is the input {feed}"),
        ("k.ndjson", "k.ndjson", "--kept k.ndjson is --out"),
        ("k.ndjson", "sub/../k.ndjson", "--kept sub/../k.ndjson is --out"),
        ("o.ndjson", "dlq/kept.ndjson", "--kept dlq/kept.ndjson is the input dlq/kept.ndjson"),
        ("o.ndjson", "", "--kept: an empty path names no file"),
    ],
    ids=[
        "kept-is-the-feed",
        "out-is-the-feed",
        "same-file",
        "same-file-by-another-name",
        "kept-inside-a-feed-directory",
        "empty-kept",
    ],
)
def test_an_output_that_is_an_input_or_the_other_output_is_refused_before_writing(
    tmp_path: Path, out: str, kept: str, said: str
) -> None:
    # Opening it would have emptied the feed before reading it, or two writers would have
    # overwritten each other's lines.
    feeds = tmp_path / "dlq"
    feeds.mkdir()
    feed = _feed(feeds)
    (feeds / "kept.ndjson").write_bytes(NOT_JSON + b"\n")  # a previous run's, read as a feed
    (tmp_path / "sub").mkdir()
    before = {path: path.read_bytes() for path in feeds.iterdir()}
    name = "dlq" if kept.startswith("dlq/") else f"dlq/{feed.name}"
    done = subprocess.run(
        [ENTRY, "redrive", name, "--out", out.format(feed=name), "--kept", kept.format(feed=name)],
        capture_output=True,
        cwd=tmp_path,
        env=env(),
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().startswith(f"envelopekit redrive: {said.format(feed=name)}")
    assert {path: path.read_bytes() for path in feeds.iterdir()} == before
    assert not (tmp_path / "o.ndjson").exists() and not (tmp_path / "k.ndjson").exists()


def test_what_came_from_the_input_is_escaped_in_the_report(tmp_path: Path) -> None:
    # A file name or a URN holding a newline printed a line that read as another decision;
    # an escape sequence reached the terminal.
    forged = "urn:babel:orders:created\nredriven forged:1 urn:babel:x:y -> \x1b[2Jq"
    body = _dead(forged, "orders")
    feed = tmp_path / "dlq\nkept forged:2 invalid.ndjson"
    feed.write_bytes(body + b"\n" + NOT_JSON + b"\n")
    done = run("redrive", str(feed), "--kept", str(tmp_path / "k"))
    assert done.returncode == 1, done.stderr
    report = done.stderr.decode()
    assert "\x1b" not in report
    name = str(feed).replace("\n", "\\n")
    urn = forged.replace("\n", "\\n").replace("\x1b", "\\x1b")
    assert report.splitlines() == [
        f"redriven {name}:1 {urn} -> orders",
        f"kept {name}:2 invalid json.invalid (document)",
        "2 messages: 1 redriven, 1 kept, 1 not BabelQueue v1 envelopes",
    ]
    missing = run("redrive", str(tmp_path / "no\x1b[2Jsuch"), "--kept", str(tmp_path / "k"))
    assert missing.returncode == 2
    assert b"\x1b" not in missing.stderr and b"no\\x1b[2Jsuch" in missing.stderr


@pytest.mark.parametrize("feed", ["-", ""], ids=["dash", "default"])
def test_closed_stdin_is_a_usage_error_not_a_traceback(feed: str) -> None:
    done = shell(f'"$EK" redrive --kept /dev/null {feed} <&-')
    assert done.returncode == 2
    assert done.stderr == b"envelopekit redrive: standard input is closed\n"


@pytest.mark.parametrize("full", ["--out", "--kept"])
def test_a_full_disk_under_out_or_kept_is_a_usage_error(tmp_path: Path, full: str) -> None:
    other = "--kept" if full == "--out" else "--out"
    done = run("redrive", str(_feed(tmp_path)), full, "/dev/full", other, str(tmp_path / "o"))
    assert b"Traceback" not in done.stderr
    assert done.returncode == 2
    assert done.stderr.endswith(
        b"envelopekit redrive: cannot write /dev/full: No space left on device\n"
    )


# --- messages too large to check: kept, in flat memory (issue 12) -----------------------------


def test_a_line_over_the_limit_is_kept_byte_for_byte_in_its_place(tmp_path: Path) -> None:
    # A 1000-byte limit: one long line inside the first block, one running past it (256 KiB).
    inside = b'{"pad":"' + b"x" * 3000 + b'"}  \r'
    past = b" " + b"\xff" * (600 * 1024) + b"\t"
    feed = tmp_path / "orders.dlq.ndjson"
    feed.write_bytes(b"\n".join([ORDERS, inside, NOT_JSON, past, USERS]) + b"\n")
    kept = tmp_path / "kept.ndjson"
    done = run_with("redrive", str(feed), "--kept", str(kept), ENVELOPEKIT_MAX_MESSAGE_BYTES="1000")
    assert done.returncode == 1, done.stderr
    assert kept.read_bytes() == b"\n".join([inside, NOT_JSON, past]) + b"\n"
    assert done.stdout.splitlines() == _official([ORDERS, USERS])
    report = done.stderr.decode().splitlines()
    assert report[1] == (
        f"kept {feed}:2 invalid message.too_large (document): "
        f"{len(inside)} bytes exceeds 1000. (copied)"
    )
    assert report[3].startswith(f"kept {feed}:4 invalid message.too_large (document): ")
    assert report[-1] == "5 messages: 2 redriven, 3 kept, 3 not BabelQueue v1 envelopes"


def test_a_json_file_over_the_limit_is_kept_as_read(tmp_path: Path) -> None:
    big = tmp_path / "dead.json"
    document = b'{\n  "data": "' + b"y" * 5000 + b'"\n}\n'
    big.write_bytes(document)
    kept = tmp_path / "kept.ndjson"
    done = run_with("redrive", str(big), "--kept", str(kept), ENVELOPEKIT_MAX_MESSAGE_BYTES="1000")
    assert done.returncode == 1
    assert kept.read_bytes() == document.replace(b"\n", b"\t") + b"\n"  # one line, as below
    assert f"kept {big} invalid message.too_large".encode() in done.stderr


def test_a_pretty_printed_json_file_is_kept_on_one_line_as_the_same_json(tmp_path: Path) -> None:
    # Copied with its line breaks, a document was many "messages" to the next reader of --kept,
    # each json.invalid. Its line feeds become tabs: JSON whitespace outside strings, and, as a
    # raw line feed, invalid inside one (the string "a<LF>b" stays invalid).
    feeds = tmp_path / "dlq"
    feeds.mkdir()
    pretty = orjson.dumps(orjson.loads(USERS), option=orjson.OPT_INDENT_2) + b"\n"
    valid = pretty.replace(b"\n", b"\r\n")  # written on Windows
    broken = b'{\n  "job": "a\nb"\n}\n'
    (feeds / "users.json").write_bytes(valid)
    (feeds / "broken.json").write_bytes(broken)
    kept = tmp_path / "kept.ndjson"
    done = run("redrive", str(feeds), "--kept", str(kept), "--urn", "urn:babel:nothing:here")
    assert done.returncode == 1, done.stderr
    lines = kept.read_bytes().split(b"\n")
    assert lines == [broken.replace(b"\n", b"\t"), valid.replace(b"\n", b"\t"), b""]
    assert orjson.loads(lines[1]) == orjson.loads(USERS)
    again = run("redrive", str(kept), "--kept", str(tmp_path / "again.ndjson"), "--dry-run")
    assert b"2 messages: 1 would be redriven, 2 kept, 1 not BabelQueue v1 envelopes" in again.stderr


def test_a_huge_line_is_copied_to_kept_in_flat_memory(tmp_path: Path) -> None:
    size = 300 * 1024 * 1024
    producer = subprocess.Popen(
        ["sh", "-c", f'printf "%s\\n" "$A"; head -c {size} /dev/zero; printf "\\n%s\\n" "$B"'],
        stdout=subprocess.PIPE,
        env=env(A=ORDERS.decode(), B=USERS.decode()),
    )
    assert producer.stdout is not None
    kept, out = tmp_path / "kept.ndjson", tmp_path / "out.ndjson"
    proc = subprocess.Popen(
        [ENTRY, "redrive", "--kept", str(kept), "--out", str(out), "-"],
        stdin=producer.stdout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env(),
    )
    producer.stdout.close()
    peak_kib = peak_rss_kib(proc)
    _, err = proc.communicate()
    producer.wait()
    assert proc.returncode == 1, err
    assert out.read_bytes().splitlines() == _official([ORDERS, USERS])
    assert f"kept <stdin>:2 invalid message.too_large (document): {size} bytes".encode() in err
    assert kept.stat().st_size == size + 1
    with kept.open("rb") as copied:  # a chunk at a time: the copy is as large as the line
        while chunk := copied.read(1 << 20):
            assert chunk.count(0) == len(chunk) or chunk == bytes(len(chunk) - 1) + b"\n"
    assert 0 < peak_kib < 200 * 1024, f"peak RSS {peak_kib} KiB for a {size}-byte line"


def test_ctrl_c_on_an_endless_line_prints_the_summary_and_exits_130() -> None:
    done, status = interrupted_on_dev_zero("redrive", "--kept", "/dev/null")
    out, err = done.stdout, done.stderr
    assert status_kib(status, "VmHWM") < 200 * 1024
    assert done.returncode == 130, err
    assert out == b""
    assert err == (
        b"0 messages: 0 redriven, 0 kept, 0 not BabelQueue v1 envelopes\n"
        b"envelopekit redrive: interrupted while a message too large to check was copied to "
        b"/dev/null: its last line there is incomplete\n"
    )


def test_ctrl_c_keeps_what_was_decided_and_prints_the_summary_so_far(tmp_path: Path) -> None:
    kept = tmp_path / "kept.ndjson"
    proc = subprocess.Popen(
        [ENTRY, "redrive", "--kept", str(kept), "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(b"\n".join([ORDERS, NOT_JSON, USERS]) + b"\n")
    proc.stdin.flush()
    # Past start-up and the three decisions, it waits for more on the pipe, which stays open.
    wait_until(lambda: "pipe" in Path(f"/proc/{proc.pid}/wchan").read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert out.splitlines() == _official([ORDERS, USERS])
    assert kept.read_bytes() == NOT_JSON + b"\n"
    assert err.endswith(
        b"3 messages: 2 redriven, 1 kept, 1 not BabelQueue v1 envelopes\n"
        b"envelopekit redrive: interrupted\n"
    )
    assert b"Traceback" not in err


def test_a_gzip_feed_and_a_directory_of_feeds_are_read_as_validate_reads_them(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "dlq"
    folder.mkdir()
    (folder / "a.ndjson.gz").write_bytes(gzip.compress(ORDERS + b"\n" + NOT_JSON + b"\n"))
    (folder / "b.json").write_bytes(USERS)
    (folder / "notes.txt").write_bytes(b"not a feed")
    kept = tmp_path / "kept.ndjson"
    done = run("redrive", str(folder), "--kept", str(kept))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == _official([ORDERS, USERS])
    assert kept.read_bytes() == NOT_JSON + b"\n"  # decompressed, as it was read
    assert f"redriven {folder / 'b.json'} urn:babel:users:registered".encode() in done.stderr


def test_a_dry_run_names_a_message_over_the_limit_without_copying_it(tmp_path: Path) -> None:
    feed = tmp_path / "feed.ndjson"
    feed.write_bytes(ORDERS + b"\n" + b"x" * 5_000 + b"\n")
    done = run_with("redrive", str(feed), "--dry-run", ENVELOPEKIT_MAX_MESSAGE_BYTES="1000")
    assert done.returncode == 1
    assert done.stdout == b""
    assert done.stderr.decode().splitlines()[1] == (
        f"kept {feed}:2 invalid message.too_large (document): 5000 bytes exceeds 1000."
    )
