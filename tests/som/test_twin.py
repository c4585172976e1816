"""The fast path's Rust reading of the SOM hooks (``som/_twin.py``) against the hooks.

Each case changes a valid message right at the edge of one hook the fast path replaces by a
Rust schema (a float-spelt integer, a bound, NaN in free-form JSON, a vendor value, an
``anyOf`` or conditional branch), and the message must get the same outcome (same model, or
the same errors) from ``model_validate_json`` and ``model_validate`` (fast path first) as from
the model's own validator. The Python hooks the fast validator still calls on the corpus are
listed: a hook whose Rust reading is lost shows up there.
"""

from __future__ import annotations

import copy
import enum
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from pydantic import ValidationError

from envelopekit.som import SomEnvelope, _twin
from envelopekit.som._envelope import FAST_PATH
from tests._calls import python_calls
from tests.som._corpus import label, positive_envelope, positive_files
from tests.som.test_fast_path import outcome
from tests.test_check_properties import WIDE

_BY_LABEL = {label(p): p for p in positive_files()}


def _document(name: str) -> dict[str, Any]:
    return positive_envelope(_BY_LABEL[name])


STORY = "story-context/hurricane-beat6-envelope.json"
TELLING = "telling/started-with-transforms.json"


def _set(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    target: Any = changed
    for part in path[:-1]:
        target = target[part]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return changed


_DELETE = object()

ASSET = ("payload", "assets", 0)
PROVENANCE = ("payload", "assets", 1, "provenance")
CLAIM = ("payload", "assertions", 0, "claim")
MEDIA_REF = (*ASSET, "media_refs", 0)
ASSERTION = ("payload", "assertions", 0)
_CLAIMED = {
    "assertion_id": "a-1",
    "assertion_type": "FACT_CHECK",
    "target": {"kind": "STORY", "id": "s"},
    "claim": {"metric": "m", "value": 1},
    "asserted_at": "2026-09-11T16:27:00Z",
    "provenance": {"author": "HUMAN"},
}
_DETECTED = {"detection_class": "deepfake", "verdict": "none", "score": 0.1}


def _match(claim: Any) -> dict[str, Any]:
    return {**_CLAIMED, "assertion_type": "MATCH", "claim": claim}


def _detection(claim: Any) -> dict[str, Any]:
    return {**_CLAIMED, "assertion_type": "DETECTION", "claim": claim}


# (name, base document, path, value)
EDGES: list[tuple[str, str, tuple[str | int, ...], Any]] = [
    # integer, number, bounds
    ("integer as 7.0", STORY, ("payload", "sequence_number"), 7.0),
    ("integer 7.5", STORY, ("payload", "sequence_number"), 7.5),
    ("integer -1", STORY, ("payload", "sequence_number"), -1),
    ("integer true", STORY, ("payload", "sequence_number"), True),
    ("integer huge", STORY, ("payload", "sequence_number"), 10**30),
    ("integer as string", STORY, ("payload", "sequence_number"), "7"),
    ("header integer 7.0", STORY, ("modification_header", "story_version"), 7.0),
    ("unit 1", STORY, (*PROVENANCE, "confidence"), 1),
    ("unit 0", STORY, (*PROVENANCE, "confidence"), 0),
    ("unit 1.0", STORY, (*PROVENANCE, "confidence"), 1.0),
    ("unit 1.5", STORY, (*PROVENANCE, "confidence"), 1.5),
    ("unit -0.1", STORY, (*PROVENANCE, "confidence"), -0.1),
    ("unit false", STORY, (*PROVENANCE, "confidence"), False),
    ("unit string", STORY, (*PROVENANCE, "confidence"), "0.5"),
    ("number frame rate int", STORY, (*ASSET, "delivery_spec"), {"frame_rate": 25}),
    ("number frame rate float", STORY, (*ASSET, "delivery_spec"), {"frame_rate": 29.97}),
    ("number frame rate bool", STORY, (*ASSET, "delivery_spec"), {"frame_rate": True}),
    # free-form JSON
    ("claim nested", STORY, (*CLAIM, "value"), {"a": [1, 2.5, None, True, "x", {"b": []}]}),
    ("claim 1e400", STORY, (*CLAIM, "value"), 1e400),
    ("claim nan", STORY, (*CLAIM, "value"), float("nan")),
    ("claim deep -inf", STORY, (*CLAIM, "value"), [{"a": [float("-inf")]}]),
    ("claim 2.0", STORY, (*CLAIM, "value"), 2.0),
    ("claim huge int", STORY, (*CLAIM, "value"), 10**40),
    ("extensions nan", STORY, ("payload", "extensions", "com.nbcu.x"), float("nan")),
    ("extensions bad key", STORY, ("payload", "extensions", "org.nbcu.x"), 1),
    ("extensions key com.x", STORY, ("payload", "extensions", "com.x"), 1),
    ("envelope extensions", STORY, ("extensions",), {"com.acme.a": {"b": 1.5}}),
    ("envelope extensions inf", STORY, ("extensions",), {"com.acme.a": float("inf")}),
    ("actors", STORY, ("_actors",), {"a": {"b": [1, "c"]}}),
    ("actors nan", STORY, ("_actors",), {"a": float("nan")}),
    ("context string", STORY, ("@context",), "https://schema.org"),
    ("context object", STORY, ("@context",), {"@vocab": "https://schema.org/"}),
    ("context object nan", STORY, ("@context",), {"x": float("nan")}),
    ("context array", STORY, ("@context",), ["x"]),
    ("story owner object", STORY, ("payload", "story_owner"), {"system": "ncs", "n": 2}),
    ("open extras", STORY, ("modification_header", "x-extra"), {"a": 1}),
    ("open extras nan", STORY, ("modification_header", "x-extra"), [float("nan")]),
    ("delivery spec extras inf", STORY, (*ASSET, "delivery_spec"), {"bitrate": float("inf")}),
    ("header history nan", STORY, ("modification_header", "history"), [float("nan")]),
    # vendor enums
    ("vendor value", STORY, (*ASSET, "asset_type"), "x-hologram"),
    ("vendor value bad", STORY, (*ASSET, "asset_type"), "x-Hologram"),
    ("vendor value lower", STORY, (*ASSET, "asset_type"), "video"),
    ("vendor value prefix", STORY, (*ASSET, "asset_type"), "VIDEOS"),
    ("vendor value newline", STORY, (*ASSET, "asset_type"), "VIDEO\n"),
    ("vendor value x- newline", STORY, (*ASSET, "asset_type"), "x-a\n"),
    ("vendor value int", STORY, (*ASSET, "asset_type"), 3),
    ("vendor value of another enum", STORY, (*ASSET, "asset_type"), "CROP"),
    ("vendor value x- alone", STORY, (*ASSET, "asset_type"), "x-"),
    ("vendor value x- upper", STORY, (*ASSET, "asset_type"), "X-hologram"),
    ("vendor value null", STORY, (*ASSET, "asset_type"), None),
    ("transform vendor value", TELLING, ("payload", "transforms", 0, "transform_type"), "x-blur"),
    ("transform asset type", TELLING, ("payload", "transforms", 0, "transform_type"), "VIDEO"),
    ("source type vendor", STORY, ("payload", "editorial_source", 0, "source_type"), "x-tip"),
    # time ranges
    ("time range list", STORY, (*MEDIA_REF, "time_range"), ["[0:0_1:0)", "(2:0_)"]),
    ("time range empty list", STORY, (*MEDIA_REF, "time_range"), []),
    ("time range bad", STORY, (*MEDIA_REF, "time_range"), "0:0_1:0"),
    ("time range list bad", STORY, (*MEDIA_REF, "time_range"), ["[0:0_1:0)", 3]),
    ("time range number", STORY, (*MEDIA_REF, "time_range"), 3),
    # anyOf of required
    ("media ref locator", STORY, MEDIA_REF, {"locator": {"store": "s", "ref": "r"}}),
    ("media ref both", STORY, (*MEDIA_REF, "locator"), {"store": "s", "ref": "r"}),
    ("media ref neither", STORY, MEDIA_REF, {"label": "x"}),
    ("media ref bad source", STORY, MEDIA_REF, {"source": "http://x", "locator": {"store": "s"}}),
    (
        "media range source",
        STORY,
        ("payload", "compliance", 0, "media_range"),
        {"source": "tams://s/1", "time_range": "[0:0_1:0)"},
    ),
    (
        "media range locator",
        STORY,
        ("payload", "compliance", 0, "media_range"),
        {"locator": {"store": "s", "ref": "r"}, "time_range": "[0:0_1:0)"},
    ),
    (
        "media range no time",
        STORY,
        ("payload", "compliance", 0, "media_range"),
        {"source": "tams://s/1"},
    ),
    # conditionals on a member's value
    ("human with model", STORY, (*PROVENANCE, "author"), "HUMAN"),
    ("human without model", STORY, PROVENANCE, {"author": "HUMAN"}),
    ("human with version", STORY, PROVENANCE, {"author": "HUMAN", "model_version": "1"}),
    ("author missing", STORY, PROVENANCE, {"model": "m"}),
    ("author lower", STORY, PROVENANCE, {"author": "human"}),
    ("active without lifecycle", STORY, ("payload", "lifecycle"), _DELETE),
    ("planned with lifecycle", STORY, ("payload", "story_type"), "PLANNED"),
    ("story type bad", STORY, ("payload", "story_type"), "LIVE"),
    ("story type missing", STORY, ("payload", "story_type"), _DELETE),
    ("claim without value", STORY, (*CLAIM, "value"), _DELETE),
    ("claim without metric", STORY, (*CLAIM, "metric"), _DELETE),
    ("claim empty", STORY, CLAIM, {}),
    ("claim keys in another order", STORY, CLAIM, {"value": 1, "x": [2], "metric": "m"}),
    ("claim a string", STORY, CLAIM, "metric"),
    ("claim an array of its keys", STORY, CLAIM, ["metric", "value"]),
    ("claim key in a nested object", STORY, CLAIM, {"metric": "m", "x": {"value": 1}}),
    ("claim of a match", STORY, ASSERTION, {**_CLAIMED, "assertion_type": "MATCH"}),
    ("claim of a match with its key", STORY, ASSERTION, _match({"story_id": "s", "n": 1})),
    ("claim of a match, key null", STORY, ASSERTION, _match({"story_id": None})),
    ("claim of a detection", STORY, ASSERTION, _detection({"detection_class": "c"})),
    ("claim of a detection with its keys", STORY, ASSERTION, _detection(_DETECTED)),
    ("assertion type bad", STORY, (*ASSERTION, "assertion_type"), "OPINION"),
    ("assertion type missing", STORY, (*ASSERTION, "assertion_type"), _DELETE),
    ("assertion type lower", STORY, (*ASSERTION, "assertion_type"), "fact_check"),
    # free-form containers of scalars, read in Rust one level down
    ("actors flat", STORY, ("_actors",), {"a": {"b": 1, "c": "d", "e": None, "f": 2.5}}),
    ("actors flat nan", STORY, ("_actors",), {"a": {"b": 1, "c": float("nan")}}),
    ("actors list inf", STORY, ("_actors",), {"a": [1, float("inf")]}),
    ("actors empty below", STORY, ("_actors",), {"a": {"b": {}, "c": []}, "d": [[], {}]}),
    ("actors long list nan", STORY, ("_actors",), {"a": [*range(70), float("nan")]}),
    ("actors nested nan", STORY, ("_actors",), {"a": [{"b": float("nan")}]}),
    ("extension object nan", STORY, ("payload", "extensions", "com.nbcu.x"), {"a": float("nan")}),
]


def _telling_and_link() -> Iterator[tuple[str, dict[str, Any]]]:
    """The conditionals the envelope's message type picks, on each of the types."""
    telling = _document("telling/started.json")
    start = telling["payload"]["exposure_start"]
    for kind in ("telling.started", "telling.ended", "telling.exposed"):
        for present in ((), ("exposure_start",), ("exposure_end",), ("exposure_start", "end")):
            payload = {k: v for k, v in telling["payload"].items() if k not in ("exposure_start",)}
            payload["message_type"] = kind
            for name in present:
                payload["exposure_end" if name in ("exposure_end", "end") else name] = start
            if "end" in present:
                payload["exposure_start"] = start
            document = {**telling, "message_type": kind, "topic": "som." + kind}
            yield f"{kind} with {present}", {**document, "payload": payload}
    link = _document("link/committed.json")
    withdrawn = {"withdrawn_by": "p", "withdrawn_at": "2026-06-12T10:00:00Z"}
    for kind in ("link.committed", "link.gate_changed", "link.withdrawn"):
        for drop in ((), ("committed_by",), ("committed_at",)):
            for with_withdrawn in (False, True):
                payload = {k: v for k, v in link["payload"].items() if k not in drop}
                payload["message_type"] = kind
                if with_withdrawn:
                    payload["withdrawn"] = withdrawn
                document = {**link, "message_type": kind, "topic": "som." + kind}
                yield (
                    f"{kind} without {drop}, withdrawn {with_withdrawn}",
                    {
                        **document,
                        "payload": payload,
                    },
                )
    delivery = _document("delivery/media-available.json")
    gone_members: list[tuple[str, ...]] = [(), ("source",), ("source", "locator")]
    for gone in gone_members:
        payload = {k: v for k, v in delivery["payload"].items() if k not in gone}
        if gone == ("source",):
            payload["locator"] = {"store": "s", "ref": "r"}
        yield f"delivery without {gone}", {**delivery, "payload": payload}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    found = [(name, _set(_document(base), path, value)) for name, base, path, value in EDGES]
    return found + list(_telling_and_link())


CASES = _cases()


def _json(document: dict[str, Any]) -> str:
    # `json.dumps` writes NaN, Infinity and 1e400 (inf) as the tokens pydantic's parser reads.
    return json.dumps(document)


OPTIONS: list[dict[str, Any]] = [
    {},
    {"strict": True},
    {"strict": False},
    {"extra": "ignore"},
    {"extra": "allow"},
    {"strict": True, "extra": "forbid"},
    {"context": {"som_version_mode": "tolerant", "unknown_message_type": "refuse"}},
]


def _same(found: Any, own: Callable[..., Any], value: Any, options: dict[str, Any]) -> bool:
    # By repr: a NaN in an error's input is not equal to itself.
    expected = outcome(own, value, options)
    assert repr(found) == repr(expected), options
    return True


@pytest.mark.parametrize(("name", "document"), CASES, ids=[name for name, _ in CASES])
def test_json_edges_agree_with_the_model(name: str, document: dict[str, Any]) -> None:
    raw = _json(document)
    own = SomEnvelope.__pydantic_validator__.validate_json
    for options in OPTIONS:
        assert _same(outcome(SomEnvelope.model_validate_json, raw, options), own, raw, options)


@pytest.mark.parametrize(("name", "document"), CASES, ids=[name for name, _ in CASES])
def test_dict_edges_agree_with_the_model(name: str, document: dict[str, Any]) -> None:
    own = SomEnvelope.__pydantic_validator__.validate_python
    for options in OPTIONS:
        assert _same(outcome(SomEnvelope.model_validate, document, options), own, document, options)


def test_the_edges_take_the_fast_path_where_valid() -> None:
    """The cases are not all handed to the model: the Rust readings accept the valid ones."""
    taken = accepted = 0
    for _, document in CASES:
        raw = _json(document)
        try:
            SomEnvelope.__pydantic_validator__.validate_json(raw)
        except ValidationError:
            assert FAST_PATH.validate_json(raw) is None
            continue
        accepted += 1
        taken += FAST_PATH.validate_json(raw) is not None
    # What the fast path leaves to the model on purpose: 7.0 and 1.0 spelt as floats.
    assert accepted - taken <= 3
    assert taken > 30


class _Kind(str, enum.Enum):
    VIDEO = "VIDEO"


class _Number(int, enum.Enum):
    SEVEN = 7


class _Text(str):
    pass


class _Float(float):
    pass


PYTHON_ONLY: list[tuple[str, tuple[str | int, ...], Any]] = [
    ("str enum vendor value", (*ASSET, "asset_type"), _Kind.VIDEO),
    ("str subclass vendor value", (*ASSET, "asset_type"), _Text("VIDEO")),
    ("str subclass plain string", ("payload", "headline"), _Text("headline")),
    ("int enum integer", ("payload", "sequence_number"), _Number.SEVEN),
    ("float subclass unit", (*PROVENANCE, "confidence"), _Float(0.5)),
    ("tuple time range", (*MEDIA_REF, "time_range"), ("[0:0_1:0)",)),
    ("tuple in a list member", (*ASSET, "derived_from"), ("a", "b")),
    ("tuple in free-form", (*CLAIM, "value"), (1, 2)),
    ("lone surrogate", ("payload", "headline"), "\ud800"),
    ("lone surrogate key", (*CLAIM, "\udc00"), 1),
    ("integer beyond 64 bits", ("payload", "sequence_number"), 2**70),
    ("non-string key", (*CLAIM, 3), 1),
    ("bytes", ("payload", "headline"), b"headline"),
]


@pytest.mark.parametrize(
    ("name", "path", "value"), PYTHON_ONLY, ids=[name for name, _, _ in PYTHON_ONLY]
)
def test_python_values_agree_with_the_model(
    name: str, path: tuple[str | int, ...], value: Any
) -> None:
    """Values only Python data can hold: subclasses, tuples, what no JSON text carries."""
    document = _set(_document(STORY), path, value)
    own = SomEnvelope.__pydantic_validator__.validate_python
    for options in OPTIONS:
        assert _same(outcome(SomEnvelope.model_validate, document, options), own, document, options)


def test_model_instances_in_the_input_go_to_the_model() -> None:
    envelope = SomEnvelope.model_validate_json(_json(_document(STORY)))
    document = {**_document(STORY), "payload": envelope.payload}
    assert FAST_PATH.validate_python(document) is None
    assert SomEnvelope.model_validate(document).payload is envelope.payload


# The hooks the fast path keeps (a Rust schema cannot compare list items): a new name here
# means a Rust reading was lost. `_finite_container` walks a free-form array or object that
# holds another once (`_twin.json_definition`): a Rust union per level copied each container into
# the error of every choice that failed on it (issue 12). `_claim_shape` is read in Rust (a
# tagged union on `assertion_type`, the keys checked by `frozenset.issubset`).
KEPT_HOOKS = {"_unique_tags", "_tag_key", "_finite_container"}


def _python_calls(call: Callable[[], object]) -> set[str]:
    return {code.co_name for code in python_calls(call)} - {"<lambda>"}


@pytest.mark.parametrize("path", positive_files(), ids=label)
def test_the_fast_validator_runs_almost_no_python(path: Any) -> None:
    document = positive_envelope(path)
    raw = _json(document)
    fast = FAST_PATH.validator()
    assert fast is not None
    assert fast.validate_json(raw) is not None
    assert _python_calls(lambda: fast.validate_json(raw)) <= KEPT_HOOKS
    # Python input keeps the scalar and free-form hooks (see `_twin._in_json`), not the rest.
    assert fast.validate_python(document) is not None
    assert not _python_calls(lambda: fast.validate_python(document)) & STRUCTURAL_HOOKS


# The conditionals and anyOf rules are made by `_types.conditional` and `any_of_required`: their
# code is named `_conditional` (`_conditional_after`) and `required_any` whichever model declares
# them.
STRUCTURAL_HOOKS = {
    "_wire_version",
    "_dispatch",
    "_payload_tag",
    "_payload_agrees",
    "_own_type_agrees",
    "_conditional",
    "_conditional_after",
    "required_any",
    "_extension_key",
    "_claim_shape",
}


def test_free_form_json_is_walked_once_not_read_by_a_union_per_level() -> None:
    """A free-form array or object holding another is one Python walk, however deep.

    The first reading was a Rust union per level, and pydantic-core copies a container into
    the error of each choice that fails on it: 16 KB of 28-deep arrays in ``_actors`` cost 10
    times the model's own reading (issue 12). A string, a scalar and an array or object of
    scalars only (or empty) are read in Rust, without a walk (issue 16: an extension's object
    of scalars cost a Python call). Counted by the calls made, not timed.
    """
    fast = FAST_PATH.validator()
    assert fast is not None
    nested: object = [1, 2.5, "x", None, True]
    for level in range(20):
        nested = [nested] if level % 2 else {"k": nested}

    def walks(document: dict[str, Any]) -> int:
        raw = _json(document)
        found: list[object] = []
        calls = python_calls(lambda: found.append(fast.validate_json(raw)))
        assert found[0] is not None
        return [code.co_name for code in calls].count("_finite_container")

    story = _document(STORY)
    # One walk for each array or object in `_actors` that holds one, whatever its depth.
    assert walks({**story, "_actors": {"a": nested, "b": [1], "c": "s"}}) == walks(story) + 1
    assert walks({**story, "_actors": {"a": [nested, nested, [1], {}]}}) == walks(story) + 1
    assert walks({**story, "_actors": {"a": [{"x": 1}] * 300, "b": {"c": []}}}) == walks(story) + 2
    scalars = {"s": "x", "i": 7, "f": 2.5, "t": True, "n": None, "e": [], "o": {}}
    assert walks({**story, "_actors": scalars}) == walks(story)
    flat = {"l": [1, "x", None, 2.5, False], "d": {"k": "v", "n": None}}
    assert walks({**story, "_actors": {**scalars, **flat}}) == walks(story)
    # A flat container longer than 64 items is walked (item by item the walk is cheaper).
    assert walks({**story, "_actors": {"a": [1] * 64, "b": [1] * 65}}) == walks(story) + 1
    refused = _json({**_document(STORY), "_actors": {"a": [[[{"n": float("nan")}]]]}})
    assert fast.validate_json(refused) is None
    with pytest.raises(ValidationError):
        SomEnvelope.model_validate_json(refused)


@settings(max_examples=300, deadline=None)
@given(WIDE.filter(lambda value: isinstance(value, (dict, list)) and bool(value)))
def test_a_wide_container_read_as_text_is_finite_as_the_walk_says(value: Any) -> None:
    # A container of BY_TEXT members or more is first read from orjson's text of it: where
    # that shows every float finite, so does the walk; where not, the walk decides.
    def walked(container: Any) -> bool:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_twin, "BY_TEXT", 10**9)
            try:
                _twin._finite_container(container)
            except ValueError:
                return False
            return True

    try:
        _twin._finite_container(value)
    except ValueError:
        assert not walked(value)
    else:
        assert walked(value)


@pytest.mark.parametrize(
    ("value", "finite"),
    [
        (float("nan"), False),
        (float("-inf"), False),
        (2**64, True),  # beyond what orjson writes: walked
        (2**53, True),  # any integer is finite
        (None, True),
        (1e300, True),
    ],
)
def test_each_number_of_a_wide_container_is_read_as_the_walk_reads_it(
    value: Any, finite: bool
) -> None:
    wide = [0] * 9 + [{"a": [value]}]
    if finite:
        assert _twin._finite_container(wide) is wide
    else:
        with pytest.raises(ValueError, match="not finite"):
            _twin._finite_container(wide)
