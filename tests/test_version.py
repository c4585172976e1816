"""``--version``, from the installed console script and from ``python -m envelopekit``."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

import envelopekit as ek
from tests.test_cli import ENTRY, ROOT


def test_the_version_is_the_distribution_s() -> None:
    assert ek.__version__ == version("envelopekit")


@pytest.mark.parametrize("how", ["console-script", "python -m"])
def test_version_prints_the_version(how: str) -> None:
    assert ENTRY is not None
    command = [ENTRY] if how == "console-script" else [sys.executable, "-m", "envelopekit"]
    done = subprocess.run(
        [*command, "--version"], capture_output=True, cwd=ROOT, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == f"envelopekit {ek.__version__}\n"
    assert done.stderr == b""
