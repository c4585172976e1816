"""The real `envelopekit` entry point, run as a subprocess."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any, Literal

import orjson
import pytest

import envelopekit as ek
from envelopekit._json import dumps
from envelopekit.babelqueue import BabelEnvelope
from tests.conftest import DATA

ROOT = Path(__file__).parent.parent
FIXTURES = DATA / "babelqueue" / "fixtures"
ENTRY = shutil.which("envelopekit", path=str(Path(sys.executable).parent))


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    command = [ENTRY] if ENTRY else [sys.executable, "-m", "envelopekit"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVELOPEKIT_")}
    return subprocess.run(
        [*command, *args], input=stdin, capture_output=True, cwd=ROOT, env=env, check=False
    )


def test_the_console_script_is_installed() -> None:
    assert ENTRY is not None


def test_valid_file_exits_zero() -> None:
    done = run("validate", str(FIXTURES / "order-created.json"))
    assert done.returncode == 0, done.stderr
    assert b"valid   " in done.stdout
    assert b"1 message: 1 valid, 0 invalid" in done.stdout


def test_invalid_file_exits_one_with_rule_and_pointer() -> None:
    done = run("validate", "--spec", "babelqueue", str(FIXTURES / "invalid-missing-urn.json"))
    assert done.returncode == 1
    assert b"INVALID" in done.stdout
    assert b"urn.missing" in done.stdout and b"/job" in done.stdout
    assert b"violations by rule:" in done.stdout


def test_json_format_shape() -> None:
    done = run("validate", "--format", "json", "--spec", "babelqueue", str(FIXTURES))
    assert done.returncode == 1
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(list(FIXTURES.glob("*.json")))
    for line in lines:
        assert set(line) == {"source", "ok", "spec", "violations", "warnings"}
        for finding in line["violations"] + line["warnings"]:
            assert set(finding) == {"rule", "pointer", "message", "source"}
    by_source = {Path(line["source"]).name: line for line in lines}
    assert by_source["order-created.json"]["ok"] is True
    assert by_source["invalid-unknown-schema-version.json"]["violations"][0]["rule"] == (
        "schema_version.unsupported"
    )
    assert by_source["forbidden-key-timestamp.json"]["warnings"][0]["pointer"] == "/timestamp"
    assert b"messages:" in done.stderr


def test_ndjson_from_stdin_names_lines() -> None:
    good = orjson.dumps(orjson.loads((FIXTURES / "order-created.json").read_bytes()))
    stdin = good + b"\n\n" + b"{not json\n" + good + b"\n"
    done = run("validate", "--format", "json", "--spec", "babelqueue", "-", stdin=stdin)
    assert done.returncode == 1
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(x["source"], x["ok"]) for x in lines] == [
        ("<stdin>:1", True),
        ("<stdin>:3", False),
        ("<stdin>:4", True),
    ]
    assert lines[1]["violations"][0]["rule"] == "json.invalid"


@pytest.mark.parametrize("spec", ["babelqueue", "auto"])
def test_long_integers_on_the_command_line(spec: str) -> None:
    # NDJSON whose first line holds NaN and an integer past the parser's 4,300 digits is read
    # line by line; each integer is named at its member, as `check` names it, and a SOM message
    # past its 240,000 bytes only by such integers is too large.
    good = orjson.loads((FIXTURES / "order-created.json").read_bytes())
    beside = orjson.dumps(good).replace(b'"order_id":1042', b'"x":NaN,"order_id":-' + b"9" * 4400)
    lone = orjson.dumps(good).replace(b'"order_id":1042', b'"order_id":' + b"9" * 5000)
    story = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    story["payload"]["assets"] = [0]
    som = orjson.dumps(story).replace(
        b'"assets":[0]', b'"assets":[' + b",".join([b"9" * 5000] * 50) + b"]"
    )
    lines = [beside, lone] + ([som] if spec == "auto" else [])
    done = run("validate", "--format", "json", "--spec", spec, "-", stdin=b"\n".join(lines))
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr
    shown = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["source"] for line in shown] == [f"<stdin>:{i + 1}" for i in range(len(lines))]
    assert [line["violations"] for line in shown] == [
        [v.to_dict() for v in ek.check(raw, spec).violations] for raw in lines
    ]
    assert [(v["rule"], v["pointer"]) for v in shown[0]["violations"]] == [
        ("number.non_finite", "/data/x")
    ]
    assert shown[1]["violations"] == [
        {
            "rule": "number.out_of_range",
            "pointer": "/data/order_id",
            "message": "An integer of more than 4300 digits: too long to read or write back.",
            "source": "conformance",
        }
    ]
    if spec == "auto":
        assert [v["rule"] for v in shown[2]["violations"]] == ["message.too_large"]


@pytest.mark.parametrize("spec", ["babelqueue", "auto"])
def test_integers_past_the_parsers_digits_after_what_the_finder_reads(
    spec: str, tmp_path: Path
) -> None:
    # Session 40's hostile classes as a user's file reaches them: a long integer after strings
    # dense with escapes (a genuine 2^64 beside it stays a warning), after `1e-5`s, and in a
    # line that is not JSON (a backslash after many strings). Each verdict is `check`'s.
    good = orjson.dumps(orjson.loads((FIXTURES / "order-created.json").read_bytes()))
    long = b"9" * 5000
    escaped = b",".join([b'"\\"\\\\\\"a"'] * 20_000)
    lines = [
        good.replace(
            b'"order_id":1042',
            b'"s":[' + escaped + b'],"w":18446744073709551616,"order_id":' + long,
        ),
        good.replace(
            b'"order_id":1042', b'"e":[' + b",".join([b"1e-5"] * 40_000) + b'],"order_id":' + long
        ),
        good.replace(
            b'"order_id":1042',
            b'"s":['
            + long
            + b","
            + b",".join([b'"s"'] * 20_000)
            + b","
            + long
            + b',\\],"order_id":1',
        ),
    ]
    assert all(len(line) > 16_384 for line in lines)
    feed = tmp_path / "feed.ndjson"
    feed.write_bytes(b"\n".join(lines) + b"\n")
    done = run("validate", "--format", "json", "--spec", spec, str(feed))
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr
    shown = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(line["violations"], line["warnings"]) for line in shown] == [
        (
            [v.to_dict() for v in verdict.violations],
            [w.to_dict() for w in verdict.warnings],
        )
        for verdict in (ek.check(raw, spec) for raw in lines)
    ]
    assert [(v["rule"], v["pointer"]) for v in shown[0]["violations"]] == [
        ("number.out_of_range", "/data/order_id")
    ]
    assert [(w["rule"], w["pointer"]) for w in shown[0]["warnings"]] == [
        ("number.beyond_int64", "/data/w")
    ]
    assert [(v["rule"], v["pointer"]) for v in shown[1]["violations"]] == [
        ("number.out_of_range", "/data/order_id")
    ]
    assert [v["rule"] for v in shown[2]["violations"]] == ["json.invalid"]


def test_ndjson_file(tmp_path: Path) -> None:
    good = orjson.dumps(orjson.loads((FIXTURES / "order-created.json").read_bytes()))
    feed = tmp_path / "feed.ndjson"
    feed.write_bytes(good + b"\n" + good + b"\n")
    done = run("validate", "--spec", "babelqueue", str(feed))
    assert done.returncode == 0
    assert f"{feed}:2".encode() in done.stdout


def test_missing_path_exits_two() -> None:
    done = run("validate", "no/such/file.json")
    assert done.returncode == 2
    assert b"no such file or directory" in done.stderr


def test_usage_error_exits_two() -> None:
    assert run("validate", "--spec", "soap").returncode == 2
    assert run("frobnicate").returncode == 2


@pytest.mark.parametrize("spec", ["babelqueue", "som", "matrix"])
def test_schema_command_prints_json(spec: str) -> None:
    done = run("schema", "--spec", spec)
    assert done.returncode == 0, done.stderr
    documents = json.loads(done.stdout)
    assert list(documents) == [spec]
    for schema in documents[spec].values():
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_command_writes_the_shipped_files(tmp_path: Path) -> None:
    done = run("schema", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    shipped = Path(ek.__file__).parent / "schemas"
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    assert written == sorted(
        p.relative_to(shipped) for p in shipped.rglob("*.json") if "draft-07" not in p.parts
    )
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (shipped / relative).read_bytes(), relative


def _found_as_check_finds(
    lines: list[bytes], specs: list[str], duplicate_keys: Literal["warn", "refuse"] | None = None
) -> list[dict[str, Any]]:
    """``validate --format json -`` of ``lines`` in a subprocess under ``spec="auto"``.

    Exit 1 and no traceback; each line's spec is ``specs``'s, and its findings are those of
    ``check`` with the spec named (and ``duplicate_keys``). Returns what was shown, a line each.
    """
    options = [] if duplicate_keys is None else ["--duplicate-keys", duplicate_keys]
    done = run("validate", "--format", "json", *options, "-", stdin=b"\n".join(lines))
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    shown: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    assert [found["spec"] for found in shown] == specs
    looking = (
        ek.Settings() if duplicate_keys is None else ek.Settings(duplicate_keys=duplicate_keys)
    )
    for found, line, spec in zip(shown, lines, specs, strict=True):
        named = ek.check(line, spec, settings=looking)
        assert found["violations"] == [v.to_dict() for v in named.violations]
        assert found["warnings"] == [v.to_dict() for v in named.warnings]
    return shown


def _ndjson(path: Path, documents: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in documents))
    return path


def test_som_corpus_through_the_cli(tmp_path: Path) -> None:
    from tests.som._corpus import (
        DATA as SOM,
    )
    from tests.som._corpus import (
        negative_envelope,
        negative_files,
        positive_envelope,
        positive_files,
    )

    expected = json.loads((SOM / "expected-rules.json").read_bytes())
    positives, negatives = positive_files(), negative_files()
    feed = _ndjson(
        tmp_path / "som.ndjson",
        [positive_envelope(p) for p in positives] + [negative_envelope(p) for p in negatives],
    )
    done = run("validate", "--format", "json", str(feed))  # --spec auto
    assert done.returncode == 1
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(positives) + len(negatives) == 38
    assert all(line["spec"] == "som" for line in lines)
    assert all(line["ok"] for line in lines[: len(positives)])
    for path, line in zip(negatives, lines[len(positives) :], strict=True):
        assert not line["ok"]
        assert {v["rule"] for v in line["violations"]} == set(expected[path.name]), path.name


def test_matrix_corpus_through_the_cli(tmp_path: Path) -> None:
    cases = json.loads((DATA / "matrix" / "cases.json").read_bytes())["cases"]
    feed = tmp_path / "matrix.ndjson"
    # `raw` cases hold text with no JSON value (NaN, lone surrogates): sent as written.
    feed.write_bytes(
        b"".join(
            (c["raw"].encode("utf-8", "surrogatepass") if "raw" in c else dumps(c["doc"])) + b"\n"
            for c in cases
        )
    )
    done = run("validate", "--format", "json", "--spec", "matrix", str(feed))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(cases)
    for case, line in zip(cases, lines, strict=True):
        outcome = case.get("check", case)
        assert line["ok"] is outcome["valid"], case["id"]
    assert done.returncode == (0 if all(line["ok"] for line in lines) else 1)


def test_text_summary_counts_rules(tmp_path: Path) -> None:
    bad = orjson.loads((FIXTURES / "invalid-missing-urn.json").read_bytes())
    feed = _ndjson(tmp_path / "bad.ndjson", [bad, bad, bad])
    done = run("validate", str(feed))
    assert done.returncode == 1
    assert b"3 messages: 0 valid, 3 invalid" in done.stdout
    assert b"       3  urn.missing" in done.stdout


def test_the_fast_json_line_equals_the_full_one() -> None:
    from envelopekit._cli import _json_full, json_of
    from envelopekit._cli_input import Message

    for path in sorted((ROOT / "examples" / "messages").glob("*/*.json")):
        raw = path.read_bytes()
        message = Message(f'{path}"é', raw, len(raw))
        verdict = ek.check(message.raw)
        assert json_of(message, verdict) == _json_full(message, verdict)


def test_a_verdict_line_writes_each_finding_as_its_to_dict() -> None:
    from envelopekit import rules
    from envelopekit._cli import json_of
    from envelopekit._cli_input import Message
    from envelopekit._violations import Verdict, violation

    found = [
        violation(rules.JSON_INVALID, "", 'bad é "quoted"'),
        violation(rules.MESSAGE_TOO_LARGE, "/a~1b", "big"),
    ]
    noted = [violation(rules.NUMBER_BEYOND_INT64, "/data/0", "wide")]
    verdicts: list[Verdict[Any]] = [
        Verdict("babelqueue", None, found, noted),
        Verdict("som", None, [], noted),
    ]
    for verdict in verdicts:
        message = Message('f "x":3', b"{}", 2)
        expected = {
            "source": message.source,
            "ok": verdict.ok,
            "spec": verdict.spec,
            "violations": [v.to_dict() for v in verdict.violations],
            "warnings": [w.to_dict() for w in verdict.warnings],
        }
        line = json_of(message, verdict)
        assert line == orjson.dumps(expected) + b"\n"


def test_the_summary_counts_each_rule_once_per_message_first_seen_first() -> None:
    from collections import Counter

    from envelopekit import rules
    from envelopekit._cli import Summary
    from envelopekit._violations import Verdict, violation

    a, b, c = rules.JSON_INVALID, rules.MESSAGE_TOO_LARGE, rules.NUMBER_BEYOND_INT64
    verdicts: list[Verdict[Any]] = [
        Verdict("babelqueue", None, [violation(b, "", "x")]),
        Verdict("babelqueue", None, [violation(a, "", "x"), violation(b, "", "y")] * 2),
        Verdict("babelqueue", None, [], [violation(c, "", "w"), violation(c, "/1", "w")]),
        Verdict("babelqueue", None, []),
    ]
    summary = Summary()
    for verdict in verdicts:
        summary.add(verdict)
    assert (summary.valid, summary.invalid, summary.warned) == (2, 2, 1)
    assert list(summary.rules.items()) == [(b, 2), (a, 1)]
    assert summary.warnings == Counter({c: 1})


def test_the_readme_shows_what_make_demo_prints() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    shown = readme.split("<summary>Output of <code>make demo</code></summary>\n\n```text\n")[1]
    shown = shown.split("```")[0]
    done = run("validate", "examples/messages")
    assert done.returncode == 1
    assert done.stdout.decode("utf-8") == shown, "re-run `make demo` and update README.md"


def test_progress_bar_only_for_large_inputs_on_a_terminal() -> None:
    from envelopekit._cli import PROGRESS_MIN_BYTES, _Progress

    assert _Progress(PROGRESS_MIN_BYTES, enabled=True).enabled
    assert not _Progress(PROGRESS_MIN_BYTES - 1, enabled=True).enabled
    assert not _Progress(PROGRESS_MIN_BYTES * 10, enabled=False).enabled
    with _Progress(PROGRESS_MIN_BYTES - 1, enabled=True, delay=0) as small:
        small.advance(PROGRESS_MIN_BYTES - 1)
        assert not small.drawn


def test_progress_bar_advances_in_steps_and_ends_complete() -> None:
    # rich's advance() per message cost more than the validation (bench/run.py).
    from envelopekit._cli import PROGRESS_MIN_BYTES, PROGRESS_MIN_STEP, _Progress

    progress = _Progress(PROGRESS_MIN_BYTES, enabled=True, delay=0)
    with progress:
        task = progress._bar.tasks[0]
        progress.advance(PROGRESS_MIN_STEP - 1)
        assert task.completed == 0
        progress.advance(1)
        assert task.completed == PROGRESS_MIN_STEP
        progress.advance(10)
        assert task.completed == PROGRESS_MIN_STEP
    assert task.completed == PROGRESS_MIN_STEP + 10


def test_progress_bar_waits_for_its_delay_reading_the_clock_a_step_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from envelopekit import _cli

    now, reads = [100.0], [0]

    def clock() -> float:
        reads[0] += 1
        return now[0]

    monkeypatch.setattr(_cli, "monotonic", clock)
    step = _cli.PROGRESS_MIN_STEP
    progress = _cli._Progress(_cli.PROGRESS_MIN_BYTES, enabled=True)

    def drawn() -> bool:
        return progress.drawn

    with progress:
        assert reads[0] == 1  # the run's start
        progress.advance(step * 3)
        now[0] += _cli.PROGRESS_DELAY - 0.01
        for _ in range(step):
            progress.advance(1)
        assert not drawn()
        assert reads[0] == 3  # once a step: not once a message
        now[0] += 0.01
        progress.advance(step - 1)
        assert not drawn()
        progress.advance(1)
        assert drawn()
        task = progress._bar.tasks[0]
        assert task.completed == step * 5  # what was read before the bar, counted
        progress.advance(7)
    assert task.completed == step * 5 + 7


def _on_pty(
    args: list[str], *, stdout_too: bool, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """``envelopekit *args`` with stderr (and with ``stdout_too``, stdout) a pseudo-terminal.

    Returns the finished process (its stdout, when a pipe) and every byte written to the
    terminal, in the order written, drained as a terminal does: what is written would otherwise
    fill the pty's buffer.
    """
    import pty

    command = [ENTRY] if ENTRY else [sys.executable, "-m", "envelopekit"]
    leader, follower = pty.openpty()
    drawn: list[bytes] = []

    def drain() -> None:
        with suppress(OSError):
            while chunk := os.read(leader, 65536):
                drawn.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = subprocess.run(
            [*command, *args],
            stdout=follower if stdout_too else subprocess.PIPE,
            stderr=follower,
            cwd=ROOT,
            env=env,
            check=False,
            timeout=120,
        )
    finally:
        os.close(follower)
        reader.join(timeout=10)
        os.close(leader)
    return done, b"".join(drawn)


def on_terminal(feed: Path, *options: str) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """``validate`` with stderr a real pseudo-terminal: what it printed, and what it drew there.

    Python's import-time profile goes to stderr too, so the terminal shows what was imported.
    """
    args = ["validate", "--spec", "babelqueue", "--format", "json", *options, str(feed)]
    return _on_pty(args, stdout_too=False, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})


@pytest.fixture(scope="module")
def big_feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    good = orjson.dumps(orjson.loads((FIXTURES / "order-created.json").read_bytes()))
    feed = tmp_path_factory.mktemp("progress") / "big.ndjson"
    feed.write_bytes((good + b"\n") * 6000)
    return feed


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_progress_bar_draws_on_a_terminal(big_feed: Path, jobs: str) -> None:
    # The bar appears on the terminal (stderr), never on stdout.
    done, shown = on_terminal(big_feed, "--progress-delay", "0", "--jobs", jobs)
    assert done.returncode == 0
    assert b"validating" in shown
    assert b"| rich.progress" in shown
    assert b"validating" not in done.stdout
    lines = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [line["ok"] for line in lines] == [True] * 6000
    assert [line["source"] for line in lines] == [f"{big_feed}:{n}" for n in range(1, 6001)]


def on_one_terminal(*args: str) -> tuple[int, bytes]:
    """``envelopekit *args`` with stdout and stderr the same pseudo-terminal, as in a shell.

    Returns the exit status and every byte written to the terminal, in the order written.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENVELOPEKIT_")}
    done, written = _on_pty(list(args), stdout_too=True, env=env)
    return done.returncode, written


_CSI = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])")


def screen(written: bytes) -> list[str]:
    """The lines a terminal shows after ``written``, its scrollback included, right-trimmed.

    What rich and the verdicts write is interpreted as a terminal does: a carriage return, a
    line feed (the pty adds the carriage return), a cursor up, an erased line; colours and the
    cursor's visibility change nothing; anything else fails. Lines do not wrap: the property
    under test (where a line starts) does not depend on the width.
    """
    text = written.decode("utf-8")
    rows: list[list[str]] = [[]]
    row = column = 0
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\x1b":
            found = _CSI.match(text, at)
            assert found is not None, (
                f"an escape sequence the test cannot read: {text[at : at + 8]!r}"
            )
            param, final = found.groups()
            count = int(param) if param.isdigit() else None
            if final == "K":
                assert count in (None, 0, 2), found.group()
                line = rows[row]
                if count == 2:
                    line[:] = [" "] * len(line)
                else:
                    del line[column:]
            elif final == "A":
                row = max(row - (count or 1), 0)
            else:
                assert final in "mhl", f"an escape sequence the test cannot read: {found.group()!r}"
            at = found.end()
            continue
        if char == "\r":
            column = 0
        elif char == "\n":
            row += 1
            if row == len(rows):
                rows.append([])
        else:
            line = rows[row]
            line.extend(" " * (column - len(line)))
            if column < len(line):
                line[column] = char
            else:
                line.append(char)
            column += 1
        at += 1
    lines = ["".join(line).rstrip() for line in rows]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.fixture(scope="module")
def mixed_feed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    good = orjson.dumps(orjson.loads((FIXTURES / "order-created.json").read_bytes()))
    feed = tmp_path_factory.mktemp("progress") / "mixed.ndjson"
    # Invalid messages among the valid ones: a verdict of several lines, then one of one.
    feed.write_bytes(
        b"".join(b'{"job": 1}\n' if n % 700 == 1 else good + b"\n" for n in range(6000))
    )
    return feed


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verdicts_on_the_terminal_of_the_bar_are_written_above_it(
    mixed_feed: Path, jobs: str
) -> None:
    # Written past rich, the first verdict followed the bar's text on its line
    # ("validating ━━━ 0.0/1.5 MB ? -:--:--valid   .../mixed.ndjson:1"), where it stayed.
    status, written = on_one_terminal(
        "validate", "--spec", "babelqueue", "--progress-delay", "0", "--jobs", jobs, str(mixed_feed)
    )
    assert status == 1
    assert b"validating" in written  # the bar was drawn, at once (before any verdict)
    piped = run("validate", "--spec", "babelqueue", "--jobs", jobs, str(mixed_feed))
    # The bar gone (it is transient), the terminal shows what a pipe is given, line for line.
    assert screen(written) == piped.stdout.decode("utf-8").splitlines()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_bar_of_a_gzip_input_counts_its_compressed_bytes(tmp_path: Path, jobs: str) -> None:
    # The bar's total is the file's size on disk; it advanced by the decompressed bytes, so it
    # was full at once ("2.2/1.2 MB"), and its ETA meaningless.
    import base64
    import gzip

    good = orjson.loads((FIXTURES / "order-created.json").read_bytes())
    # Random notes, so that the compressed file passes the bar's 1 MiB and is half the text.
    lines = [
        orjson.dumps({**good, "data": {"note": base64.b64encode(os.urandom(450)).decode()}})
        for _ in range(2600)
    ]
    feed = tmp_path / "feed.ndjson.gz"
    feed.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    size = feed.stat().st_size
    assert size >= 1024 * 1024

    done, shown = on_terminal(feed, "--progress-delay", "0", "--jobs", jobs)
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 2600
    frames = re.findall(rb"([0-9.]+)/([0-9.]+) MB", shown)
    assert len(frames) >= 2  # drawn at once, and once more as the run ends
    total = f"{size / 1e6:.1f}".encode()
    assert all(of == total and float(read) <= float(of) for read, of in frames), frames
    assert frames[-1] == (total, total)  # the whole file read, as the bar counts it


def test_a_run_shorter_than_the_delay_draws_no_bar_and_never_imports_rich(big_feed: Path) -> None:
    # 6,000 messages take well under the 2 s default: no bar, and none of rich's import cost.
    done, shown = on_terminal(big_feed)
    assert done.returncode == 0
    assert b"| envelopekit._cli" in shown  # the import profile did reach the terminal
    assert b"validating" not in shown
    assert b"rich" not in shown
    assert len(done.stdout.splitlines()) == 6000


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_progress_delay_must_be_seconds(value: str) -> None:
    done = run("validate", "--progress-delay", value, "-")
    assert done.returncode == 2
    assert f"--progress-delay: not a number of seconds, 0 or more: '{value}'".encode() in (
        done.stderr
    )
    assert b"Traceback" not in done.stderr


def test_duplicate_keys_flag(tmp_path: Path) -> None:
    raw = (
        (FIXTURES / "order-created.json")
        .read_bytes()
        .replace(b'"attempts": 0', b'"attempts": 0, "attempts": 1')
    )
    message = tmp_path / "dup.json"
    message.write_bytes(raw)
    assert run("validate", str(message)).returncode == 0
    done = run("validate", "--format", "json", "--duplicate-keys", "refuse", str(message))
    assert done.returncode == 1
    (line,) = [json.loads(x) for x in done.stdout.splitlines()]
    assert line["violations"][0] == {
        "rule": "json.duplicate_key",
        "pointer": "/attempts",
        "message": line["violations"][0]["message"],
        "source": "json",
    }


def _with_nan_at(*keys: str) -> bytes:
    """The example message, ``data`` holding each of ``keys`` with the value NaN."""
    good = orjson.loads((FIXTURES / "order-created.json").read_bytes())
    data = b"{" + b",".join(orjson.dumps(key) + b":NaN" for key in keys) + b"}"
    return orjson.dumps({**good, "data": 0}).replace(b'"data":0', b'"data":' + data)


# What ends a line or drives a terminal: C0 but the line ends, DEL, C1, U+2028 and U+2029.
_RAW_CONTROLS = [chr(c) for c in (*range(0x0A), *range(0x0B, 0x20), *range(0x7F, 0xA0))]
_RAW_CONTROLS += ["\u2028", "\u2029"]


def test_text_output_escapes_control_characters_from_the_input(tmp_path: Path) -> None:
    # A member name that prints a line reading as a verdict, file names that would too or
    # colour the terminal: one NDJSON (a block of lines, --jobs's path), one document.
    forged = "a\nvalid   forged:3 (babelqueue)"
    feed = tmp_path / "feed\x1b[31m.ndjson"
    good = _with_nan_at()  # `data` {}: valid
    feed.write_bytes(_with_nan_at(forged) + b"\n" + _with_nan_at("\x1b[2J\u2028\x85\x7f\r") + b"\n")
    named = tmp_path / "doc\nvalid   x.json\x1b[31m"
    named.write_bytes(good)
    outputs = set()
    for jobs in ("1", "2"):
        done = run("validate", "--jobs", jobs, str(feed), str(named))
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    (stdout,) = outputs  # the same with a worker or without
    out = stdout.decode()
    verdicts, _, summary = out.partition("\n\n")
    assert summary.startswith("3 messages: 1 valid, 2 invalid")
    lines = verdicts.split("\n")
    heads = [line[:8] for line in lines]
    assert heads == ["INVALID ", "    numb", "INVALID ", "    numb", "valid   "]
    assert lines[0] == f"INVALID {tmp_path}/feed\\x1b[31m.ndjson:1 (babelqueue)"
    assert f"/data/{forged}".replace("\n", "\\n") in lines[1]
    assert "/data/\\x1b[2J\\u2028\\x85\\x7f\\r " in lines[3]
    assert lines[4] == f"valid   {tmp_path}/doc\\nvalid   x.json\\x1b[31m (babelqueue)"
    assert not [c for c in _RAW_CONTROLS if c in out]
    # JSON escapes them itself: its pointer is the member name as it is.
    done = run("validate", "--format", "json", str(feed))
    assert json.loads(done.stdout.splitlines()[0])["violations"][0]["pointer"] == f"/data/{forged}"


@pytest.mark.parametrize("command", ["validate", "schema", "redrive", "compat", "asyncapi"])
def test_every_command_s_help_gives_the_interrupted_and_broken_pipe_statuses(command: str) -> None:
    # Any command can end so: `main` turns Ctrl-C into 130 and a reader gone into 141.
    done = run(command, "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.decode().split())
    assert "Exit status 130: interrupted (Ctrl-C)." in text
    assert "Exit status 141: the reader of the output went away (| head)" in text


def test_a_directory_without_messages_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a message")
    done = run("validate", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == f"envelopekit: no messages in {tmp_path}\n".encode()


def test_large_messages_lacking_members_or_full_of_unknown_keys_through_the_executable() -> None:
    """Session 30's hostile kinds, one line each, as ``validate`` reads them in a subprocess.

    Members missing around a large value (each spec), a SOM envelope of 20,000 unknown keys, a
    Matrix bare error payload whose ``code`` is a large array: the findings are ``check``'s,
    the required members are named, and the unknown keys past the cap are counted.
    """
    big = b"[" + b",".join([b"{}"] * 3_000) + b"]"
    lines = [
        b'{"unknown":' + big + b"}",
        b'{"unknown":' + big + b"}",
        b'{"unknown":' + big + b"}",
        b"{" + b",".join(b'"k%d":0' % i for i in range(20_000)) + b"}",
        b'{"ok":false,"error":"x","code":' + big + b"}",
    ]
    specs = ["babelqueue", "som", "matrix", "som", "matrix"]
    shown = []
    for line, spec in zip(lines, specs, strict=True):
        done = run("validate", "--format", "json", "--spec", spec, "-", stdin=line)
        assert done.returncode == 1, done.stderr
        assert b"Traceback" not in done.stderr
        shown.append(json.loads(done.stdout.splitlines()[0]))
    for found, line, spec in zip(shown, lines, specs, strict=True):
        assert found["violations"] == [v.to_dict() for v in ek.check(line, spec).violations]
    assert {v["pointer"] for v in shown[0]["violations"] if v["rule"].endswith(".required")} == {
        "/trace_id",
        "/data",
        "/meta",
        "/attempts",
    }
    # The envelope's eight missing members, then 92 of its keys; the other 19,908 counted.
    assert [v["rule"] for v in shown[3]["violations"][:8]] == ["envelope.required"] * 8
    assert shown[3]["violations"][-1]["message"].startswith("19908 more findings")
    assert [v["rule"] for v in shown[4]["violations"]] == [
        "error-payload.enum",
        "error-payload.type",
    ]


def test_session_31_s_hostile_kinds_through_the_executable() -> None:
    """One line of each kind session 31 bounded, as ``validate`` reads them in a subprocess.

    A SOM payload of 20,000 unknown keys (counted past the cap), a story's ``extensions`` of
    20,000 keys not namespaced (the map stops at its first), a BabelQueue string of 100,000
    ``\\u0001`` escapes after 100 arrays, a Matrix error ``code`` of 500,000 characters: the
    findings are ``check``'s, never a traceback.
    """
    story = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    keys = {f"k{i}": 0 for i in range(20_000)}
    order = orjson.loads((DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes())
    lines = [
        orjson.dumps({**story, "payload": {**story["payload"], **keys}}),
        orjson.dumps({**story, "payload": {**story["payload"], "extensions": keys}}),
        orjson.dumps({**order, "data": {"a": [[]] * 100, "s": "\x01" * 100_000}}),
        orjson.dumps({"ok": False, "error": "x", "code": "T" * 500_000}),
    ]
    specs = ["som", "som", "babelqueue", "matrix"]
    shown = []
    for line, spec in zip(lines, specs, strict=True):
        done = run("validate", "--format", "json", "--spec", spec, "-", stdin=line)
        assert b"Traceback" not in done.stderr
        shown.append(json.loads(done.stdout.splitlines()[0]))
        assert done.returncode == (0 if spec == "babelqueue" else 1), done.stderr
    for found, line, spec in zip(shown, lines, specs, strict=True):
        assert found["violations"] == [v.to_dict() for v in ek.check(line, spec).violations]
    assert [v["pointer"] for v in shown[0]["violations"][:2]] == ["/payload/k0", "/payload/k1"]
    assert shown[0]["violations"][-1]["message"].startswith("19900 more findings")
    assert [v["pointer"] for v in shown[1]["violations"]] == ["/payload/extensions/k0", ""]
    assert [(v["rule"], v["pointer"]) for v in shown[3]["violations"]] == [
        ("error-payload.enum", "/code")
    ]


def test_session_34_s_kinds_under_auto_through_the_executable() -> None:
    """Long lists of small objects ending in one number to note, each over 16 KiB, as
    ``validate`` reads them under ``spec="auto"`` in a subprocess: detection by the members its
    tests read (a Matrix reply led by `job` too), the numbers by passes over the lists' values.
    Each line's spec and findings are ``check``'s with the spec named."""
    objects = b",".join([b'{"a":-1,"b":"x"}'] * 2_000)
    bq = (
        b'{"job":"urn:a:b","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","meta":{"id":'
        b'"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"q","lang":"php","schema_version":1,'
        b'"created_at":1749132727000},"attempts":0,"data":{"a":['
    )
    lines = [
        b'{"op":"$reply","correlationId":"c","payload":{"ok":false,"error":"x","details":['
        + objects
        + b',{"a":0.1234567890123456}]}}',
        b'{"op":"$reply","correlationId":"c","payload":{"ok":true,"items":['
        + objects
        + b',{"a":9007199254740993}]}}',
        b'{"job":"urn:a:b","op":"$reply","correlationId":"c","payload":[' + objects + b",NaN]}",
        bq + objects + b',{"a":9007199254740993}]}}',
        bq + objects + b',{"a":18446744073709551616000}]}}',
    ]
    specs = ["matrix", "matrix", "matrix", "babelqueue", "babelqueue"]
    assert all(len(line) > 16_384 for line in lines)
    shown = _found_as_check_finds(lines, specs)
    assert [found["ok"] for found in shown] == [True, True, False, True, True]
    assert [v["pointer"] for v in shown[1]["warnings"]] == ["/payload/items/2000/a"]
    assert [v["pointer"] for v in shown[2]["violations"]] == ["/payload/2000"]
    assert [v["pointer"] for v in shown[3]["warnings"]] == ["/data/a/2000/a"]
    # Beyond 64 bits in BabelQueue `data`: read, with a warning (a Go or Node hop's double).
    assert [(v["rule"], v["pointer"]) for v in shown[4]["warnings"]] == [
        ("number.beyond_int64", "/data/a/2000/a")
    ]


def test_session_37_s_wide_containers_through_the_executable() -> None:
    """Containers of 8 members or more within 16 KiB, read from the text orjson writes of them,
    as ``validate`` reads them under ``spec="auto"`` in a subprocess: 40 line items plain, with
    2^53 or NaN in the last row, in BabelQueue ``data``, a Matrix reply and a SOM story's
    ``_actors``. Each line's spec and findings are ``check``'s with the spec named."""
    rows: list[Any] = [{"sku": f"s{i}", "qty": i, "tags": ["a", "b"]} for i in range(40)]
    order = orjson.loads((DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes())
    story = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    lines: list[bytes] = []
    for last in ([], [{"qty": 2**53}], [{"qty": "NaN"}]):
        items = [*rows, *last]
        lines += [
            orjson.dumps({**order, "data": {"items": items}}),
            orjson.dumps({"op": "$reply", "correlationId": "c", "payload": {"items": items}}),
            orjson.dumps({**story, "_actors": {"rows": items}}),
        ]
    lines = [line.replace(b'"NaN"', b"NaN") for line in lines]
    specs = ["babelqueue", "matrix", "som"] * 3
    assert all(len(line) <= 16_384 for line in lines)
    shown = _found_as_check_finds(lines, specs)
    assert [found["ok"] for found in shown] == [True] * 6 + [False] * 3
    assert [v["pointer"] for v in shown[3]["warnings"]] == ["/data/items/40/qty"]
    assert [v["pointer"] for v in shown[4]["warnings"]] == ["/payload/items/40/qty"]
    assert [v["pointer"] for v in shown[6]["violations"]] == ["/data/items/40/qty"]


def test_session_35_s_kinds_through_the_executable() -> None:
    """Texts over 16 KiB as ``validate --duplicate-keys refuse`` reads them in a subprocess under
    ``spec="auto"``: objects each distinct repeating two names (chunks read by their names
    first), names dense with escapes and a number to note at the end (one reading of the text
    shared by its depth scan, number proof and duplicate outline), and a Matrix request with
    escapes. Each line's spec and findings are ``check``'s with the spec named."""
    bq = (
        b'{"job":"urn:a:b","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","meta":{"id":'
        b'"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"q","lang":"php","schema_version":1,'
        b'"created_at":1749132727000},"attempts":0,"data":{"a":['
    )
    twice = b",".join(b'{"a%d":0,"a%d":1,"b%d":2,"b%d":3}' % (i, i, i, i) for i in range(5_000))
    escaped = b",".join(
        b'{"\\u0022{":%d,"\\"{":%d,"\\\\":0,"\\\\":1}' % (i, i) for i in range(3_000)
    )
    texts = b",".join([b'"caf\\u00e9 \\"q\\" [1]"'] * 1_500)
    lines = [
        bq + twice + b"]}}",
        bq + escaped + b',{"n":9007199254740993}]}}',
        b'{"op":"fs.write","payload":{"texts":[' + texts + b"]}}",
    ]
    specs = ["babelqueue", "babelqueue", "matrix"]
    assert all(len(line) > 16_384 for line in lines)
    shown = _found_as_check_finds(lines, specs, duplicate_keys="refuse")
    assert [found["ok"] for found in shown] == [False, False, True]
    # Two names repeated in each of 5,000 objects: 100 built, the rest counted.
    assert shown[0]["violations"][-1]["message"].startswith("9900 more finding")
    assert shown[1]["violations"][0]["pointer"] == '/data/a/0/"{'
    assert [v["pointer"] for v in shown[1]["warnings"]] == ["/data/a/3000/n"]


# What str.splitlines ends a line at, and what a terminal reads as a control: JSON escapes C0
# itself; the others a JSON encoder may write raw inside a string.
_LINE_ENDS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ODD = _LINE_ENDS + "\x7f\x9b"


def _validate_lines(tmp_path: Path, *options: str) -> tuple[bytes, list[str]]:
    feed = tmp_path / f"feed{_ODD}.ndjson"
    feed.write_bytes(_with_nan_at(f"a{_ODD}") + b"\n" + _with_nan_at() + b"\n")
    document = tmp_path / f"doc{_ODD}.json"
    document.write_bytes(_with_nan_at(f"b{_ODD}"))
    done = run("validate", "--format", "json", *options, str(feed), str(document))
    assert done.returncode == 1, done.stderr
    return done.stdout, [f"a{_ODD}", "", f"b{_ODD}"]


def _compat_lines(tmp_path: Path) -> tuple[bytes, list[str]]:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"properties": {f"c{_ODD}": {}}}), encoding="utf-8")
    new.write_text(json.dumps({"properties": {}}), encoding="utf-8")
    done = run("compat", "--format", "json", str(old), str(new))
    assert done.returncode == 1, done.stderr
    return done.stdout, [f"c{_ODD}"]


def _redrive_lines(tmp_path: Path) -> tuple[bytes, list[str]]:
    job = BabelEnvelope.create("urn:babel:orders:created", {"d": _ODD})
    dead = job.retried().dead_lettered("failed", error="boom", failed_at=1_750_000_000_000)
    done = run("redrive", "--records", "--kept", str(tmp_path / "kept"), stdin=dead.to_json())
    assert done.returncode == 0, done.stderr
    return done.stdout, [_ODD]


@pytest.mark.parametrize(
    "command",
    ["validate-jobs-1", "validate-jobs-2", "compat", "redrive-records"],
)
def test_json_lines_stay_lines_for_every_line_splitter(tmp_path: Path, command: str) -> None:
    # A consumer reading the output as text (str.splitlines, a terminal) sees one line per
    # object, and each holds the input's characters as they were once parsed.
    if command.startswith("validate"):
        stdout, held = _validate_lines(tmp_path, "--jobs", command[-1])
    elif command == "compat":
        stdout, held = _compat_lines(tmp_path)
    else:
        stdout, held = _redrive_lines(tmp_path)
    text = stdout.decode("utf-8")
    lines = text.splitlines()
    assert len(lines) == text.count("\n") == len(held)
    assert not [c for c in _ODD if c in text]
    for line, member in zip(lines, held, strict=True):
        parsed = json.loads(line)
        if command.startswith("validate"):
            assert _ODD in parsed["source"]
            assert [v["pointer"] for v in parsed["violations"]] == (
                [f"/data/{member}"] * bool(member)
            )
        elif command == "compat":
            assert parsed["breaking"][0]["pointer"] == f"/properties/{member}"
        else:
            assert json.loads(parsed["body"])["data"]["d"] == member


@pytest.mark.parametrize("command", ["validate", "schema", "redrive", "compat", "asyncapi"])
def test_every_command_s_help_gives_its_exit_statuses_and_says_what_each_option_does(
    command: str,
) -> None:
    done = run(command, "--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert re.search(
        r"Exit status: 0 [^,]+, (1 [^,]+, )?2 usage or I/O error", " ".join(text.split())
    )
    # Each option line goes on with what the option does, on that line or indented below it.
    lines = text.partition("\noptions:\n")[2].split("\n\n")[0].splitlines()
    bare = [
        line.strip()
        for line, after in zip(lines, [*lines[1:], ""], strict=True)
        if re.fullmatch(r"  -\S.*?(  +\S.*)?", line)
        and not re.search(r"\S  +\S", line.strip())
        and not re.match(r" {6,}\S", after)
    ]
    assert bare == [], bare
