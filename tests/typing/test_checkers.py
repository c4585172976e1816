"""The typing tests, run by both type checkers from pytest (as msgspec runs its own).

Each line of ``tests/typing/test_*_typing.py`` that carries ``# type: ignore[...]`` is a line
that must be a type error: mypy proves it with ``warn_unused_ignores`` (an ignore that stops
being needed fails), and basedpyright, run here with ``enableTypeIgnoreComments`` off, must
report an error on exactly those lines and on no other. Anything else either checker reports
fails the test, so a typing regression fails the suite, not only ``make typecheck``.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
BIN = Path(sys.executable).parent
FILES = sorted((ROOT / "tests" / "typing").glob("test_*_typing.py"))
IGNORE = re.compile(r"#\s*type:\s*ignore\b")


def expected_lines(path: Path) -> set[int]:
    """The 1-based lines whose comment is ``# type: ignore[...]`` (not prose that names it)."""
    with path.open("rb") as source:
        return {
            token.start[0]
            for token in tokenize.tokenize(source.readline)
            if token.type == tokenize.COMMENT and IGNORE.match(token.string)
        }


def test_there_are_expected_errors_for_both_checkers() -> None:
    assert len(FILES) == 5
    assert all(expected_lines(path) for path in FILES)


# The packages that export names (envelopekit/_exports.py); every one of those names must be
# visible to both checkers as what it is, and a name not exported must be an error.
PACKAGES = [
    "envelopekit",
    "envelopekit.babelqueue",
    "envelopekit.som",
    "envelopekit.matrix",
    "envelopekit.faststream",
    "envelopekit.testing",
    "envelopekit.cloudevents",
]


def exports_view(directory: Path) -> Path:
    """A module touching every exported name of every package, then one name none exports."""
    lines = ['"""Every public name, as a type checker sees it."""', ""]
    lines += [f"import {package}" for package in PACKAGES]
    lines += ["", "seen: list[object] = []"]
    for package in PACKAGES:
        names = importlib.import_module(package).__all__
        assert names
        lines += [f"seen.append({package}.{name})" for name in names]
        lines.append(f"seen.append({package}.Nothing)  # type: ignore[attr-defined]")
    path = directory / "exports_view.py"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_mypy_reports_exactly_the_marked_lines(tmp_path: Path) -> None:
    # The project's config: strict, the pydantic plugin, warn_unused_ignores.
    done = subprocess.run(
        [str(BIN / "mypy"), *map(str, FILES), str(exports_view(tmp_path))],
        capture_output=True,
        cwd=ROOT,
        check=False,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_without_the_pydantic_plugin_sees_no_defaulted_field_as_required(
    tmp_path: Path,
) -> None:
    """Without the plugin mypy reads the dataclass_transform, as pyright does."""
    config = tmp_path / "mypy.ini"
    config.write_text(
        f"[mypy]\nstrict = True\npython_version = 3.10\nmypy_path = {ROOT / 'typings'}\n",
        "utf-8",
    )
    source = tmp_path / "construct.py"
    source.write_text(_CONSTRUCTING, "utf-8")
    done = subprocess.run(
        [str(BIN / "mypy"), "--config-file", str(config), str(source)],
        capture_output=True,
        cwd=tmp_path,
        check=False,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _basedpyright(*args: str, cwd: Path) -> Any:
    done = subprocess.run(
        [str(BIN / "basedpyright"), "--outputjson", *args],
        capture_output=True,
        cwd=cwd,
        check=False,
        text=True,
        timeout=600,
    )
    return json.loads(done.stdout)


def test_basedpyright_reports_exactly_the_marked_lines(tmp_path: Path) -> None:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.10",
                "stubPath": str(ROOT / "typings"),
                "enableTypeIgnoreComments": False,
                "extraPaths": [str(ROOT)],
            }
        ),
        "utf-8",
    )
    files = [*FILES, exports_view(tmp_path)]
    report = _basedpyright(
        "--project", str(config), "--pythonpath", sys.executable, *map(str, files), cwd=tmp_path
    )
    found: dict[str, set[int]] = {path.name: set() for path in files}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            found[Path(diagnostic["file"]).name].add(diagnostic["range"]["start"]["line"] + 1)
    expected = {path.name: expected_lines(path) for path in files}
    assert found == expected


_CONSTRUCTING = """
from envelopekit.babelqueue import BabelMeta
from envelopekit.matrix import MxErrorPayload, MxRequest
from envelopekit.som import OriginatingSystem, StoryContext

story = StoryContext(
    story_id="s-1",
    slug="S",
    headline="Headline",
    story_type="PLANNED",
    sequence_number=1,
    updated_at="2026-09-11T16:41:00Z",
)
system = OriginatingSystem(system_id="ncs-1", system_type="ncs")
request: MxRequest[dict[str, str]] = MxRequest(op="fs.list", payload={}, correlation_id="c-1")
failed = MxErrorPayload(ok=False, error="gone", status_code=404)
meta = BabelMeta(
    id="0190a000-0000-4000-8000-000000000001",
    queue="orders",
    lang="python",
    schema_version=1,
    created_at=0,
)
"""


README_BLOCKS = re.findall(
    r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), flags=re.S
)


def test_basedpyright_standard_accepts_the_readme_code_blocks(tmp_path: Path) -> None:
    """What a user pasting the README into a project sees: pyright's standard mode."""
    assert len(README_BLOCKS) >= 6
    for index, block in enumerate(README_BLOCKS):
        (tmp_path / f"readme_block_{index}.py").write_text(block, "utf-8")
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "standard", "pythonVersion": "3.10"}), "utf-8"
    )
    report = _basedpyright("--pythonpath", sys.executable, cwd=tmp_path)
    errors = [
        f"{Path(d['file']).name}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert report["summary"]["filesAnalyzed"] == len(README_BLOCKS)
    assert errors == []
