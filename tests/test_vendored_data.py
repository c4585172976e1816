"""Every vendored data set is byte-for-byte what its SHA256SUMS pins."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import DATA

SUMS = sorted(DATA.glob("*/SHA256SUMS"))


def _entries() -> list[tuple[Path, str, str]]:
    rows = []
    for sums in SUMS:
        for line in sums.read_text().splitlines():
            digest, name = line.split(maxsplit=1)
            rows.append((sums.parent, name.removeprefix("./"), digest))
    return rows


def test_every_data_set_is_pinned() -> None:
    assert {p.parent.name for p in SUMS} >= {"babelqueue"}


ENTRIES = _entries()


@pytest.mark.parametrize(
    ("root", "name", "digest"), ENTRIES, ids=[f"{r.name}/{n}" for r, n, _ in ENTRIES]
)
def test_file_matches_its_checksum(root: Path, name: str, digest: str) -> None:
    assert hashlib.sha256((root / name).read_bytes()).hexdigest() == digest
