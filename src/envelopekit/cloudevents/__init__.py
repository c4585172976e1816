"""CloudEvents 1.0: a BabelQueue or SOM envelope as a CloudEvent and back, losslessly.

```python
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.cloudevents import from_binary, to_binary

envelope = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
message = to_binary(envelope, "kafka")           # ce_* headers, the envelope's JSON as value
verdict = from_binary(message.headers, message.body, binding="kafka")
assert verdict.envelope.to_json() == envelope.to_json()
```

The whole envelope is the event's ``data`` (``application/json``), exactly as its ``to_json()``
writes it, so every field, unknown keys included, survives the round trip byte for byte. The
attributes are derived from the envelope on the way out and checked against it on the way back.
Structured mode is the JSON format (:func:`to_structured`, :func:`from_structured`); binary mode
(:func:`to_binary`, :func:`from_binary`) puts the attributes in HTTP ``ce-`` headers
(percent-encoded), Kafka ``ce_`` headers (UTF-8 bytes) or AMQP ``cloudEvents_`` (or
``cloudEvents:``) application properties. :func:`from_message` tells the modes apart by the
content type, as the bindings do. Nothing here imports the ``cloudevents`` SDK: events are plain
bytes and mappings.

The mapping:

================  ========================================  ======================================
attribute         BabelQueue                                SOM
================  ========================================  ======================================
``specversion``   ``1.0``                                   ``1.0``
``id``            ``meta.id`` (a retry keeps it: the same   ``message_id``
                  event, redelivered)
``source``        ``source=``, else ``/babelqueue``         ``source=``, else
                                                            ``/som/<system_type>/<system_id>``
                                                            (``originating_system``)
``type``          ``job`` (the URN)                         ``message_type``
``time``          ``meta.created_at`` (Unix ms) as          ``timestamp``, as written
                  RFC 3339 UTC, ms precision
``subject``       ``meta.queue``                            ``topic``
``datacontenttype`` ``application/json``                    ``application/json``
``dataschema``    ``https://babelqueue.com/contracts/       ``https://storyobjectmodel.com/schema/
                  message-envelope.schema.json``            1.0/envelope.schema.json``
``traceparent``   ``traceparent=``, else the parent every   ``traceparent=`` only
                  SDK derives from ``trace_id`` (ADR-0025)
``tracestate``    ``tracestate=`` only                      ``tracestate=`` only
``correlationid`` ``trace_id``                              ``correlation_id``
``causationid``   (none)                                    ``causation_id``, when present
``data``          the envelope                              the envelope
================  ========================================  ======================================

Everything else (``data``, ``attempts``, ``dead_letter`` and the rest of ``meta``; SOM's
``payload``, ``_actors``, ``modification_header``, ``extensions``, ``@context``; unknown keys)
rides in ``data`` only. ``traceparent``/``tracestate`` are the distributed-tracing extension,
``correlationid``/``causationid`` the correlation extension; ``extensions=`` adds the caller's
own (``partitionkey``, a vendor's routing attribute), which a reader gets back, uncompared.

Reading checks the CloudEvents rules (required ``id``, ``source``, ``specversion``, ``type``;
``specversion`` ``1.0``; ``source`` a URI-reference; ``dataschema`` a URI; ``time`` RFC 3339;
Strings without control characters; names ``a-z0-9``; a JSON ``datacontenttype``), checks the
envelope as :func:`envelopekit.check` does, then requires every attribute the envelope
determines, when present, to agree with it (``time`` as an instant; ``traceparent`` of the
envelope's trace). ``source`` is the producer's to choose and is not compared; an attribute
another producer left out is not a disagreement. The verdict is an :class:`EventVerdict`: a
:class:`~envelopekit.Verdict` that also gives the attributes as received (the producer's
``traceparent``, ``source``, extensions); bad input never raises. Writing refuses, with
:class:`~envelopekit.ProducerError`, what an attribute cannot carry. The rule ids are
``cloudevents.*`` in :mod:`envelopekit.rules`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from ._event import STRUCTURED_CONTENT_TYPE as STRUCTURED_CONTENT_TYPE
    from ._event import BinaryMessage as BinaryMessage
    from ._event import Binding as Binding
    from ._event import EventVerdict as EventVerdict
    from ._event import from_binary as from_binary
    from ._event import from_message as from_message
    from ._event import from_structured as from_structured
    from ._event import to_attributes as to_attributes
    from ._event import to_binary as to_binary
    from ._event import to_structured as to_structured
    from ._mapping import BABELQUEUE_DATASCHEMA as BABELQUEUE_DATASCHEMA
    from ._mapping import DATACONTENTTYPE as DATACONTENTTYPE
    from ._mapping import SOM_DATASCHEMA as SOM_DATASCHEMA
    from ._mapping import AttributeValue as AttributeValue
    from ._mapping import Envelope as Envelope
else:
    from .._exports import attach as _attach

    __all__, __getattr__, __dir__ = _attach(__name__)
