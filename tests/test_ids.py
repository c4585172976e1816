"""Ids and clocks."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import pytest

from envelopekit import _ids


def test_uuid4_and_uuid7_are_lowercase_canonical() -> None:
    v4 = _ids.uuid4()
    v7 = _ids.uuid7()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", v4)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", v7)


def test_uuid7_is_time_ordered() -> None:
    first = _ids.uuid7()
    time.sleep(0.002)
    assert _ids.uuid7() > first


def test_now_ms_is_unix_milliseconds() -> None:
    before = int(time.time() * 1000)
    now = _ids.now_ms()
    assert before <= now <= int(time.time() * 1000)


def test_rfc3339() -> None:
    moment = datetime(2026, 9, 11, 18, 41, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert _ids.rfc3339(moment) == "2026-09-11T16:41:00.123Z"
    assert _ids.rfc3339(moment, digits=0) == "2026-09-11T16:41:00Z"
    assert _ids.rfc3339(moment, digits=6) == "2026-09-11T16:41:00.123456Z"
    assert _ids.rfc3339().endswith("Z")
    with pytest.raises(ValueError):
        _ids.rfc3339(datetime(2026, 1, 1))
    with pytest.raises(ValueError):
        _ids.rfc3339(moment, digits=7)


def test_rfc3339_zero_pads_years_below_1000() -> None:
    assert _ids.rfc3339(datetime(999, 1, 1, tzinfo=timezone.utc)) == "0999-01-01T00:00:00.000Z"
    assert _ids.rfc3339(datetime(1, 1, 1, tzinfo=timezone.utc), digits=0) == "0001-01-01T00:00:00Z"
    minus_two = timezone(timedelta(hours=-2))
    assert _ids.rfc3339(datetime(99, 12, 31, 23, tzinfo=minus_two)) == "0100-01-01T01:00:00.000Z"


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-1))),
    ],
)
def test_rfc3339_refuses_a_moment_outside_the_utc_years(moment: datetime) -> None:
    with pytest.raises(ValueError, match="0001-9999"):
        _ids.rfc3339(moment)


def test_trace_context_ids() -> None:
    assert re.fullmatch(r"[0-9a-f]{32}", _ids.trace_id())
    assert re.fullmatch(r"[0-9a-f]{16}", _ids.span_id())
    assert len({_ids.span_id() for _ in range(100)}) == 100
