"""The Matrix README section runs as written; each example message gets its named verdict."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import envelopekit as ek

ROOT = Path(__file__).resolve().parents[2]
SECTION = ROOT / "src" / "envelopekit" / "matrix" / "README_SECTION.md"
BLOCKS = re.findall(r"```python\n(.*?)```", SECTION.read_text("utf-8"), flags=re.S)
EXAMPLES = sorted((ROOT / "examples" / "messages" / "matrix").glob("*.json"))


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block-{i}" for i in range(len(BLOCKS))])
def test_section_block_runs(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code, str(SECTION), "exec"), {"__name__": "readme"})


def test_section_has_the_three_examples() -> None:
    assert len(BLOCKS) >= 3
    text = SECTION.read_text("utf-8")
    for needle in (".create(", ".reply(", ".fail(", "Deliberate differences"):
        assert needle in text


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_message(path: Path) -> None:
    verdict = ek.check(path.read_bytes(), spec="auto")
    assert verdict.spec == "matrix"
    assert verdict.ok is not path.name.startswith("invalid-"), verdict.violations
    assert len(EXAMPLES) >= 6
