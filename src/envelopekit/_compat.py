"""Imports whose home moved between the pydantic versions we support."""

from __future__ import annotations

try:  # pydantic >= 2.14
    from pydantic import MISSING
except ImportError:  # pragma: no cover - pydantic 2.12 and 2.13
    from pydantic.experimental.missing_sentinel import MISSING  # type: ignore[no-redef,unused-ignore]

__all__ = ["MISSING"]
