"""Checked by both type checkers: the CloudEvents mapping is typed by spec and by binding.

Each `# type: ignore[code]` marks a line that must be a type error. pytest also runs the file,
so every statement here is real code.
"""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import assert_type

import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.cloudevents import (
    BinaryMessage,
    EventVerdict,
    from_binary,
    from_message,
    from_structured,
    to_attributes,
    to_binary,
    to_structured,
)
from envelopekit.som import SomEnvelope

ENV = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})


def test_the_binding_types_the_header_values() -> None:
    assert_type(to_binary(ENV), BinaryMessage[str])
    assert_type(to_binary(ENV, "http"), BinaryMessage[str])
    assert_type(to_binary(ENV, "amqp", separator=":"), BinaryMessage[str])
    kafka = to_binary(ENV, "kafka")
    assert_type(kafka, BinaryMessage[bytes])
    assert_type(kafka.headers, dict[str, bytes])
    assert_type(kafka.body, bytes)
    assert_type(to_attributes(ENV), dict[str, str | int | bool])
    to_attributes(ENV, extensions={"partitionkey": "k", "comcount": 1, "comflag": True})
    with pytest.raises(ek.ProducerError):
        to_attributes(ENV, extensions={"comratio": 0.5})  # type: ignore[dict-item]
    assert_type(to_structured(ENV), bytes)
    with pytest.raises(ValueError, match="binding"):
        to_binary(ENV, "nats")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="separator"):
        to_binary(ENV, "amqp", separator="/")  # type: ignore[call-overload]


def test_the_spec_types_the_envelope() -> None:
    body = to_structured(ENV)
    assert_type(from_structured(body, spec="babelqueue"), EventVerdict[BabelEnvelope[Any]])
    assert_type(from_structured(body, spec="som"), EventVerdict[SomEnvelope])
    either = from_structured(body)
    assert_type(either, EventVerdict[BabelEnvelope[Any] | SomEnvelope])
    message = to_binary(ENV, "kafka")
    read = from_binary(message.headers, message.body, binding="kafka", spec="babelqueue")
    assert_type(read, EventVerdict[BabelEnvelope[Any]])
    assert read.envelope is not None
    assert_type(read.envelope.attempts, int)
    assert_type(read.attributes, dict[str, Any])
    verdict: ek.Verdict[BabelEnvelope[Any]] = read  # an EventVerdict is a Verdict
    assert verdict.ok
    auto = from_message(message.headers, message.body, binding="kafka")
    assert auto.envelope is not None
    # A SOM envelope has no attempts: the spec must be named (or narrowed) first.
    _ = auto.envelope.attempts  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="binding"):
        from_binary(message.headers, message.body, binding="nats")  # type: ignore[call-overload]
