"""The wire version: 1.0.0 only (strict, the official tools), or any 1.x (tolerant, the bus)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import Settings
from envelopekit.som import SomEnvelope
from tests.som._corpus import DATA, positive_envelope

BASE = positive_envelope(DATA / "examples/telling/started.json")
STRICT = Settings(som_version_mode="strict")
TOLERANT = Settings(som_version_mode="tolerant")


def _raw(version: str) -> bytes:
    return json.dumps({**BASE, "som_version": version}).encode()


def _rules(verdict: ek.Verdict[SomEnvelope]) -> list[str]:
    return [v.rule for v in verdict.violations]


def test_1_0_0_is_accepted_in_both_modes() -> None:
    for settings in (STRICT, TOLERANT):
        verdict = ek.check(_raw("1.0.0"), spec="som", settings=settings)
        assert verdict.ok and verdict.warnings == []


@pytest.mark.parametrize("version", ["0.3.2", "0.9.9", "0.0.0", "00.1.0"])
def test_pre_1_0_is_refused_in_both_modes(version: str) -> None:
    for settings in (STRICT, TOLERANT):
        verdict = ek.check(_raw(version), spec="som", settings=settings)
        assert _rules(verdict) == ["som_version.pre_1_0"]
        assert verdict.violations[0].pointer == "/som_version"
        assert verdict.violations[0].source == "conformance"


@pytest.mark.parametrize("version", ["2.0.0", "10.0.0", "3.1.4"])
def test_another_major_is_refused_in_both_modes(version: str) -> None:
    for settings in (STRICT, TOLERANT):
        verdict = ek.check(_raw(version), spec="som", settings=settings)
        assert _rules(verdict) == ["som_version.unsupported_major"]
        assert verdict.violations[0].source == "policy"


@pytest.mark.parametrize("version", ["1.1.0", "1.0.1", "1.12.3", "01.0.0"])
def test_other_1_x_is_refused_strict_and_tolerated_with_a_warning(version: str) -> None:
    strict = ek.check(_raw(version), spec="som", settings=STRICT)
    assert _rules(strict) == ["som_version.unsupported_minor"]
    tolerant = ek.check(_raw(version), spec="som", settings=TOLERANT)
    assert tolerant.ok
    assert [w.rule for w in tolerant.warnings] == ["som_version.unsupported_minor"]
    assert tolerant.envelope is not None and tolerant.envelope.som_version == version


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "1.0.0\n", "١.0.0", "1.0.0-rc1", ""])
def test_off_pattern_versions_are_a_schema_pattern_failure(version: str) -> None:
    for settings in (STRICT, TOLERANT):
        assert _rules(ek.check(_raw(version), spec="som", settings=settings)) == [
            "envelope.pattern"
        ]


def test_som_version_must_be_a_string() -> None:
    raw = json.dumps({**BASE, "som_version": 1}).encode()
    assert _rules(ek.check(raw, spec="som")) == ["envelope.type"]


def test_model_validate_json_takes_the_mode_from_context_or_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate_json(_raw("1.1.0"))
    assert [v.rule for v in ek.violations(caught.value)] == ["som_version.unsupported_minor"]
    env = SomEnvelope.model_validate_json(_raw("1.1.0"), context={"som_version_mode": "tolerant"})
    assert env.som_version == "1.1.0"
    monkeypatch.setenv("ENVELOPEKIT_SOM_VERSION_MODE", "tolerant")
    ek.get_settings.cache_clear()
    assert SomEnvelope.model_validate_json(_raw("1.1.0")).som_version == "1.1.0"
    assert ek.check(_raw("1.1.0"), spec="som").ok


@pytest.mark.parametrize(
    ("version", "strict_rule"),
    [
        ("1" * 5000 + ".0.0", "som_version.unsupported_major"),
        ("0" * 5000 + ".0.0", "som_version.pre_1_0"),
        ("0" * 5000 + "1.2.0", "som_version.unsupported_minor"),
        ("0" * 4999 + "2.0.0", "som_version.unsupported_major"),
        ("1." + "9" * 5000 + ".0", "som_version.unsupported_minor"),
    ],
    ids=["5000-ones", "5000-zeros", "zero-padded-1", "zero-padded-2", "long-minor"],
)
def test_a_very_long_version_gets_its_version_rule(version: str, strict_rule: str) -> None:
    # Beyond Python's int() digit limit: the major is compared as text.
    strict = ek.check(_raw(version), spec="som", settings=STRICT)
    assert _rules(strict) == [strict_rule]
    assert strict.violations[0].pointer == "/som_version"
    tolerant = ek.check(_raw(version), spec="som", settings=TOLERANT)
    if strict_rule == "som_version.unsupported_minor":
        assert tolerant.ok
    else:
        assert _rules(tolerant) == [strict_rule]
