"""The one error of a feature whose optional extra is not installed (pyproject.toml's extras)."""

from __future__ import annotations

__all__ = ["missing_extra"]


def missing_extra(feature: str, extra: str, missing: ImportError) -> ImportError:
    """The ``ImportError`` to raise ``from missing``: what ``feature`` lacks, and what to install.

    Args:
        feature: what the user reached for (``envelopekit.testing``, ``RedisSeenStore``).
        extra: the extra that brings it (``testing``, ``redis``).
        missing: the import that failed; its module's name is shown.
    """
    module = missing.name or str(missing)
    return ImportError(
        f"{feature} needs the {extra!r} extra ({module} is not installed): "
        f"pip install 'envelopekit[{extra}]'"
    )
