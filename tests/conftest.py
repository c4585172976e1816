"""Shared fixtures: paths to the vendored data, and settings isolated from the environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from envelopekit import get_settings

DATA = Path(__file__).parent / "data"

# CI replays the same examples on every run (a red CI must mean a regression, not a new draw);
# local runs keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test depends on the ambient ENVELOPEKIT_* environment."""
    for name in list(os.environ):
        if name.upper().startswith("ENVELOPEKIT_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
