"""The cyclic collector paused while a large message's trees are built (``_collector``)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ValidationError

import envelopekit as ek
from envelopekit._collector import CollectorPaused
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxRequest
from envelopekit.som import SomEnvelope
from tests._calls import collections_set_off
from tests.conftest import DATA

_ARRAYS = b",".join([b"[]"] * 70_000)  # 70,000 lists: a hundred collections, unpaused
_BABELQUEUE = (
    b'{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
    b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php",'
    b'"schema_version":1,"created_at":1749132727000},"attempts":0,"data":{"a":[' + _ARRAYS + b"]}}"
)
_MATRIX = b'{"op":"fs.write","payload":{"a":[' + _ARRAYS + b"]}}"
_STORY = orjson.loads(
    (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
)
_SOM = orjson.dumps({**_STORY, "_actors": {"a": [[]] * 70_000}})
MESSAGES = {"babelqueue": _BABELQUEUE, "matrix": _MATRIX, "som": _SOM}
# From 3.12 on the interpreter runs a collection only at its next check, not during a build in C.
_DEFERRED = sys.version_info >= (3, 12)
MODELS: dict[str, type[BaseModel]] = {
    "babelqueue": BabelEnvelope,
    "matrix": MxRequest,
    "som": SomEnvelope,
}


@pytest.fixture(params=[True, False], ids=["collecting", "paused-by-the-caller"])
def collecting(request: pytest.FixtureRequest) -> Iterator[bool]:
    """The collector as the caller has it; the test checks it is left so."""
    if not request.param:
        gc.disable()
    try:
        yield request.param
    finally:
        gc.enable()


def _quiet(call: Callable[[], object], collecting: bool) -> None:
    """``call()`` sets off no collection, and leaves the collector as it found it.

    Called once first: a first check imports its spec's modules, which collects.
    """
    call()
    assert collections_set_off(call) == 0
    assert gc.isenabled() is collecting


def test_the_collector_runs_again_after_the_block_even_when_it_raises(collecting: bool) -> None:
    with CollectorPaused():
        assert not gc.isenabled()
    assert gc.isenabled() is collecting
    with pytest.raises(KeyError), CollectorPaused():
        raise KeyError("x")
    assert gc.isenabled() is collecting


def test_nested_blocks_leave_the_collector_to_the_outer_one(collecting: bool) -> None:
    with CollectorPaused():
        with CollectorPaused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled() is collecting


def test_unpaused_the_messages_set_off_collections() -> None:
    # What the tests below measure: building these trees with the collector running collects
    # (on 3.10 and 3.11 a hundred times during the build; from 3.12 on, once the build returns
    # to the interpreter, which runs a collection only at its next check).
    for raw in MESSAGES.values():
        assert len(raw) > FULL_REPORT_BYTES
        assert collections_set_off(partial(orjson.loads, raw)) >= (1 if _DEFERRED else 10)


@pytest.mark.parametrize("spec", ["babelqueue", "matrix", "som", "auto"])
@pytest.mark.parametrize("duplicates", ["allow", "refuse"])
def test_check_builds_a_large_message_s_trees_with_the_collector_paused(
    collecting: bool, spec: str, duplicates: Any
) -> None:
    # Before: 1 MiB of small arrays cost pydantic-core's validation 83 ms, 62 of them collections
    # walking the tree being built (bench/hostile.py).
    settings = ek.Settings(duplicate_keys=duplicates, max_message_bytes=4 * 1_048_576)
    for name, raw in MESSAGES.items():
        if spec in ("auto", name):
            _quiet(partial(ek.check, raw, spec, settings=settings), collecting)
            verdict = ek.check(raw, spec, settings=settings)
            assert verdict.ok, verdict.violations


@pytest.mark.parametrize("name", MODELS)
def test_a_door_builds_a_large_message_s_tree_with_the_collector_paused(
    collecting: bool, name: str
) -> None:
    model, raw = MODELS[name], MESSAGES[name]
    _quiet(lambda: model.model_validate_json(raw), collecting)
    # Refused too: the collector runs again when the door raises.
    refused = raw.replace(b"[]", b"[]]", 1)

    def read() -> None:
        with pytest.raises(ValidationError):
            model.model_validate_json(refused)

    read()
    assert gc.isenabled() is collecting
