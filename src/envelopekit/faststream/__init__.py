"""FastStream integration (``pip install 'envelopekit[faststream]'``): typed, checked consumers.

```python
from faststream.redis import RedisBroker
from envelopekit.faststream import babelqueue_subscriber

broker = RedisBroker("redis://127.0.0.1:6379")
babelqueue_subscriber(broker, "orders", router, worker_id="worker-1")
```
"""

from __future__ import annotations

from ._babelqueue import BabelQueueConsumer, babelqueue_subscriber
from ._endpoint import RULES_HEADER, Broker, broker_kind
from ._redis import BareFormat, processing_key
from ._som_matrix import MatrixConsumer, SomConsumer, matrix_subscriber, som_subscriber

__all__ = [
    "RULES_HEADER",
    "BabelQueueConsumer",
    "BareFormat",
    "Broker",
    "MatrixConsumer",
    "SomConsumer",
    "babelqueue_subscriber",
    "broker_kind",
    "matrix_subscriber",
    "processing_key",
    "som_subscriber",
]
