# pyright: standard
"""A BabelQueue consumer: routing by URN, the unknown-URN strategy, idempotency and SQS.

Runs without AWS: a list of dicts shaped like boto3's ``receive_message`` output stands in for
the queue, so every step a real worker takes is visible. ``python examples/consumer.py``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from envelopekit.babelqueue import (
    BabelEnvelope,
    DeadLetterDecision,
    Delete,
    Done,
    InMemorySeenStore,
    Reject,
    Release,
    Retry,
    Router,
    idempotent,
    sqs,
    write_traceparent,
)


class OrderCreated(BaseModel):
    """The ``data`` of ``urn:babel:orders:created``."""

    order_id: int
    amount_cents: int


published: list[tuple[str, BabelEnvelope[Any], dict[str, str]]] = []
"""What the handlers publish downstream: (queue, envelope, transport headers)."""


def order_created(env: BabelEnvelope[OrderCreated]) -> None:
    """Charge the order, then announce it in the same trace."""
    print(f"charging order {env.data.order_id}: {env.data.amount_cents} cents")
    invoice = env.child("urn:babel:billing:invoice.requested", {"order_id": env.data.order_id})
    published.append(("billing", invoice, write_traceparent({}, invoice)))


seen = InMemorySeenStore()
router = Router(unknown_urn="dead_letter", max_attempts=3)
router.register("urn:babel:orders:created", idempotent(seen, order_created), OrderCreated)


def sqs_message(env: BabelEnvelope[Any], receive_count: int) -> dict[str, Any]:
    """What boto3 hands a consumer for ``env`` on its ``receive_count``-th delivery."""
    return {
        "Body": env.to_json().decode("utf-8"),
        "Attributes": {"ApproximateReceiveCount": str(receive_count)},
        "MessageAttributes": sqs.project(env),
    }


def work(message: dict[str, Any], queue: str = "orders") -> str:
    """One turn of the worker loop; returns what it did with the message."""
    refused = sqs.gate(message.get("MessageAttributes"))
    if refused is not None:
        return f"quarantined undecoded: {refused.rule}"
    body: str = message["Body"]
    count = message.get("Attributes", {}).get("ApproximateReceiveCount")
    outcome = router.dispatch(body, queue=queue, reconcile=lambda env: sqs.reconcile(env, count))
    match outcome:
        case Done():
            return "acked"
        case Delete():
            return "deleted"
        case Release():
            return "released"
        case Retry(envelope=env):
            return f"republished with attempts={env.attempts}"
        case DeadLetterDecision(envelope=env, queue=dlq):
            return f"dead-lettered to {dlq}: {env.to_wire()['dead_letter']['reason']}"
        case Reject(violations=found):
            return f"quarantined: {', '.join(dict.fromkeys(v.rule for v in found))}"


def main() -> None:
    """Feed the worker a handful of deliveries and print each outcome."""
    order = BabelEnvelope.create(
        "urn:babel:orders:created", {"order_id": 1042, "amount_cents": 9990}, queue="orders"
    )
    stranger = BabelEnvelope.create("urn:babel:orders:refunded", {"order_id": 7}, queue="orders")
    broken = BabelEnvelope.create("urn:babel:orders:created", {"order_id": "x"}, queue="orders")
    future = sqs_message(order, 1)
    future["MessageAttributes"]["bq-schema-version"]["StringValue"] = "2"
    deliveries = [
        ("first delivery", sqs_message(order, 1)),
        ("redelivery", sqs_message(order, 2)),
        ("unknown URN", sqs_message(stranger, 1)),
        ("bad data, 3rd delivery", sqs_message(broken, 3)),
        ("schema_version 2 attribute", future),
        ("not an envelope", {"Body": '{"hello": "world"}'}),
    ]
    for label, message in deliveries:
        print(f"{label}: {work(message)}")
    for queue, env, headers in published:
        print(f"published {env.job} to {queue}, trace {env.trace_id}, {headers['traceparent']}")


if __name__ == "__main__":
    main()
