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
    "idempotency": "test_idempotency.py",
    "sqs": "test_sqs.py",
    "asb": "test_asb.py",
    "pulsar": "test_pulsar.py",
    "kafka": "test_kafka.py",
    "artemis": "test_artemis.py",
    "redis": "test_redis.py",
    "rabbitmq": "test_rabbitmq.py",
    "payload_schema": "test_payload_schema.py",
    "payload_schema_unicode": "test_payload_schema_unicode.py",
}


def test_every_runner_exists() -> None:
    for module in RUNNERS.values():
        assert (HERE / module).is_file(), module


def test_the_envelope_sections_are_present() -> None:
    # A manifest that lost one of these must fail the run, never skip it.
    assert set(RUNNERS) <= set(MANIFEST)


def test_manifest_schema_version_is_one() -> None:
    assert MANIFEST["schema_version"] == 1


def test_every_manifest_section_has_a_runner() -> None:
    # A section the SDK does not run fails here: a newer manifest cannot pass by omission.
    sections = set(MANIFEST) - METADATA
    assert sections - set(RUNNERS) == set(), "manifest sections without a runner"
    assert set(RUNNERS) - sections == set(), "runners for sections the manifest no longer has"


def test_every_runner_reads_its_section() -> None:
    # Each runner asks the manifest for its own section (which fails when it is missing).
    for name, module in RUNNERS.items():
        assert f'section("{name}")' in (HERE / module).read_text(encoding="utf-8"), module
