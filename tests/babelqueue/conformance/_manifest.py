"""The vendored BabelQueue conformance manifest, and what each section's runner needs."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import DATA

ROOT = DATA / "babelqueue"
MANIFEST: dict[str, Any] = json.loads((ROOT / "manifest.json").read_text(encoding="utf-8"))


def section(name: str) -> Any:
    """A manifest section; a missing one fails the run (it is never skipped)."""
    assert name in MANIFEST, f"the manifest has no {name!r} section"
    return MANIFEST[name]


def fixture_bytes(relative: str) -> bytes:
    """The raw bytes of a fixture the manifest names."""
    return (ROOT / relative).read_bytes()


def at_pointer(document: Any, pointer: str) -> Any:
    """Resolve an RFC 6901 pointer."""
    node = document
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def strict_equal(a: Any, b: Any) -> bool:
    """Deep equality that also compares JSON types: true != 1, 1 != 1.0, {} != []."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def has_pointer(document: Any, pointer: str) -> bool:
    """Whether an RFC 6901 pointer resolves."""
    try:
        at_pointer(document, pointer)
    except (KeyError, IndexError, TypeError):
        return False
    return True
