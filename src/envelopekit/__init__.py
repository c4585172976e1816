"""envelopekit: strict, typed Pydantic v2 models for BabelQueue v1, Matrix MxEnvelope and SOM 1.0.

```python
import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
verdict = ek.check(env.to_json(), spec="babelqueue")
assert verdict.ok and verdict.envelope == env
```

Names here load on first use, as pydantic's own do, so ``import envelopekit`` costs almost
nothing; the spec packages (:mod:`envelopekit.babelqueue`, :mod:`envelopekit.som`,
:mod:`envelopekit.matrix`) build their models when imported.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

__version__ = "0.1.0.dev0"

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from . import rules as rules
    from ._asyncapi import asyncapi_document as asyncapi_document
    from ._asyncapi import write_asyncapi as write_asyncapi
    from ._check import SPECS as SPECS
    from ._check import check as check
    from ._check import detect as detect
    from ._compat import MISSING as MISSING
    from ._errors import DecryptError as DecryptError
    from ._errors import EnvelopekitError as EnvelopekitError
    from ._errors import InvalidEnvelopeError as InvalidEnvelopeError
    from ._errors import InvalidPayloadError as InvalidPayloadError
    from ._errors import ProducerError as ProducerError
    from ._errors import SchemaRegistryError as SchemaRegistryError
    from ._errors import SeenStoreUnavailable as SeenStoreUnavailable
    from ._errors import UnknownUrnError as UnknownUrnError
    from ._schema import json_schema as json_schema
    from ._settings import Settings as Settings
    from ._settings import get_settings as get_settings
    from ._violations import Verdict as Verdict
    from ._violations import Violation as Violation
    from ._violations import violations as violations
else:
    from ._exports import attach as _attach

    # `check` and `detect`, called on every message, import nearly all that the other names
    # need (two of some 320 modules are left): the first use binds them all, the hook is gone.
    __all__, __getattr__, __dir__ = _attach(
        __name__, also=["__version__"], binding_all={"check", "detect"}
    )

# A library logs; the application decides where that goes.
logging.getLogger(__name__).addHandler(logging.NullHandler())
