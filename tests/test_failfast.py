"""Large messages through the models' JSON doors: bounded as ``check`` reads them.

Over ``FULL_REPORT_BYTES`` a message model's ``model_validate_json`` validates with the same
fail-fast copy of its schema as ``check`` (one error per array), so the two agree on the same
bytes, and a list of many bad items costs one error, not one per item. Within it, every error
is still reported. Cost is measured by what is built (the errors a ``ValidationError`` holds)
and by counting calls, never by time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

import envelopekit as ek
from envelopekit._failfast import FULL_REPORT_BYTES, large_validator
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.babelqueue import _envelope as babelqueue_envelope
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse
from envelopekit.som import SomEnvelope

DATA = Path(__file__).resolve().parent / "data"
STORY = DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"


def som_story_with_assets(item: bytes, size: int) -> bytes:
    """The beat-6 story with ``payload.assets`` as many copies of ``item`` as fit ``size``."""
    envelope = orjson.loads(STORY.read_bytes())
    envelope["payload"]["assets"] = []
    head, marker, rest = orjson.dumps(envelope).partition(b'"assets":[]')
    assert marker
    room = size - len(head) - len(rest) - len(b'"assets":[]')
    count = (room + 1) // (len(item) + 1)
    return head + b'"assets":[' + b",".join([item] * count) + b"]" + rest


def errors_of(model: Any, raw: bytes) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate_json(raw)
    return caught.value


def test_a_large_som_message_reports_one_error_per_array() -> None:
    """The issue's reproduction: 79,000 empty assets were 237,000 errors (three each)."""
    raw = som_story_with_assets(b"{}", 240_000)
    exc = errors_of(SomEnvelope, raw)
    assert exc.error_count() <= 3
    verdict = ek.check(raw, spec="som")
    # check reads the same bytes with the same validator: the same violations.
    assert ek.violations(exc, model=SomEnvelope, partial=True) == verdict.violations


def test_the_bound_is_check_s() -> None:
    """Within FULL_REPORT_BYTES every error is reported; one byte over, one per array."""
    within = som_story_with_assets(b"{}", FULL_REPORT_BYTES)
    assert len(within) <= FULL_REPORT_BYTES
    items = within.count(b"{}")
    assert errors_of(SomEnvelope, within).error_count() == 3 * items
    over = within.replace(b'"assets":[{}', b'"assets":[ {}', 1)
    over += b" " * (FULL_REPORT_BYTES + 1 - len(over))
    assert len(over) == FULL_REPORT_BYTES + 1
    assert errors_of(SomEnvelope, over).error_count() <= 3


def test_a_large_valid_som_message_is_the_same_envelope() -> None:
    small = STORY.read_bytes()
    padded = small.rstrip()[:-1] + b" " * FULL_REPORT_BYTES + b"}"
    assert SomEnvelope.model_validate_json(padded) == SomEnvelope.model_validate_json(small)


class Item(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)
    sku: str
    qty: int


class Batch(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)
    items: list[Item]


def test_a_typed_matrix_request_reports_one_error_per_array() -> None:
    request = MxRequest[Batch].create("orders.import", Batch(items=[]))
    document = json.loads(request.to_json())
    document["payload"] = {"items": [{"sku": 1}] * 5_000}
    raw = orjson.dumps(document)
    assert len(raw) > FULL_REPORT_BYTES
    exc = errors_of(MxRequest[Batch], raw)
    assert exc.error_count() <= 2  # the first bad item's two errors, not 10,000
    small = orjson.dumps({**document, "payload": {"items": [{"sku": 1}] * 10}})
    assert errors_of(MxRequest[Batch], small).error_count() == 20


def test_a_large_babelqueue_message_is_read_as_check_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over the bound the fast path is not tried (issue 12: it cost more than the model)."""
    tried: list[object] = []
    fast = babelqueue_envelope.FAST_PATH

    def counted(raw: bytes) -> object:
        tried.append(raw)
        validate = fast.validator_json()
        assert validate is not None
        return validate(raw)

    # The door reads the fast validator through its module's `_parse` (FAST_PATH.parse).
    monkeypatch.setattr(babelqueue_envelope, "_parse", counted)
    small = BabelEnvelope.create("urn:x:y", {"n": 1}).to_json()
    large = BabelEnvelope.create("urn:x:y", {"k": list(range(4_000))}).to_json()
    assert len(large) > FULL_REPORT_BYTES
    assert BabelEnvelope.model_validate_json(small).data == {"n": 1}
    assert len(tried) == 1
    envelope = BabelEnvelope.model_validate_json(large)
    assert len(tried) == 1
    verdict = ek.check(large, spec="babelqueue")
    assert verdict.envelope == envelope
    refused = large.replace(b'"k":[0,', b'"k":[NaN,')
    exc = errors_of(BabelEnvelope, refused)
    assert ek.violations(exc, model=BabelEnvelope, partial=True) == (
        ek.check(refused, spec="babelqueue").violations
    )


def test_the_large_validator_is_built_once_per_model() -> None:
    assert large_validator(SomEnvelope) is large_validator(SomEnvelope)
    assert large_validator(BabelEnvelope) is not large_validator(SomEnvelope)


def test_the_dict_door_of_a_large_som_message_is_bounded_alike() -> None:
    """``model_validate`` of a dict of plain JSON data over the bound reads as the JSON door."""
    raw = som_story_with_assets(b"{}", 240_000)
    by_json = errors_of(SomEnvelope, raw)
    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate(json.loads(raw))
    assert caught.value.error_count() == by_json.error_count() <= 3
    assert ek.violations(caught.value, model=SomEnvelope) == ek.violations(
        by_json, model=SomEnvelope
    )


def test_the_dict_door_of_a_large_babelqueue_message_is_read_as_json_reads_it() -> None:
    large = BabelEnvelope.create("urn:x:y", {"k": list(range(4_000))}).to_json()
    document = json.loads(large)
    assert BabelEnvelope.model_validate(document) == BabelEnvelope.model_validate_json(large)
    document["data"]["k"][0] = float("nan")
    with pytest.raises(ValidationError) as caught:
        BabelEnvelope.model_validate(document)
    assert [v.rule for v in ek.violations(caught.value, model=BabelEnvelope)] == [
        "number.non_finite"
    ]


# A message of each model, wrong in a field, made large by unknown keys.
WRONG: dict[type[BaseModel], dict[str, Any]] = {
    BabelEnvelope: {"job": 1},
    SomEnvelope: {"som_version": 1},
    MxRequest: {"op": 1},
    MxResponse: {"ok": "yes"},
    MxErrorPayload: {"code": 1},
}


@pytest.mark.parametrize("model", list(WRONG), ids=lambda model: model.__name__)
@pytest.mark.parametrize("door", ["json", "str", "dict"])
def test_a_large_refusal_is_titled_by_its_model(model: type[BaseModel], door: str) -> None:
    """Over the bound the error still names its model, as pydantic's own validator does.

    It said "json-or-python[json=function-after[...], ...]": the copy was built without the
    model's own config, which carries its title.
    """
    message = {**WRONG[model], **{f"k{i}": 0 for i in range(FULL_REPORT_BYTES // 8)}}
    raw = orjson.dumps(message)
    assert len(raw) > FULL_REPORT_BYTES
    with pytest.raises(ValidationError) as caught:
        if door == "dict":
            model.model_validate(message)
        else:
            model.model_validate_json(raw if door == "json" else raw.decode())
    assert caught.value.title == model.__name__
    assert str(caught.value).split("\n", 1)[0].endswith(f" for {model.__name__}")
