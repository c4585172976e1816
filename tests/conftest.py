"""Shared fixtures: paths to the vendored data, and settings isolated from the environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from envelopekit import get_settings

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test depends on the ambient ENVELOPEKIT_* environment."""
    import os

    for name in list(os.environ):
        if name.upper().startswith("ENVELOPEKIT_"):
            monkeypatch.delenv(name)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
