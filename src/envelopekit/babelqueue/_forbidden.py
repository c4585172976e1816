"""The forbidden, non-canonical keys of early drafts (envelope page, "Forbidden fields").

Policy K-15: a consumer drops them with a warning naming the key, never refuses the message,
and never re-emits them.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FORBIDDEN_META_KEYS", "FORBIDDEN_TOP_LEVEL_KEYS"]

FORBIDDEN_TOP_LEVEL_KEYS: Final[dict[str, str]] = {"timestamp": "meta.created_at (Unix ms)"}
"""Forbidden top-level key -> what to use instead."""

FORBIDDEN_META_KEYS: Final[dict[str, str]] = {
    "max_retries": "consumer-side config or a per-URN policy",
    "attempts": "the top-level attempts",
    "source": "meta.lang",
    "ts": "meta.created_at",
}
"""Forbidden ``meta`` key -> what to use instead."""
