"""`envelopekit compat`, the real executable in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.test_cli import run

SCHEMAS = DATA / "babelqueue" / "registry" / "examples" / "schemas"
V1 = str(SCHEMAS / "orders-created.json")
V2 = str(SCHEMAS / "orders-created.v2-breaking.json")


def test_the_registry_example_is_breaking() -> None:
    done = run("compat", V1, V2)
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode()
    assert "compat.required_added" in out and "/required/2" in out
    assert 'property "customer_id" is now required' in out
    assert "breaking: 1 change;" in out


def test_compatible_exits_zero_and_json_format() -> None:
    same = run("compat", V1, V1)
    assert same.returncode == 0 and same.stdout == b"compatible\n"
    done = run("compat", "--format", "json", V1, V2)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["compatible"] is False
    assert [(c["rule"], c["pointer"]) for c in report["breaking"]] == [
        ("compat.required_added", "/required/2")
    ]


def test_data_models_by_import_path() -> None:
    done = run(
        "compat",
        "tests.babelqueue.test_evolution:OrderV1",
        "tests.babelqueue.test_evolution:OrderV2",
    )
    assert done.returncode == 1, done.stderr
    assert b"/properties/note/anyOf/0/type" in done.stdout
    ok = run(
        "compat",
        "tests.babelqueue.test_evolution:OrderV1",
        "tests.babelqueue.test_evolution:OrderV1Marked",
    )
    assert ok.returncode == 0, ok.stderr
    # A one-value Literal is written as `const`: narrowing to it drops the other values.
    narrowed = run(
        "compat",
        "tests.babelqueue.test_evolution:Priced",
        "tests.babelqueue.test_evolution:PricedInUsd",
    )
    assert narrowed.returncode == 1, narrowed.stderr
    assert b"/properties/currency/const" in narrowed.stdout


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    array = tmp_path / "array.json"
    array.write_text("[]")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    for args in (
        (V1, str(tmp_path / "absent.json")),
        (V1, str(array)),
        (str(broken), V1),
        (V1, "tests.nowhere:Model"),
        (V1, "json:dumps"),
    ):
        done = run("compat", *args)
        assert done.returncode == 2, args
        assert done.stderr.startswith(b"envelopekit compat: "), done.stderr
    assert run("compat", V1).returncode == 2  # argparse: NEW missing


def test_a_schema_nested_past_any_reader_is_a_usage_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"items":' * 5000 + "{}" + "}" * 5000)
    done = run("compat", str(deep), str(deep))
    assert done.returncode == 2
    assert done.stderr.startswith(b"envelopekit compat: ") and b"Traceback" not in done.stderr


def test_a_model_that_fails_to_import_or_to_write_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Modules no checker may read (one is not Python): written here, importable by PYTHONPATH.
    (tmp_path / "ek_raises_at_import.py").write_text('raise RuntimeError("boom at import")\n')
    (tmp_path / "ek_syntax_error.py").write_text("def (:\n")
    (tmp_path / "ek_exits_at_import.py").write_text("raise SystemExit(1)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    for old, new, said in (
        ("ek_raises_at_import:A", V1, b"cannot import ek_raises_at_import:A: RuntimeError: boom"),
        (V1, "ek_syntax_error:A", b"cannot import ek_syntax_error:A: SyntaxError: "),
        (V1, "ek_exits_at_import:A", b"cannot import ek_exits_at_import:A: SystemExit: 1"),
        (":A", V1, b"no such file: :A (a model is module:Model)"),
        (
            "tests.babelqueue.test_evolution:OrderV1",
            "tests.support.cli_models:Opaque",
            b"cannot write the schema of tests.support.cli_models:Opaque: "
            b"PydanticInvalidForJsonSchema: ",
        ),
    ):
        done = run("compat", old, new)
        assert done.returncode == 2, (old, new, done.stderr)
        assert done.stderr.startswith(b"envelopekit compat: " + said), done.stderr
        assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
        assert done.stdout == b""


def test_what_a_model_module_prints_while_imported_goes_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written here (importable by PYTHONPATH), so that it prints in the subprocess only.
    (tmp_path / "ek_noisy_models.py").write_text(
        "import sys\n"
        "from pydantic import BaseModel\n"
        'print("loading models")\n'
        'sys.stdout.write("{not json\\n")\n'
        "class A(BaseModel):\n"
        "    a: int\n"
        "class B(BaseModel):\n"
        "    a: int\n"
        "    b: int\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    done = run("compat", "--format", "json", "ek_noisy_models:A", "ek_noisy_models:B")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [c["rule"] for c in report["breaking"]] == ["compat.required_added"]
    assert done.stderr == b"loading models\n{not json\n"


def _schema_file(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_hostile_schema_files_get_a_verdict_or_a_usage_error(tmp_path: Path) -> None:
    base = _schema_file(tmp_path, "base.json", '{"properties": {"a": {}}}')
    huge = "9" * 400
    for old, new, status in (
        ('{"minimum": 0}', '{"minimum": ' + huge + "}", 1),  # past any float: compared as one
        ('{"enum": [' + "[" * 900 + "]" * 900 + "]}", '{"enum": [1]}', 2),
        ('{"required": [["a"]]}', '{"required": []}', 0),
        ('{"properties": {"\\ud800": {}}}', '{"properties": {}}', 1),
        (base, '{"properties": {"a": {"minimum": NaN}}}', 2),  # not JSON
        (base, '{"properties": {"a": {"minimum": -Infinity}}}', 2),
    ):
        paths = [
            text if text == base else _schema_file(tmp_path, f"{i}.json", text)
            for i, text in enumerate((old, new))
        ]
        for output in ("text", "json") if status != 2 else ("text",):
            done = run("compat", "--format", output, *paths)
            assert done.returncode == status, (old[:40], new[:40], output, done.stderr)
            assert b"Traceback" not in done.stderr, done.stderr
            if status == 2:
                assert done.stderr.startswith(b"envelopekit compat: ") and done.stdout == b""
            elif output == "json":
                json.loads(done.stdout)


def test_text_output_escapes_names_from_the_schema(tmp_path: Path) -> None:
    forged = "x\\nbreaking: 0 changes\\u001b[31m"
    old = _schema_file(tmp_path, "old.json", '{"properties": {"' + forged + '": {}}}')
    new = _schema_file(tmp_path, "new.json", '{"properties": {}}')
    done = run("compat", old, new)
    assert done.returncode == 1
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 2 and "\x1b" not in done.stdout.decode()
    assert lines[0].split()[:2] == ["compat.property_removed", "/properties/x\\nbreaking:"]
    assert lines[1].startswith("breaking: 1 change;")
