"""`envelopekit redrive`, the real executable in a subprocess, against the official redrive."""

from __future__ import annotations

import logging
from pathlib import Path

import orjson
import pytest
from babelqueue.redrive import redrive as official_redrive
from babelqueue.transport import InMemoryTransport

from envelopekit.babelqueue import BabelEnvelope
from tests.conftest import DATA
from tests.test_cli import run
from tests.test_cli_input import shell

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
    missing = run("redrive", str(tmp_path / "absent.ndjson"), "--kept", str(tmp_path / "k"))
    assert missing.returncode == 2 and b"cannot read" in missing.stderr
    negative = run("redrive", feed, "--kept", str(tmp_path / "k"), "--max", "-1")
    assert negative.returncode == 2


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
