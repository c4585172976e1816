"""W3C traceparent: parse and format, invalid headers ignored, the trace_id mapping."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit.babelqueue import (
    BabelEnvelope,
    TraceParent,
    parent_of,
    read_traceparent,
    trace_id_of,
    write_traceparent,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
VALID = f"00-{TRACE}-{SPAN}-01"


def test_parse_and_format() -> None:
    parsed = TraceParent.parse(VALID)
    assert parsed == TraceParent(TRACE, SPAN, 1)
    assert parsed is not None and parsed.sampled and parsed.header() == VALID == str(parsed)
    unsampled = TraceParent.parse(f"00-{TRACE}-{SPAN}-00")
    assert unsampled is not None and not unsampled.sampled
    assert TraceParent.parse(VALID.encode()) == parsed
    assert TraceParent.parse(f" {VALID}\t") == parsed  # optional whitespace around a field


def test_a_future_version_is_read_and_written_as_00() -> None:
    parsed = TraceParent.parse(f"01-{TRACE}-{SPAN}-01-what-the-future-holds")
    assert parsed is not None and parsed.header() == VALID
    assert TraceParent.parse(f"01-{TRACE}-{SPAN}-01") == parsed


@pytest.mark.parametrize(
    "value",
    [
        f"ff-{TRACE}-{SPAN}-01",  # version ff is forbidden
        f"00-{'0' * 32}-{SPAN}-01",  # all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # all-zero parent id
        f"00-{TRACE.upper()}-{SPAN}-01",  # uppercase hex
        f"00-{TRACE}-{SPAN}-01-extra",  # version 00 is exactly 55 characters
        f"01-{TRACE}-{SPAN}-01x",
        f"00-{TRACE[:-1]}-{SPAN}-01",
        f"00_{TRACE}_{SPAN}_01",
        f"0g-{TRACE}-{SPAN}-01",
        "",
        None,
        b"\xff",
    ],
)
def test_invalid_headers_are_ignored(value: str | bytes | None) -> None:
    assert TraceParent.parse(value) is None
    assert read_traceparent({"traceparent": value}) is None


def test_read_from_carriers() -> None:
    expected = TraceParent(TRACE, SPAN)
    assert read_traceparent({"Traceparent": VALID, "x-other": "1"}) == expected
    assert read_traceparent([("traceparent", VALID.encode())]) == expected
    assert read_traceparent([("traceparent", VALID), ("traceparent", VALID)]) is None
    assert read_traceparent({}) is None and read_traceparent(None) is None


def test_constructor_validates() -> None:
    with pytest.raises(ValueError):
        TraceParent("0" * 32, SPAN)
    with pytest.raises(ValueError):
        TraceParent(TRACE.upper(), SPAN)
    with pytest.raises(ValueError):
        TraceParent(TRACE, "0" * 16)
    with pytest.raises(ValueError):
        TraceParent(TRACE, SPAN, 256)


def test_trace_id_mapping() -> None:
    assert trace_id_of("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b") == "7b3f9c2ae41d4f889b2a1c0d5e6f7a8b"
    assert trace_id_of("7B3F9C2A-E41D-4F88-9B2A-1C0D5E6F7A8B") == "7b3f9c2ae41d4f889b2a1c0d5e6f7a8b"
    hashed = trace_id_of("trace-xyz")
    assert len(hashed) == 32 and hashed == trace_id_of("trace-xyz") != trace_id_of("t-1")
    # The nil UUID would be an invalid W3C trace id: it is hashed instead.
    assert trace_id_of("00000000-0000-0000-0000-000000000000") != "0" * 32


def test_write_leaves_the_envelope_alone() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})
    before = env.to_json()
    headers = write_traceparent({"bq-job": env.job, "traceparent": "stale"}, env, parent_id=SPAN)
    assert env.to_json() == before
    assert headers["bq-job"] == env.job
    parsed = read_traceparent(headers)
    assert parsed == TraceParent(trace_id_of(env.trace_id), SPAN, 1)
    random = read_traceparent(write_traceparent(None, env, sampled=False, tracestate="k=v"))
    assert random is not None and not random.sampled and random.parent_id != SPAN
    assert write_traceparent(None, env, tracestate="k=v")["tracestate"] == "k=v"
    with pytest.raises(ValueError):
        write_traceparent(None, env, parent_id="XYZ")


def test_consumer_parent_prefers_the_carried_header() -> None:
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:orders:created", {})
    assert parent_of(env, {"traceparent": VALID}) == TraceParent(TRACE, SPAN)
    fallback = parent_of(env, {"traceparent": "garbage"})
    assert fallback.trace_id == trace_id_of(env.trace_id)
    assert fallback == parent_of(env)  # deterministic per trace_id


@pytest.mark.parametrize("flags", [1.0, 1.5, float("nan")], ids=repr)
def test_flags_that_are_no_int_are_refused_when_built(flags: float) -> None:
    # A float in range was kept, and `header()` raised later on formatting it.
    with pytest.raises(TypeError, match="flags"):
        TraceParent(TRACE, SPAN, flags)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "headers",
    [
        {5: "1", "traceparent": VALID},
        [(None, "1"), ("TraceParent", VALID)],
        [(b"traceparent", VALID.encode())],
        [(b"TRACEPARENT", VALID), (b"x-other", b"1")],
        {b"Traceparent": VALID, "x-other": "1"},
    ],
    ids=["int-name", "none-name", "bytes-name", "bytes-name-uppercase", "bytes-name-mapping"],
)
def test_a_header_name_of_another_type_is_read_not_raised_on(headers: object) -> None:
    assert read_traceparent(headers) == TraceParent(TRACE, SPAN)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "tracestate",
    ["k=v\r\nx-injected: 1", "k=v\n", "k=v\x00", "k=\u00e9", "k=\u2028v"],
    ids=["crlf", "lf", "nul", "non-ascii", "line-separator"],
)
def test_a_tracestate_w3c_does_not_allow_is_refused(tracestate: str) -> None:
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:orders:created", {})
    with pytest.raises(ValueError, match="tracestate"):
        write_traceparent(None, env, tracestate=tracestate)


@pytest.mark.parametrize("tracestate", [5, b"k=v"], ids=repr)
def test_a_tracestate_that_is_no_string_is_refused(tracestate: object) -> None:
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:orders:created", {})
    with pytest.raises(TypeError, match="tracestate"):
        write_traceparent(None, env, tracestate=tracestate)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("headers", "kept"),
    [
        ({b"traceparent": b"stale", b"tracestate": b"old=1", "x-other": "1"}, {"x-other": "1"}),
        ({b"TraceParent": VALID, 5: "kept"}, {5: "kept"}),
    ],
    ids=["bytes-names", "bytes-and-int-names"],
)
def test_write_replaces_earlier_headers_whatever_their_names_type(
    headers: dict[Any, Any], kept: dict[Any, Any]
) -> None:
    # A stale bytes-named traceparent was kept beside the new one: read, the pair was ignored.
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:orders:created", {})
    written = write_traceparent(headers, env, parent_id=SPAN, tracestate="k=v")
    header = TraceParent(trace_id_of(env.trace_id), SPAN).header()
    assert written == {**kept, "traceparent": header, "tracestate": "k=v"}
