"""The README's Matrix section is there (tests/test_readme.py runs its code); each example
message gets the verdict its name promises."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import envelopekit as ek

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
SECTION = README[README.index("## Matrix MxEnvelope") :].split("\n## ", 1)[0]
BLOCKS = re.findall(r"```python\n(.*?)```", SECTION, flags=re.S)
EXAMPLES = sorted((ROOT / "examples" / "messages" / "matrix").glob("*.json"))


def test_section_has_the_three_examples() -> None:
    assert len(BLOCKS) >= 3
    for needle in (".create(", ".reply(", ".fail(", "Deliberate differences"):
        assert needle in SECTION


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_message(path: Path) -> None:
    verdict = ek.check(path.read_bytes(), spec="auto")
    assert verdict.spec == "matrix"
    assert verdict.ok is not path.name.startswith("invalid-"), verdict.violations
    assert len(EXAMPLES) >= 6
