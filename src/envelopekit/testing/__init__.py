"""Hypothesis strategies for consumers' tests: valid messages, and messages breaking one rule.

```python
from hypothesis import given
from ..testing import invalid_messages, valid_messages

@given(invalid_messages("som", rule="story-context.enum"))
def test_consumer_refuses(raw: bytes) -> None: ...
```

Needs the ``testing`` extra (``pip install 'envelopekit[testing]'``: hypothesis).
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - exercised without the extra only
    raise ImportError(
        "envelopekit.testing needs hypothesis: pip install 'envelopekit[testing]'"
    ) from exc

from ._messages import (
    NAMED_RULES,
    TOOLING,
    UNBREAKABLE,
    UNBREAKABLE_KEYWORDS,
    MatrixKind,
    breakable_rules,
    catalogued_rules,
    invalid_messages,
    unbreakable,
    valid_documents,
    valid_messages,
)

__all__ = [
    "NAMED_RULES",
    "TOOLING",
    "UNBREAKABLE",
    "UNBREAKABLE_KEYWORDS",
    "MatrixKind",
    "breakable_rules",
    "catalogued_rules",
    "invalid_messages",
    "unbreakable",
    "valid_documents",
    "valid_messages",
]
