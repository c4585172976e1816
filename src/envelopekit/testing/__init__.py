"""Hypothesis strategies for consumers' tests: valid messages, and messages breaking one rule.

```python
from hypothesis import HealthCheck, given, settings
import envelopekit as ek
from envelopekit.testing import invalid_messages

@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(invalid_messages("babelqueue", rule="message-envelope.required"))
def test_consumer_refuses(raw: bytes) -> None:
    assert "message-envelope.required" in ek.check(raw, spec="babelqueue").rules()

test_consumer_refuses()
```

Needs the ``testing`` extra (``pip install 'envelopekit[testing]'``: hypothesis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _extras

try:
    import hypothesis  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - exercised without the extra only
    raise _extras.missing_extra("envelopekit.testing", "testing", exc) from exc

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from ._messages import NAMED_RULES as NAMED_RULES
    from ._messages import TOOLING as TOOLING
    from ._messages import UNBREAKABLE as UNBREAKABLE
    from ._messages import UNBREAKABLE_KEYWORDS as UNBREAKABLE_KEYWORDS
    from ._messages import MatrixKind as MatrixKind
    from ._messages import breakable_rules as breakable_rules
    from ._messages import catalogued_rules as catalogued_rules
    from ._messages import invalid_messages as invalid_messages
    from ._messages import unbreakable as unbreakable
    from ._messages import valid_documents as valid_documents
    from ._messages import valid_messages as valid_messages
else:
    from .._exports import attach as _attach

    __all__, __getattr__, __dir__ = _attach(__name__)
