"""The conformance run covers the manifest: a section this SDK does not run fails here."""

from __future__ import annotations

from pathlib import Path

from tests.babelqueue.conformance._manifest import MANIFEST

HERE = Path(__file__).parent
# Manifest keys that are not sections of cases.
METADATA = {"schema_version", "description"}
# Each section -> the test module that runs it.
RUNNERS = {
    "cases": "test_cases.py",
    "roundtrip": "test_roundtrip.py",
    "data_shape": "test_data_shape.py",
    "forbidden_keys": "test_forbidden_keys.py",
}


def test_every_runner_exists() -> None:
    for module in RUNNERS.values():
        assert (HERE / module).is_file(), module


def test_the_envelope_sections_are_present() -> None:
    # A manifest that lost one of these must fail the run, never skip it.
    assert set(RUNNERS) <= set(MANIFEST)


def test_manifest_schema_version_is_one() -> None:
    assert MANIFEST["schema_version"] == 1
