"""``_json.dumps``: the Python reference encoder's bytes, orjson's text with its floats respelt."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envelopekit import _json
from envelopekit._json import dumps
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxRequest
from envelopekit.som import SomEnvelope
from tests.conftest import DATA
from tests.test_duplicates import _lines_run

# A number as a message spells it, and as the reference encoder writes the value read from it.
SPELLINGS: dict[str, tuple[bytes, bytes]] = {
    "negative-zero-integer": (b"-0", b"0"),
    "upper-exponent": (b"1E+2", b"100.0"),
    "exponent-with-leading-zeros": (b"1e+0002", b"100.0"),
    "short-negative-exponent": (b"1e-7", b"1e-07"),
    "negative-exponent-with-leading-zeros": (b"1E-007", b"1e-07"),
    "negative-short-exponent": (b"-1e-9", b"-1e-09"),
    "fraction-short-exponent": (b"2.5E-6", b"2.5e-06"),
    "two-digit-negative-exponent": (b"1e-10", b"1e-10"),
    "zero-with-four-zeros": (b"0.0000", b"0.0"),
    "one-point-zero": (b"1.0", b"1.0"),
    "negative-zero": (b"-0.0", b"-0.0"),
    "below-1e-4": (b"0.00001", b"1e-05"),
    "below-1e-4-digits": (b"0.00001234", b"1.234e-05"),
    "below-1e-4-negative": (b"-1.5e-5", b"-1.5e-05"),
    "below-1e-4-long": (b"0.000012345678901234567", b"1.2345678901234568e-05"),
    "just-below-1e-4": (b"-0.000099999", b"-9.9999e-05"),
    "1e-4": (b"0.0001", b"0.0001"),
    "ten-and-a-small-fraction": (b"10.00001", b"10.00001"),
    "long-fraction": (b"0.1234567890123456789012345", b"0.12345678901234568"),
    "1e16": (b"1e16", b"1e+16"),
    "largest-double": (b"1.7976931348623157e308", b"1.7976931348623157e+308"),
    "smallest-subnormal": (b"4.9406564584124654e-324", b"5e-324"),
    "huge-integer": (b"123456789012345678901234567890", b"123456789012345678901234567890"),
}
# Longer than the respelling's budget for the few floats around it (`_BYTES_A_RESPELLING`), so
# that orjson's text of such a message is respelt, where a small one is written again.
PAD = "x" * 2048
TIMESTAMP = "2026-09-11T16:41:00.000000Z"  # holds `0.0000`, in a string


def _reference(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@pytest.mark.parametrize(("spelt", "written"), SPELLINGS.values(), ids=SPELLINGS.keys())
def test_a_number_is_written_as_the_reference_writes_what_its_spelling_reads(
    spelt: bytes, written: bytes
) -> None:
    value = json.loads(spelt)
    assert dumps(value) == written
    message = {"at": TIMESTAMP, "pad": PAD, "n": value, "more": [value, {"k": value}]}
    assert dumps(message) == (
        b'{"at":"%s","pad":"%s","n":%s,"more":[%s,{"k":%s}]}'
        % (TIMESTAMP.encode(), PAD.encode(), written, written, written)
    )


# Strings holding what a float orjson respells looks like, and escapes that end or do not end
# a string before one: each is left as written, and a float after it respelt.
STRINGS: dict[str, str] = {
    "timestamp": TIMESTAMP,
    "fraction": "0.00001",
    "exponent-then-comma": "1e-7,",
    "exponent-then-bracket": "x e-7]",
    "exponent-then-brace": "e-7}",
    "as-members": ':0.00001,"k":1e-7}',
    "escaped-quote": '"0.00001',
    "escaped-backslash-ending": "0.00001\\",
    "escaped-backslash-then-quote": '\\"0.0000',
    "control-characters": "\n\t\x01e-7,",
}


@pytest.mark.parametrize("text", STRINGS.values(), ids=STRINGS.keys())
def test_a_string_holding_a_numbers_bytes_is_left_as_written(text: str) -> None:
    message = {text: text, "pad": PAD, "n": 1e-7, "items": [text, 0.00001, {text: -2.5e-6}]}
    written = dumps(message)
    assert written == _reference(message)
    assert written.count(b"1e-07") == 1
    assert written.count(b"1e-05") == 1
    assert written.count(b"-2.5e-06") == 1


def test_every_corpus_document_is_written_as_the_reference_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Respelt whatever its size: each text a float's bytes show up in is written by orjson.
    monkeypatch.setattr(_json, "_BYTES_A_RESPELLING", 0)
    paths = sorted(DATA.rglob("*.json"))
    assert len(paths) >= 70
    for path in paths:
        document = json.loads(path.read_bytes())
        assert dumps(document) == _reference(document), path


def _spelt(text: bytes) -> Any:
    return json.loads(text)


_EXPONENTS = st.sampled_from(["", "e0", "E+2", "e-7", "E-007", "e-05", "e16", "e-300", "e+0300"])
odd_numbers = st.builds(
    lambda sign, whole, fraction, exponent: _spelt(
        f"{sign}{whole}{'.' + fraction if fraction else ''}{exponent}".encode()
    ),
    st.sampled_from(["", "-"]),
    st.sampled_from(["0", "1", "10"]) | st.integers(0, 10**25).map(str),
    st.sampled_from(["", "0", "0000", "00001", "000012345", "5"]) | st.integers(0, 10**20).map(str),
    _EXPONENTS,
).filter(lambda value: math.isfinite(value))  # (a float past the largest double reads as inf)
tricky_strings = st.lists(
    st.sampled_from([*STRINGS.values(), "\\", '"', "e-", "0.", ","]) | st.text(max_size=4),
    max_size=4,
).map("".join)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(1e-10, 1e-3)
    | st.floats(-1e-3, -1e-10)
    | odd_numbers
    | tricky_strings
)
documents = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(tricky_strings, children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=600, deadline=None)
@given(documents, st.booleans())
def test_dumps_writes_what_the_reference_writes(document: Any, padded: bool) -> None:
    if padded:
        document = [PAD, document]
    try:
        expected = _reference(document)
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 text holds it
        with pytest.raises(UnicodeEncodeError):
            dumps(document)
        return
    assert dumps(document) == expected


SOM_BEAT6 = DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"


def _som_beat6() -> tuple[Callable[[], bytes], Any]:
    envelope = SomEnvelope.model_validate_json(SOM_BEAT6.read_bytes())
    return envelope.to_json, envelope.model_dump(by_alias=True)


def _babelqueue(data: dict[str, Any]) -> Callable[[], tuple[Callable[[], bytes], Any]]:
    def made() -> tuple[Callable[[], bytes], Any]:
        envelope = BabelEnvelope.create("urn:babel:orders:created", data)
        return envelope.to_json, envelope.to_wire()

    return made


def _babelqueue_read() -> tuple[Callable[[], bytes], Any]:
    made = BabelEnvelope.create("urn:babel:orders:created", {"pad": PAD, "big": 1}).to_json()
    envelope = BabelEnvelope.model_validate_json(made.replace(b'"big":1', b'"big":%d' % 2**70))
    return envelope.to_json, envelope.to_wire()


def _matrix() -> tuple[Callable[[], bytes], Any]:
    request = MxRequest.create("fs.stat", {"pad": PAD, "ratio": 0.00003, "at": TIMESTAMP})
    return request.to_json, request.model_dump(mode="json")


WRITERS: dict[str, tuple[Callable[[], tuple[Callable[[], bytes], Any]], int]] = {
    "som-beat6-timestamp": (_som_beat6, 0),
    "babelqueue-small-floats": (_babelqueue({"pad": PAD, "ratio": 1e-7, "min": 0.00001}), 0),
    "matrix-small-float": (_matrix, 0),
    # An integer beyond 64 bits orjson refuses: the standard library writes that text.
    "babelqueue-huge-integer": (_babelqueue_read, 1),
}


@pytest.mark.parametrize(("made", "written_again"), WRITERS.values(), ids=WRITERS.keys())
def test_a_message_is_written_once_where_its_floats_are_respelt(
    made: Callable[[], tuple[Callable[[], bytes], Any]],
    written_again: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The standard library's writing of the whole message cost ten times orjson's (SOM's
    # beat-6: 26 µs, 2 µs), for every text that merely holds `0.0000` in a string.
    to_json, wire = made()
    expected = _reference(wire)
    calls: list[Any] = []
    reference_dumps = _json.reference_dumps

    def counted(value: Any) -> bytes:
        calls.append(value)
        return reference_dumps(value)

    monkeypatch.setattr(_json, "reference_dumps", counted)
    assert to_json() == expected
    assert len(calls) == written_again


@pytest.mark.parametrize(
    "value", [1.5e-5, 1e-7, "0.00001"], ids=["fractions", "exponents", "strings"]
)
def test_a_text_dense_with_floats_to_respell_is_handed_over_before_all_are_found(
    value: object,
) -> None:
    # Past one a _BYTES_A_RESPELLING bytes, the reference encoder writes the text: each of
    # 100,000 was found first, a Python step each (dumps 36 ms, the reference's 21 ms).
    document = [value] * 100_000
    assert dumps(document) == _json.reference_dumps(document)
    assert _lines_run(lambda: dumps(document), _json.__file__) < 20_000
