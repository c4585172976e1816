"""envelopekit: strict, typed Pydantic v2 models for BabelQueue v1, Matrix MxEnvelope and SOM 1.0.

```python
import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
verdict = ek.check(env.to_json(), spec="babelqueue")
```

Names here load on first use, as pydantic's own do, so ``import envelopekit`` costs almost
nothing; the spec packages (:mod:`envelopekit.babelqueue`, :mod:`envelopekit.som`,
:mod:`envelopekit.matrix`) build their models when imported.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import rules
    from ._check import SPECS, check, detect
    from ._compat import MISSING
    from ._errors import (
        DecryptError,
        EnvelopekitError,
        InvalidPayloadError,
        ProducerError,
        SchemaRegistryError,
        SeenStoreUnavailable,
        UnknownUrnError,
    )
    from ._schema import json_schema
    from ._settings import Settings, get_settings
    from ._violations import Verdict, Violation, violations

__version__ = "0.1.0.dev0"

__all__ = [
    "MISSING",
    "SPECS",
    "DecryptError",
    "EnvelopekitError",
    "InvalidPayloadError",
    "ProducerError",
    "SchemaRegistryError",
    "SeenStoreUnavailable",
    "Settings",
    "UnknownUrnError",
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

# name -> the module (relative to this package) that defines it.
_LAZY: dict[str, str] = {
    "MISSING": "._compat",
    "SPECS": "._check",
    "check": "._check",
    "detect": "._check",
    "EnvelopekitError": "._errors",
    "ProducerError": "._errors",
    "DecryptError": "._errors",
    "InvalidPayloadError": "._errors",
    "SchemaRegistryError": "._errors",
    "SeenStoreUnavailable": "._errors",
    "UnknownUrnError": "._errors",
    "json_schema": "._schema",
    "Settings": "._settings",
    "get_settings": "._settings",
    "Verdict": "._violations",
    "Violation": "._violations",
    "violations": "._violations",
    "rules": ".rules",
}

# A library logs; the application decides where that goes.
logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(module, __name__)
    value = loaded if name == "rules" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
