"""Settings come from ENVELOPEKIT_* environment variables."""

from __future__ import annotations

import os

import orjson
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


def test_an_empty_queue_is_refused() -> None:
    with pytest.raises(ValidationError) as raised:
        ek.Settings(babelqueue_queue="")
    assert [(e["type"], e["loc"]) for e in raised.value.errors()] == [
        ("string_too_short", ("babelqueue_queue",))
    ]


def test_settings_are_frozen() -> None:
    with pytest.raises(ValidationError):
        ek.Settings().max_depth = 3  # type: ignore[misc]


def _takes_text(name: str) -> bool:
    try:
        return bool(getattr(ek.Settings.model_validate({name: "word"}), name) == "word")
    except ValidationError:
        return False


# The settings that take free text: those a plain word is a value of (not a choice, a number).
TEXT_SETTINGS = [name for name in ek.Settings.model_fields if _takes_text(name)]


def test_the_text_settings_are_found() -> None:
    assert set(TEXT_SETTINGS) >= {"babelqueue_queue", "som_system_type", "matrix_from"}


@pytest.mark.parametrize("name", TEXT_SETTINGS)
def test_a_variable_of_bytes_no_json_text_carries_is_refused(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bytes that are not UTF-8 reach Python as a lone surrogate (surrogateescape); accepted, it
    # made `model_dump_json()` raise and every message produced from it unwritable.
    monkeypatch.setenv(f"ENVELOPEKIT_{name.upper()}", os.fsdecode(b"desk-\xff"))
    with pytest.raises(ValidationError) as raised:
        ek.Settings()
    [error] = raised.value.errors()
    assert (error["type"], error["loc"]) == ("string_unicode", (name,))
    with pytest.raises(ValidationError) as given:
        ek.Settings.model_validate({name: "desk-\udcff"})
    assert [(e["type"], e["loc"]) for e in given.value.errors()] == [("string_unicode", (name,))]


@pytest.mark.parametrize("name", TEXT_SETTINGS)
def test_a_text_setting_of_any_unicode_is_kept_and_written(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(f"ENVELOPEKIT_{name.upper()}", "rédaction-\U0001f4f0")
    settings = ek.Settings()
    assert getattr(settings, name) == "rédaction-\U0001f4f0"
    assert orjson.loads(settings.model_dump_json())[name] == "rédaction-\U0001f4f0"
