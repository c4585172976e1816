"""envelopekit: strict, typed Pydantic v2 models for BabelQueue v1, Matrix MxEnvelope and SOM 1.0.

```python
import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
verdict = ek.check(env.to_json(), spec="babelqueue")
```

The spec packages (:mod:`envelopekit.babelqueue`, :mod:`envelopekit.som`,
:mod:`envelopekit.matrix`) are imported on first use, so ``import envelopekit`` stays light.
"""

from __future__ import annotations

import logging

from . import rules
from ._check import SPECS, check, detect
from ._errors import EnvelopekitError, ProducerError
from ._schema import json_schema
from ._settings import Settings, get_settings
from ._violations import Verdict, Violation, violations

__version__ = "0.1.0.dev0"

# A library logs; the application decides where that goes.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "SPECS",
    "EnvelopekitError",
    "ProducerError",
    "Settings",
    "Verdict",
    "Violation",
    "__version__",
    "check",
    "detect",
    "get_settings",
    "json_schema",
    "rules",
    "violations",
]
