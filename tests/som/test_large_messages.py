"""A large SOM message (over ``FULL_REPORT_BYTES``): its unknown keys counted, same verdict.

``check`` reads a SOM message over 16 KiB with the fail-fast copy of the schema in which every
closed model refuses its first unknown key, and the next ones until ``max_violations`` were
refused; the others are counted, never built as one pydantic error each
(``_failfast.UnknownKeys``: 29,000 in a payload cost 33.6x ``orjson.loads`` as errors). The
verdict must be the one the closed fail-fast reading gives: the same violations in the same
order, the same count of what was left out, the same envelope (down to each model's extras)
and warnings.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit._failfast import FULL_REPORT_BYTES, UNKNOWN_KEYS, UnknownKeys
from envelopekit.som import FAMILY_BY_MESSAGE_TYPE
from envelopekit.som._spec import SPEC, _counted
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


def everywhere(value: Any, count: int) -> Any:
    """``value`` with ``count`` unknown keys after the members of each object in it."""
    if isinstance(value, dict):
        found = {key: everywhere(item, count) for key, item in value.items()}
        return {**found, **{f"x-unknown-{i}": i for i in range(count)}}
    if isinstance(value, list):
        return [everywhere(item, count) for item in value]
    return value


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
def test_the_counting_reading_is_the_closed_one(document: dict[str, Any]) -> None:
    """The document, some of its mutations, and a payload that disagrees with its type, each
    with 0, 1, 5 and 150 unknown keys (over the caps of 3 and 100) in the envelope, or 1 and
    40 in every object of it, padded over the bound."""
    variants = [document, *agreement_broken(document)]
    variants += [mutation.document for mutation in list(mutations(document))[::29]]
    for variant in variants:
        shapes = [variant, *with_unknown(variant, 1), *with_unknown(variant, 5)]
        shapes += [*with_unknown(variant, 150), everywhere(variant, 1), everywhere(variant, 40)]
        for shaped in shapes:
            raw = orjson.dumps(shaped) + PAD
            for settings in SETTINGS:
                new = SPEC.validate(raw, settings)
                assert same(new, closed_reading(raw, settings)), (shaped, new.violations)


@pytest.mark.parametrize("where", ["envelope", "payload", "originating_system"])
def test_unknown_keys_past_the_cap_are_never_built_as_errors(where: str) -> None:
    """20,000 unknown keys in a model: 100 errors are built, the others counted."""
    document = positive_envelope(positive_files()[0])
    keys = {f"k{i}": 0 for i in range(20_000)}
    if where == "envelope":
        document = {**document, **keys}
    else:
        document = {**document, where: {**document[where], **keys}}
    raw = orjson.dumps(document)
    assert FULL_REPORT_BYTES < len(raw) <= 240_000
    counted = UnknownKeys(100)
    with pytest.raises(ValidationError) as raised:
        _counted().validate_json(raw, context={"som_version_mode": "strict", UNKNOWN_KEYS: counted})
    assert raised.value.error_count() == 100
    assert (counted.refused, counted.left) == (100, 19_900)
    verdict = ek.check(raw, "som")
    at = "" if where == "envelope" else f"/{where}"
    assert [v.pointer for v in verdict.violations[:-1]] == [f"{at}/k{i}" for i in range(100)]
    assert verdict.violations[-1].message.startswith("19900 more findings")
