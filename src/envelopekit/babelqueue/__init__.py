"""BabelQueue v1: the polyglot job-queue envelope ``{job, trace_id, data, meta, attempts}``.

```python
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}, queue="orders")
raw = env.to_json()                                   # what the six other SDKs read
again = BabelEnvelope.model_validate_json(raw)        # at the consuming boundary
```
"""

from __future__ import annotations

from ._dead_letter import DeadLetter, DeadLetterReason
from ._envelope import BabelEnvelope, DataT
from ._forbidden import FORBIDDEN_META_KEYS, FORBIDDEN_TOP_LEVEL_KEYS
from ._meta import LANGS, SCHEMA_VERSION, BabelMeta, Lang
from ._urn import ASCII_WHITESPACE, URN_CONVENTION, is_blank, lint_urn

__all__ = [
    "ASCII_WHITESPACE",
    "FORBIDDEN_META_KEYS",
    "FORBIDDEN_TOP_LEVEL_KEYS",
    "LANGS",
    "SCHEMA_VERSION",
    "URN_CONVENTION",
    "BabelEnvelope",
    "BabelMeta",
    "DataT",
    "DeadLetter",
    "DeadLetterReason",
    "Lang",
    "is_blank",
    "lint_urn",
]
