"""Matrix MxEnvelope: the request, response and error-payload envelopes of Matrix actors.

```python
from envelopekit.matrix import MxErrorCode, MxRequest

req = MxRequest.create("fs.list", {"path": "/home/ada"}, expect_reply=True)
wire = req.to_json()                      # send it; the reply goes to req.reply_to
got = MxRequest.model_validate_json(wire)
ok = got.reply({"ok": True, "count": 0, "items": []})
err = got.fail(MxErrorCode.NOT_FOUND, "no such directory")   # statusCode 404
assert ok.correlation_id == err.correlation_id == req.correlation_id
assert err.payload.status_code == 404
```

The three models mirror the three JSON Schemas of the Matrix "Envelope schemas" page;
:func:`classify` (and ``envelopekit.check(raw, spec="matrix")``) tells them apart by ``op``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from ._base import JsonData as JsonData
    from ._classify import MESSAGE_ADAPTER as MESSAGE_ADAPTER
    from ._classify import MxMessage as MxMessage
    from ._classify import classify as classify
    from ._classify import message_kind as message_kind
    from ._conventions import IdempotencyKey as IdempotencyKey
    from ._conventions import Page as Page
    from ._conventions import SuccessPayload as SuccessPayload
    from ._conventions import WriteArgs as WriteArgs
    from ._error_payload import MxErrorCode as MxErrorCode
    from ._error_payload import MxErrorPayload as MxErrorPayload
    from ._lamport import LamportClock as LamportClock
    from ._ops import JOIN_OP as JOIN_OP
    from ._ops import REPLY_OP as REPLY_OP
    from ._ops import REPLY_PREFIX as REPLY_PREFIX
    from ._ops import SYSTEM_OPS as SYSTEM_OPS
    from ._ops import iface_problem as iface_problem
    from ._ops import is_system_op as is_system_op
    from ._ops import op_problem as op_problem
    from ._ops import reply_inbox as reply_inbox
    from ._request import MxRequest as MxRequest
    from ._request import ProducingKeywords as ProducingKeywords
    from ._response import MxResponse as MxResponse
    from ._trace import SpanId as SpanId
    from ._trace import TraceId as TraceId
    from ._trace import is_span_id as is_span_id
    from ._trace import is_trace_id as is_trace_id
else:
    from .._exports import attach as _attach

    __all__, __getattr__, __dir__ = _attach(__name__)
