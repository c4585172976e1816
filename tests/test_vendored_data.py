"""Every vendored data set is byte-for-byte what its SHA256SUMS pins, and nothing goes unpinned."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import DATA

SUMS = sorted(DATA.glob("*/SHA256SUMS"))

# The files of each data set that are ours, not upstream, so not pinned (each README says so).
OURS = {
    "api": {"README.md"},
    "asyncapi": {"README.md"},
    "babelqueue": {"README.md"},
    "matrix": {"README.md", "cases.json"},
    "som": {"README.md", "expected-rules.json"},
}


def _entries() -> list[tuple[Path, str, str]]:
    rows = []
    for sums in SUMS:
        for line in sums.read_text().splitlines():
            digest, name = line.split(maxsplit=1)
            rows.append((sums.parent, name.removeprefix("./"), digest))
    return rows


ENTRIES = _entries()


def test_every_data_set_is_pinned() -> None:
    # A data set whose SHA256SUMS went missing is a failure here, not a silently smaller suite.
    data_sets = {path.name for path in DATA.iterdir() if path.is_dir()}
    assert data_sets == set(OURS)
    assert {sums.parent.name for sums in SUMS} == data_sets


@pytest.mark.parametrize("name", sorted(OURS))
def test_every_upstream_file_is_pinned(name: str) -> None:
    root = DATA / name
    present = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.name != "SHA256SUMS" and "__pycache__" not in path.parts
    }
    pinned = {entry for found, entry, _ in ENTRIES if found == root}
    assert pinned, f"{name}/SHA256SUMS pins nothing"
    assert present - OURS[name] == pinned
    assert OURS[name] <= present


@pytest.mark.parametrize(
    ("root", "name", "digest"), ENTRIES, ids=[f"{r.name}/{n}" for r, n, _ in ENTRIES]
)
def test_file_matches_its_checksum(root: Path, name: str, digest: str) -> None:
    assert hashlib.sha256((root / name).read_bytes()).hexdigest() == digest
