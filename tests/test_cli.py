"""The real `envelopekit` entry point, run as a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

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


def test_schema_command_writes_files(tmp_path: Path) -> None:
    done = run("schema", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "babelqueue" / "envelope.schema.json").is_file()
