"""The README's narrowing of ``MISSING`` passes both type checkers, each run as a subprocess."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), flags=re.S)
MISSING_BLOCK = next(block for block in BLOCKS if "is not ek.MISSING" in block)
BIN = Path(sys.executable).parent

CHECKERS = {
    "mypy": [str(BIN / "mypy"), "--strict", "--no-incremental", "--config-file", "/dev/null"],
    "basedpyright": [str(BIN / "basedpyright"), "--pythonpath", sys.executable],
}


def _check(checker: str, source: Path, text: str) -> subprocess.CompletedProcess[str]:
    source.write_text(text, "utf-8")
    return subprocess.run(
        [*CHECKERS[checker], str(source)],
        capture_output=True,
        cwd=source.parent,
        check=False,
        timeout=300,
        text=True,
    )


@pytest.mark.parametrize("checker", list(CHECKERS))
def test_the_missing_narrowing_type_checks(checker: str, tmp_path: Path) -> None:
    done = _check(checker, tmp_path / "readme_missing.py", MISSING_BLOCK)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("checker", list(CHECKERS))
def test_a_truthiness_test_is_not_narrowing(checker: str, tmp_path: Path) -> None:
    """The checkers do see the difference: `if value:` leaves `MISSING` in the type."""
    done = _check(
        checker,
        tmp_path / "truthy.py",
        "import envelopekit as ek\n"
        "from envelopekit.matrix import MxRequest\n\n\n"
        "def reply_address(req: MxRequest) -> str | None:\n"
        "    if req.reply_to:\n"
        "        return req.reply_to\n"
        "    return None\n",
    )
    assert done.returncode != 0
    assert "truthy.py:7:" in done.stdout, done.stdout
