"""Producer and consumer settings, read from ``ENVELOPEKIT_*`` environment variables."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, StringConstraints
from pydantic_settings import BaseSettings, SettingsConfigDict

from ._arguments import optional_argument

__all__ = ["Settings", "get_settings", "given_settings"]

# A variable holding bytes that are not UTF-8 reaches Python as a lone surrogate
# (surrogateescape), which no JSON text can carry. A length bound, even 0, makes pydantic-core
# read the string as Unicode and refuse it (`string_unicode`); a bare `str` passes it through.
_Text: TypeAlias = Annotated[str, StringConstraints(min_length=0)]


class Settings(BaseSettings):
    """Defaults the SDK uses when a call does not say otherwise.

    Every field is read from the environment variable ``ENVELOPEKIT_<FIELD>`` (case-insensitive);
    the README has the table. Build one explicitly (``Settings(babelqueue_queue="orders")``) in
    tests and pass it where a function takes ``settings=``.
    """

    # An empty variable is an unset one, as a shell's `VAR= command` means it.
    model_config = SettingsConfigDict(
        env_prefix="ENVELOPEKIT_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    babelqueue_queue: Annotated[_Text, StringConstraints(min_length=1)] = "default"
    """The logical queue BabelQueue messages are produced onto when none is given."""

    som_system_id: _Text | None = None
    """`originating_system.system_id` of SOM messages produced here."""
    som_system_type: _Text = "custom"
    """`originating_system.system_type` of SOM messages produced here."""
    som_system_name: _Text | None = None
    """`originating_system.system_name` of SOM messages produced here, if any."""
    som_version_mode: Literal["strict", "tolerant"] = "strict"
    """`strict` accepts only som_version 1.0.0, as the official tools; `tolerant` any 1.x."""

    matrix_from: _Text | None = None
    """The `from` actor written on Matrix requests produced here."""

    max_message_bytes: int = Field(default=1_048_576, ge=1)
    """Messages larger than this are refused by `check` (`message.too_large`)."""
    max_depth: int = Field(default=64, ge=1)
    """Messages nesting objects/arrays deeper than this are refused (`message.too_deep`)."""
    max_violations: int = Field(default=100, ge=1)
    """At most this many violations (and as many warnings) per message; past it, one
    `violations.truncated` says how many more there were, and they are not built."""
    duplicate_keys: Literal["allow", "warn", "refuse"] = "allow"
    """What `check` does with an object that repeats a member name (`json.duplicate_key`):
    parsers disagree on which value wins, so a relay may read another message than its
    consumer. Detecting it costs a second parse, so it is opt-in."""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment (``cache_clear()`` re-reads)."""
    return Settings()


def given_settings(settings: object) -> Settings:
    """The ``settings=`` a public call was given, or the environment's for ``None``.

    Raises:
        TypeError: for anything but a :class:`Settings` or ``None``, naming ``settings``.
    """
    given = optional_argument("settings", settings, Settings)
    return get_settings() if given is None else given
