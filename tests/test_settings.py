"""Settings come from ENVELOPEKIT_* environment variables."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import envelopekit as ek


def test_defaults() -> None:
    settings = ek.Settings()
    assert settings.babelqueue_queue == "default"
    assert settings.som_system_type == "custom"
    assert settings.som_version_mode == "strict"
    assert settings.max_message_bytes == 1_048_576


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_BABELQUEUE_QUEUE", "orders")
    monkeypatch.setenv("envelopekit_som_version_mode", "tolerant")
    monkeypatch.setenv("ENVELOPEKIT_MAX_DEPTH", "8")
    ek.get_settings.cache_clear()
    settings = ek.get_settings()
    assert settings.babelqueue_queue == "orders"
    assert settings.som_version_mode == "tolerant"
    assert settings.max_depth == 8


def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_SOM_VERSION_MODE", "loose")
    with pytest.raises(ValidationError):
        ek.Settings()


def test_an_empty_variable_is_an_unset_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # `ENVELOPEKIT_BABELQUEUE_QUEUE= command` means "not set" in a shell, not "the queue ''".
    monkeypatch.setenv("ENVELOPEKIT_BABELQUEUE_QUEUE", "")
    monkeypatch.setenv("ENVELOPEKIT_SOM_SYSTEM_ID", "")
    monkeypatch.setenv("ENVELOPEKIT_MAX_DEPTH", "")
    settings = ek.Settings()
    assert settings.babelqueue_queue == "default"
    assert settings.som_system_id is None
    assert settings.max_depth == 64


def test_settings_are_frozen() -> None:
    with pytest.raises(ValidationError):
        ek.Settings().max_depth = 3  # type: ignore[misc]
