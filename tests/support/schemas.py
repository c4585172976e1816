"""Reading JSON Schema documents in tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def objects_with(node: Any, key: str) -> Iterator[dict[str, Any]]:
    """Every object in the JSON document ``node`` that holds ``key``, in document order."""
    if isinstance(node, dict):
        if key in node:
            yield node
        for value in node.values():
            yield from objects_with(value, key)
    elif isinstance(node, list):
        for item in node:
            yield from objects_with(item, key)
