"""Interop with the official Python SDK (`babelqueue`), over generated messages."""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson
import pytest
from babelqueue.codec import EnvelopeCodec
from hypothesis import given, settings
from hypothesis import strategies as st

import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope
from tests.babelqueue.conformance._manifest import strict_equal
from tests.conftest import DATA

logging.getLogger("babelqueue.codec").setLevel(logging.ERROR)

# JSON values as the data rules allow them: finite floats, integers within signed 64-bit,
# valid Unicode (no lone surrogates), nested objects and arrays.
text = st.text(st.characters(codec="utf-8"), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=16,
)
payloads = st.dictionaries(text, values, max_size=6)
# What the official SDK itself writes: also integers beyond int64 (Python keeps them exact),
# which envelopekit reads with a warning (babelqueue.md Decisions §6); 309 digits as a double's.
wide_values = st.recursive(
    scalars | st.integers(-(10**309) + 1, 10**309 - 1),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=16,
)
wide_payloads = st.dictionaries(text, wide_values, max_size=6)
urns = st.from_regex(r"\Aurn:babel:[a-z]{1,8}:[a-z]{1,8}(\.[a-z0-9]{1,4})?\Z")
queues = text.filter(lambda q: q != "")


@settings(max_examples=300, deadline=None)
@given(urn=urns, data=payloads, queue=queues)
def test_official_sdk_accepts_what_we_produce(urn: str, data: dict[str, Any], queue: str) -> None:
    env = BabelEnvelope.create(urn, data, queue=queue).retried()
    raw = env.to_json()
    decoded = EnvelopeCodec.decode(raw.decode("utf-8"))
    assert EnvelopeCodec.accepts(decoded)
    assert EnvelopeCodec.urn(decoded) == urn
    assert strict_equal(decoded["data"], data)
    assert decoded["trace_id"] == env.trace_id
    assert decoded["meta"]["id"] == env.meta.id
    assert decoded["attempts"] == 1
    # Byte for byte what the official encoder writes for the same decoded envelope.
    assert EnvelopeCodec.encode(decoded).encode("utf-8") == raw


@settings(max_examples=300, deadline=None)
@given(urn=urns, data=wide_payloads, queue=queues)
def test_we_accept_what_the_official_sdk_produces(
    urn: str, data: dict[str, Any], queue: str
) -> None:
    produced = EnvelopeCodec.make(urn, data, queue=queue)
    raw = EnvelopeCodec.encode(produced).encode("utf-8")
    verdict = ek.check(raw, spec="babelqueue")
    assert verdict.ok, verdict.violations
    env = verdict.envelope
    assert env is not None
    assert env.job == urn
    assert strict_equal(env.data, data)
    assert env.meta.lang == "python"
    assert env.to_json() == raw
    # orjson would read an integer beyond 64 bits as a double; Python's parser keeps it.
    assert json.loads(env.retried().to_json())["attempts"] == 1


def test_dead_lettered_is_read_by_the_official_sdk() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    dlq = env.retried().dead_lettered("failed", error=RuntimeError("boom"))
    decoded = EnvelopeCodec.decode(dlq.to_json().decode("utf-8"))
    assert EnvelopeCodec.accepts(decoded)
    assert decoded["dead_letter"]["reason"] == "failed"
    assert decoded["dead_letter"]["original_queue"] == "orders"


COLUMNS: dict[str, str] = orjson.loads(
    (DATA / "babelqueue" / "encoding" / "edge-output-by-encoder.json").read_bytes()
)


@pytest.mark.parametrize("column", sorted(COLUMNS), ids=sorted(COLUMNS))
def test_each_encoder_column_reencodes_as_the_official_sdk_does(column: str) -> None:
    """Go's and Node's integer literals beyond int64 included, kept as the Python SDK keeps them."""
    decoded = EnvelopeCodec.decode(COLUMNS[column])
    assert EnvelopeCodec.accepts(decoded)
    env = BabelEnvelope.model_validate_json(COLUMNS[column])
    assert env.to_json() == EnvelopeCodec.encode(decoded).encode("utf-8")
    decoded["attempts"] += 1
    assert env.retried().to_json() == EnvelopeCodec.encode(decoded).encode("utf-8")
