"""Arbitrary input yields a verdict or a ValidationError, never another exception."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import rules
from envelopekit.babelqueue import BabelEnvelope
from tests.babelqueue.conformance._manifest import strict_equal
from tests.babelqueue.test_interop import payloads, values

json_documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)
envelope_keys = st.sampled_from(
    ["job", "urn", "trace_id", "data", "meta", "attempts", "dead_letter", "timestamp", "x"]
)
meta_keys = st.sampled_from(["id", "queue", "lang", "schema_version", "created_at", "ts", "y"])
near_envelopes = st.fixed_dictionaries(
    {},
    optional={
        "job": st.text() | values,
        "urn": st.text() | values,
        "trace_id": st.uuids().map(str) | values,
        "data": payloads | values,
        "meta": st.fixed_dictionaries(
            {},
            optional={
                "id": st.uuids().map(str) | values,
                "queue": st.text() | values,
                "lang": st.text() | values,
                "schema_version": st.just(1) | values,
                "created_at": st.integers() | values,
                "ts": values,
            },
        )
        | values,
        "attempts": st.integers() | values,
        "dead_letter": st.dictionaries(st.text(), values) | values,
        "timestamp": values,
    },
)


def _dump(document: Any) -> bytes:
    try:
        return orjson.dumps(document)
    except TypeError:  # integers beyond 64 bits
        import json

        return json.dumps(document).encode("utf-8", "surrogatepass")


def _exercise(raw: bytes) -> None:
    verdict = ek.check(raw, spec="babelqueue")
    assert verdict.ok is (verdict.envelope is not None)
    assert all(rules.is_rule(v.rule) for v in verdict.violations + verdict.warnings)
    assert all(v.pointer == "" or v.pointer.startswith("/") for v in verdict.violations)
    try:
        env = BabelEnvelope.model_validate_json(raw)
    except ValidationError as exc:
        assert not verdict.ok
        assert [v.rule for v in ek.violations(exc)] == [v.rule for v in verdict.violations]
    else:
        assert verdict.ok
        assert env.to_json() == BabelEnvelope.model_validate_json(env.to_json()).to_json()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes(raw: bytes) -> None:
    _exercise(raw)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_documents)
def test_arbitrary_json(document: Any) -> None:
    _exercise(_dump(document))


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_envelopes)
def test_near_envelopes(document: dict[str, Any]) -> None:
    _exercise(_dump(document))


@settings(max_examples=300, deadline=None)
@given(data=payloads, extra=st.dictionaries(st.text().filter(str.isidentifier), values))
def test_decode_retry_encode_keeps_every_value(data: dict[str, Any], extra: dict[str, Any]) -> None:
    reserved = {"job", "urn", "trace_id", "data", "meta", "attempts", "dead_letter", "timestamp"}
    extra = {k: v for k, v in extra.items() if k not in reserved}
    source = BabelEnvelope.create("urn:babel:p:q", data).to_wire()
    source.update(extra)
    source["meta"]["vendor"] = extra
    raw = orjson.dumps(source)
    out = orjson.loads(BabelEnvelope.model_validate_json(raw).retried().to_json())
    source["attempts"] = 1
    assert strict_equal(out, source)
