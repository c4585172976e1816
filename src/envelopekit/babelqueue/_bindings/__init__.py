"""Broker bindings: pure functions between an envelope and each broker's native metadata.

One module per broker, with the same verbs where the broker-bindings contract defines them:

* ``project(envelope)``: the native attributes / headers / properties a producer sets beside
  the body (the body itself is always ``envelope.to_json()``, byte for byte);
* ``attempts(body_attempts, native)`` and ``reconcile(envelope, native)``: the consume-side
  ``attempts`` once the broker's own delivery counter is taken into account;
* ``gate(native)``: the ``schema_version`` gate read *before* the body is decoded: ``None``
  to decode, or the violation to quarantine the message with, undecoded.

No broker client is imported; the shapes are the ones the usual Python clients take and give.
"""

from __future__ import annotations

from . import artemis, asb, kafka, pulsar, rabbitmq, redis, sqs

__all__ = ["artemis", "asb", "kafka", "pulsar", "rabbitmq", "redis", "sqs"]
