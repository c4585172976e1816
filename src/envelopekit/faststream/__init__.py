"""FastStream integration (``pip install 'envelopekit[faststream]'``): typed, checked consumers.

```python
from faststream.redis import RedisBroker
from envelopekit.babelqueue import Router
from envelopekit.faststream import BabelQueueConsumer, babelqueue_subscriber

router = Router()
broker = RedisBroker("redis://127.0.0.1:6379")   # connects when the app starts
consumer = babelqueue_subscriber(broker, "orders", router, worker_id="worker-1")
assert isinstance(consumer, BabelQueueConsumer)
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _extras

# At import, as envelopekit.testing does: a name read later would fail deep inside instead.
try:
    import faststream  # noqa: F401  # pyright: ignore[reportUnusedImport]
    import anyio  # noqa: F401  # pyright: ignore[reportUnusedImport]  # isort: skip
except ImportError as exc:  # pragma: no cover - exercised without the extra only
    raise _extras.missing_extra("envelopekit.faststream", "faststream", exc) from exc

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from ._babelqueue import BabelQueueConsumer as BabelQueueConsumer
    from ._babelqueue import babelqueue_subscriber as babelqueue_subscriber
    from ._endpoint import RULES_HEADER as RULES_HEADER
    from ._endpoint import Broker as Broker
    from ._endpoint import broker_kind as broker_kind
    from ._redis import BareFormat as BareFormat
    from ._redis import processing_key as processing_key
    from ._som_matrix import MatrixConsumer as MatrixConsumer
    from ._som_matrix import MatrixHandler as MatrixHandler
    from ._som_matrix import SomConsumer as SomConsumer
    from ._som_matrix import matrix_subscriber as matrix_subscriber
    from ._som_matrix import som_subscriber as som_subscriber
else:
    from .._exports import attach as _attach

    __all__, __getattr__, __dir__ = _attach(__name__)
