"""URN naming: the ``urn:babel:<context>:<event>`` convention, as a producer lint.

The convention is not enforced by any SDK ("not enforced, to preserve flexibility"), so a URN
off it is never refused on input; producers can lint theirs before publishing.
"""

from __future__ import annotations

import re
from typing import Final

from .. import rules
from .._violations import Violation, shown, violation

__all__ = [
    "ASCII_WHITESPACE",
    "NOT_BLANK_PATTERN",
    "URN_CONVENTION",
    "is_blank",
    "lint_urn",
    "routed_urn",
]

ASCII_WHITESPACE: Final = " \t\n\v\f\r"
"""The closed blank set shared by every SDK: a URN of only these characters is blank
(Unicode spaces such as U+00A0 are not blank)."""

NOT_BLANK_PATTERN: Final = f"[^{ASCII_WHITESPACE}]"
"""A JSON Schema ``pattern`` (searched, not anchored) a string matches unless it is blank: a
character outside :data:`ASCII_WHITESPACE`."""

URN_CONVENTION: Final = re.compile(
    r"\Aurn:babel:[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*:[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*\Z"
)
"""Lowercase ``urn:babel:<context>:<event>``, each segment dot-subdivided (``…:created.v2``)."""


def is_blank(value: str) -> bool:
    """Whether ``value`` is empty or only ASCII whitespace."""
    # `strip(chars)` looks each character up in `chars` (3.6 ms for a MiB of spaces); `isspace`
    # is a table's, and among ASCII characters only U+001C..U+001F are spaces and not blank.
    return not value or (
        value.isascii() and value.isspace() and not any(c in value for c in _ASCII_NOT_BLANK)
    )


_ASCII_NOT_BLANK: Final = "\x1c\x1d\x1e\x1f"


def routed_urn(urn: str) -> str:
    """The URN a handler is registered and looked up under: without surrounding ASCII whitespace.

    As :meth:`BabelEnvelope.create` writes it, and as the SDKs that trim ``job`` read it
    (babelqueue.md 1.1): ``urn.strip(ASCII_WHITESPACE)``, at ``strip()``'s cost.
    """
    # `strip()` reads a table; `strip(chars)` looks each character up (7 ms for a MiB of
    # spaces, a received message's). The table's is taken where what it removed is blank.
    core = urn.strip()
    if len(core) == len(urn):
        return urn
    start = len(urn) - len(urn.lstrip())
    end = start + len(core)
    if is_blank(urn[:start]) and is_blank(urn[end:]):
        return urn[start:end]
    return urn.strip(ASCII_WHITESPACE)  # U+3000, U+0085, U+001C... are not blank: kept


def lint_urn(urn: str) -> list[Violation]:
    """Warnings for a URN off the naming convention (empty when it follows it).

    Args:
        urn: the URN a producer is about to use.

    Returns:
        ``urn.convention`` warnings pointing at ``/job``; never a refusal.
    """
    if URN_CONVENTION.match(urn):
        return []
    return [
        violation(
            rules.URN_CONVENTION,
            "/job",
            f"{shown(urn)} does not follow urn:babel:<context>:<event> "
            "(lowercase, dot-subdivided segments).",
        )
    ]
