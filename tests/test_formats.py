"""The lossless string formats: the calendar-exact date-time pattern against the calendar."""

from __future__ import annotations

import datetime
import re

import jsonschema_rs
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from pydantic import TypeAdapter, ValidationError

from envelopekit._formats import (
    DATE_TIME_PATTERN,
    URI_PATTERN,
    URI_REFERENCE_PATTERN,
    UUID_PATTERN,
    DateTimeStr,
    UriStr,
    UuidStr,
)

DATE_TIME = TypeAdapter(DateTimeStr)
UUID = TypeAdapter(UuidStr)

# Every kind of year the leap rule distinguishes, and the ends of the four-digit range.
YEARS = sorted(
    {*range(13), *range(96, 105), *range(396, 405), *range(1896, 1905), *range(1996, 2005)}
    | {*range(2096, 2105), *range(2396, 2405), *range(9990, 10000), 1583, 1700, 1800, 2026}
)


def real_day(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def accepted(value: str) -> bool:
    try:
        DATE_TIME.validate_json(orjson.dumps(value))
    except ValidationError as exc:
        (error,) = exc.errors()
        assert error["type"] == "string_pattern_mismatch"
        assert error["ctx"]["pattern"] == DATE_TIME_PATTERN
        return False
    return True


@pytest.mark.parametrize("year", YEARS)
def test_date_time_accepts_exactly_the_real_days(year: int) -> None:
    python_re = re.compile(DATE_TIME_PATTERN)
    for month in range(14):
        for day in range(33):
            value = f"{year:04d}-{month:02d}-{day:02d}T10:00:00Z"
            expected = real_day(year, month, day)
            # pydantic's Rust engine and an ECMA-style engine (the published schema's readers).
            assert accepted(value) is expected, value
            assert (python_re.fullmatch(value) is not None) is expected, value


@pytest.mark.parametrize(
    "value",
    [
        "2026-09-11T16:41:00Z",
        "2026-09-11t16:41:00z",
        "2026-09-11T16:41:00.000000Z",
        "2024-02-29T23:59:59+14:00",
        "2000-02-29T00:00:00-00:00",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999Z",
    ],
)
def test_date_time_accepts_and_keeps_the_wire_text(value: str) -> None:
    assert DATE_TIME.validate_json(f'"{value}"') == value


@pytest.mark.parametrize(
    "value",
    [
        "2026-09-11 16:41:00Z",  # a space for T
        "2026-09-11T16:41:00",  # no offset
        "2026-09-11T16:41:60Z",  # a leap second
        "2026-09-11T24:00:00Z",
        "2026-09-11T16:41:00+0100",  # an offset without its colon
        "2026-09-11T16:41:00Z\n",
        "0000-01-01T00:00:00Z",  # year zero
        "1900-02-29T00:00:00Z",  # divisible by 100, not by 400
        "2026-9-11T16:41:00Z",
        "２０２６-09-11T16:41:00Z",  # non-ASCII digits
    ],
)
def test_date_time_refuses(value: str) -> None:
    assert not accepted(value)


def test_uuid_is_kept_as_sent_in_either_case() -> None:
    value = "7B3F1D2E-9b4c-4a8d-BC1E-0f5a6b7c8d90"
    assert UUID.validate_json(f'"{value}"') == value
    assert re.fullmatch(UUID_PATTERN, value)
    for bad in ("{7b3f1d2e-9b4c-4a8d-bc1e-0f5a6b7c8d90}", "7b3f1d2e9b4c4a8dbc1e0f5a6b7c8d90"):
        with pytest.raises(ValidationError):
            UUID.validate_json(f'"{bad}"')


# The `uri` format as the reference checkers assert it: jsonschema's (on rfc3987) and
# jsonschema-rs's, and ajv-formats' (the SOM bus's), which also refuses an empty hier-part. The
# pattern accepts exactly what all of them accept (where they differ, it refuses).
_CHECKERS = (
    Draft202012Validator({"format": "uri"}, format_checker=FormatChecker()),
    jsonschema_rs.validator_for({"format": "uri"}, validate_formats=True),
)
URI = TypeAdapter(UriStr)


def uri_accepted(value: str) -> bool:
    try:
        assert URI.validate_json(orjson.dumps(value)) == value
    except ValidationError as exc:
        (error,) = exc.errors()
        assert error["ctx"]["pattern"] == URI_PATTERN
        return False
    return True


def checkers_accept(value: str) -> bool:
    empty_hier_part = re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[?#].*)?", value, re.DOTALL)
    return not empty_hier_part and all(checker.is_valid(value) for checker in _CHECKERS)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://example.org/a?b=c#d", True),
        ("urn:isbn:0451450523", True),
        ("tams://store/7b3f", True),
        ("mailto:desk@example.org", True),
        # An empty hier-part is RFC 3986, but ajv-formats' `uri` (the SOM bus's) refuses it.
        ("x:", False),
        ("x:?q", False),
        ("x:#f", False),
        ("x:/", True),
        ("https://example.org/%20", True),
        ("https://user:pw@example.org:8080/a/?q=[x]#/b?", False),  # `[` only in a host
        ("https://user:pw@example.org:8080/a/?q=%5Bx%5D#/b?", True),
        ("http://[::1]:80/", True),
        ("http://[2001:db8::7]/c=GB?objectClass?one", True),
        ("http://[::ffff:192.0.2.1]/", True),
        ("http://[v7.x:y]/", True),
        ("http://192.0.2.16:80/", True),
        ("a://", True),
        ("https://example.org/a b", False),
        ("https://example.org/%2", False),
        ("https://example.org/é", False),
        ("https://example.org/a#b#c", False),
        ("//example.org/relative", False),
        ("1http://example.org", False),
        ("https://example.org\n", False),
        ("", False),
        # The authority's structure: a port is digits, one user, an IP literal well formed.
        ("http://example.org:http/", False),
        ("http://a@b@example.org/", False),
        ("http://[::1/", False),
        ("http://[::1]x/", False),
        ("http://[1.2.3.4]/", False),
        ("http://[1:2:3:4:5:6:7:8:9]/", False),
        ("http://[12345::]/", False),
        ("http://[fe80::1%25eth0]/", False),  # a zone id is RFC 6874's, not RFC 3986's
        ("http://[vz.x]/", False),
        ("urn:a[b]", False),
        ("urn:[", False),
        ("http://example.org/a[b]", False),
    ],
)
def test_uri(value: str, expected: bool) -> None:
    assert uri_accepted(value) is expected
    assert checkers_accept(value) is expected


@settings(max_examples=600)
@given(
    st.sampled_from(["", "a:", "http://", "a://", "http://[", "http://u@h:"]),
    st.text(
        alphabet=st.sampled_from(list("aZ09+.-:/?#[]%@!$&'()*,;=~_ \né\u2028Ff2v")), max_size=14
    ),
)
def test_uri_pattern_accepts_what_the_format_checkers_both_accept(head: str, tail: str) -> None:
    value = head + tail
    assert uri_accepted(value) is checkers_accept(value)


# `uri-reference` as the same two checkers assert it (a CloudEvents `source` is one, non-empty).
_REFERENCE_CHECKERS = (
    Draft202012Validator({"format": "uri-reference"}, format_checker=FormatChecker()),
    jsonschema_rs.validator_for({"format": "uri-reference"}, validate_formats=True),
)


def reference_checkers_accept(value: str) -> bool:
    return all(checker.is_valid(value) for checker in _REFERENCE_CHECKERS)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", True),
        ("/babelqueue", True),
        ("my-service", True),
        ("a/b:c", True),
        ("./a:b", True),
        ("?q", True),
        ("#f", True),
        ("//example.org/p", True),
        ("//u@h:80/p", True),
        ("//[v1.x]/", True),
        ("x:", True),  # a URI's empty path, which RFC 3986 allows
        ("urn:babel:orders:created", True),
        ("https://example.org/a?b=c#d", True),
        ("a b", False),
        ("1abc:x", False),
        ("a:b#c#d", False),
        ("%zz", False),
        ("é", False),
        ("a:b[c]", False),
        ("//h:x/", False),
        ("http://[::1", False),
        ("//a@b@c/", False),
        ("p\n", False),
    ],
)
def test_uri_reference(value: str, expected: bool) -> None:
    assert (re.fullmatch(URI_REFERENCE_PATTERN, value) is not None) is expected
    assert reference_checkers_accept(value) is expected


@settings(max_examples=600)
@given(
    st.sampled_from(["", "a:", "//", "/", "a", "http://[", "//u@h:", "?", "#"]),
    st.text(
        alphabet=st.sampled_from(list("aZ09+.-:/?#[]%@!$&'()*,;=~_ \né\u2028Ff2v")), max_size=14
    ),
)
def test_uri_reference_pattern_accepts_what_the_format_checkers_both_accept(
    head: str, tail: str
) -> None:
    value = head + tail
    accepted = re.fullmatch(URI_REFERENCE_PATTERN, value) is not None
    assert accepted is reference_checkers_accept(value)
