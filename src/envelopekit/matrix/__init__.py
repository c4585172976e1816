"""Matrix MxEnvelope: the request, response and error-payload envelopes of Matrix actors.

```python
from envelopekit.matrix import MxErrorCode, MxRequest

req = MxRequest.create("fs.list", {"path": "/home/ada"}, expect_reply=True)
wire = req.to_json()                      # send it; the reply goes to req.reply_to
got = MxRequest.model_validate_json(wire)
ok = got.reply({"ok": True, "count": 0, "items": []})
err = got.fail(MxErrorCode.NOT_FOUND, "no such directory")   # statusCode 404
```

The three models mirror the three JSON Schemas of the Matrix "Envelope schemas" page;
:func:`classify` (and ``envelopekit.check(raw, spec="matrix")``) tells them apart by ``op``.
"""

from __future__ import annotations

from ._base import JsonData
from ._classify import MESSAGE_ADAPTER, MxMessage, classify, message_kind
from ._conventions import IdempotencyKey, Page, SuccessPayload, WriteArgs
from ._error_payload import MxErrorCode, MxErrorPayload
from ._lamport import LamportClock
from ._ops import (
    JOIN_OP,
    REPLY_OP,
    REPLY_PREFIX,
    SYSTEM_OPS,
    is_system_op,
    op_problem,
    reply_inbox,
)
from ._request import MxRequest
from ._response import MxResponse
from ._trace import SpanId, TraceId, is_span_id, is_trace_id

__all__ = [
    "JOIN_OP",
    "MESSAGE_ADAPTER",
    "REPLY_OP",
    "REPLY_PREFIX",
    "SYSTEM_OPS",
    "IdempotencyKey",
    "JsonData",
    "LamportClock",
    "MxErrorCode",
    "MxErrorPayload",
    "MxMessage",
    "MxRequest",
    "MxResponse",
    "Page",
    "SpanId",
    "SuccessPayload",
    "TraceId",
    "WriteArgs",
    "classify",
    "is_span_id",
    "is_system_op",
    "is_trace_id",
    "message_kind",
    "op_problem",
    "reply_inbox",
]
