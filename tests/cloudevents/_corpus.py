"""The vendored corpus to map: every BabelQueue fixture, every SOM must-pass example."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.som import SomEnvelope
from tests.conftest import DATA
from tests.som._corpus import label, positive_envelope, positive_files

FIXTURES: Final = sorted((DATA / "babelqueue" / "fixtures").glob("*.json"))


def _babelqueue(path: Path) -> bytes:
    return path.read_bytes()


def _som(path: Path) -> bytes:
    return json.dumps(positive_envelope(path), ensure_ascii=False).encode("utf-8")


# (test id, spec, raw message): the messages `check` accepts, BabelQueue fixtures then SOM.
VALID: Final[list[tuple[str, str, bytes]]] = [
    (f"babelqueue/{p.name}", "babelqueue", _babelqueue(p))
    for p in FIXTURES
    if ek.check(p.read_bytes(), spec="babelqueue").ok
] + [(f"som/{label(p)}", "som", _som(p)) for p in positive_files()]

# The BabelQueue fixtures `check` refuses, with its rules: an event around one is refused too.
INVALID: Final[list[tuple[str, bytes, list[str]]]] = [
    (p.name, p.read_bytes(), ek.check(p.read_bytes(), spec="babelqueue").rules())
    for p in FIXTURES
    if not ek.check(p.read_bytes(), spec="babelqueue").ok
]


def envelope(spec: str, raw: bytes) -> Any:
    """The message parsed by its spec's model, as a producer would hold it."""
    if spec == "babelqueue":
        return BabelEnvelope.model_validate_json(raw)
    return SomEnvelope.model_validate_json(raw)


def ids(cases: list[Any]) -> list[str]:
    """One test id per case: its first member."""
    return [case[0] for case in cases]
