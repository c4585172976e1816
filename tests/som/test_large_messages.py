"""A large SOM message (over ``FULL_REPORT_BYTES``): read with the envelope open, same verdict.

``check`` reads a SOM message over 16 KiB with the fail-fast copy of the schema, and with the
envelope open: its unknown keys are noted, never built as one pydantic error each (30,000 of
them cost 20 ms to read back as Python dicts, 12x ``orjson.loads``). The verdict must be the
one the closed fail-fast reading gives: the same violations in the same order, the same count
of what was left out, the same envelope and warnings.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import envelopekit as ek
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit.som import FAMILY_BY_MESSAGE_TYPE
from envelopekit.som._spec import _UNKNOWN, SPEC, _tolerant
from tests._verdicts import same, without
from tests.som._corpus import (
    label,
    negative_envelope,
    negative_files,
    positive_envelope,
    positive_files,
)
from tests.som._mutations import mutations

SETTINGS = [
    ek.Settings(max_violations=3),
    ek.Settings(),
    ek.Settings(som_version_mode="tolerant"),
]
PAD = b" " * (FULL_REPORT_BYTES + 1)


def closed_reading(raw: bytes, settings: ek.Settings) -> ek.Verdict[Any]:
    """What ``Spec.validate`` gives a large message without SOM's own reading: the closed one."""
    return without(SPEC, "validate_large", raw, settings)


def with_unknown(document: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``document`` with ``count`` unknown keys after its members, and before them."""
    keys = {f"x-unknown-{i}": i for i in range(count)}
    return [{**document, **keys}, {**keys, **document}]


def agreement_broken(document: dict[str, Any]) -> list[dict[str, Any]]:
    """``document`` under another ``message_type`` of its payload's family than the payload's own.

    The payload is valid for its family; only the envelope's after-validator refuses it
    (``payload.message_type_mismatch``), which a closed envelope with unknown keys never runs.
    """
    payload = document.get("payload")
    if not isinstance(payload, dict) or "message_type" not in payload:
        return []
    own = payload["message_type"]
    family = own.rpartition(".")[0]
    others = [t for t in FAMILY_BY_MESSAGE_TYPE if t.startswith(f"{family}.") and t != own]
    return [{**document, "message_type": other} for other in others]


DOCUMENTS = [
    *[pytest.param(positive_envelope(path), id=label(path)) for path in positive_files()],
    *[pytest.param(negative_envelope(path), id=label(path)) for path in negative_files()],
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_open_reading_is_the_closed_one(document: dict[str, Any]) -> None:
    """The document, some of its mutations, and a payload that disagrees with its type, each
    with 0, 1, 5 and 150 unknown keys (over the caps of 3 and 100), padded over the bound."""
    variants = [document, *agreement_broken(document)]
    variants += [mutation.document for mutation in list(mutations(document))[::29]]
    for variant in variants:
        for count in (0, 1, 5, 150):
            for shaped in with_unknown(variant, count)[: 1 if count == 0 else 2]:
                raw = orjson.dumps(shaped) + PAD
                for settings in SETTINGS:
                    new = SPEC.validate(raw, settings)
                    assert same(new, closed_reading(raw, settings)), (shaped, new.violations)


def test_unknown_keys_are_never_built_as_errors() -> None:
    """20,000 unknown keys are noted by the open reading, which raises no error for them."""
    document = positive_envelope(positive_files()[0])
    raw = orjson.dumps({**document, **{f"k{i}": 0 for i in range(20_000)}})
    assert FULL_REPORT_BYTES < len(raw) <= 240_000
    unknown: list[str] = []
    envelope = _tolerant().validate_json(
        raw, context={"som_version_mode": "strict", _UNKNOWN: unknown}
    )
    assert envelope.message_id == document["message_id"]
    assert unknown == [f"k{i}" for i in range(20_000)]
    verdict = ek.check(raw, "som")
    assert [v.pointer for v in verdict.violations[:-1]] == [f"/k{i}" for i in range(100)]
    assert verdict.violations[-1].message.startswith("19900 more findings")
