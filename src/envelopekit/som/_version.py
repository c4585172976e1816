"""The wire version: ``som_version``, what producers emit and what consumers accept of it.

The envelope schema only asks for a semantic version; SOM 1.0's conformance layer asks for
1.0.0 (the official tools), and the SOM Managed Bus also takes any 1.x (tolerant mode).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, TypeAlias

from pydantic import StringConstraints

from .. import rules
from .._settings import get_settings
from .._violations import rule_error
from ._types import SEMVER_PATTERN

__all__ = ["SOM_VERSION", "SomVersion", "VersionMode", "supported_version"]

SOM_VERSION: Final = "1.0.0"
"""The wire version SOM 1.0 producers emit, and the only one the official tools accept."""

VersionMode: TypeAlias = Literal["strict", "tolerant"]
"""``strict``: only ``1.0.0`` (the official tools); ``tolerant``: any ``1.x.y`` (the bus)."""

SomVersion: TypeAlias = Annotated[str, StringConstraints(strict=True, pattern=SEMVER_PATTERN)]


def supported_version(value: str, mode: str | None) -> str:
    """``value`` when the version ``mode`` accepts it (the settings' mode when ``None``).

    Raises:
        PydanticCustomError: ``som_version.pre_1_0``, ``som_version.unsupported_major``, or
            ``som_version.unsupported_minor`` (a 1.x other than 1.0.0 in strict mode).
    """
    if value == SOM_VERSION:
        return value
    # Compared as text: the pattern allows more digits than int() converts, and zeros lead.
    major = value.partition(".")[0].lstrip("0")
    if not major:
        raise rule_error(
            rules.SOM_VERSION_PRE_1_0, f"som_version {value} is pre-1.0 and not SOM 1.0 conformant"
        )
    if major != "1":
        raise rule_error(rules.SOM_VERSION_UNSUPPORTED_MAJOR, f"som_version {value} is not SOM 1.x")
    if (mode or get_settings().som_version_mode) == "tolerant":
        return value
    raise rule_error(
        rules.SOM_VERSION_UNSUPPORTED_MINOR,
        f"som_version {value} is not 1.0.0 (accepted only in tolerant mode)",
    )
