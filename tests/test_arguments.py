"""A public call given ``settings=`` or ``clock=`` of another type names the argument.

Each such object was read for an attribute deep in the call: ``settings=5`` raised
``AttributeError: 'int' object has no attribute 'babelqueue_queue'``.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable
from typing import Any

import pytest

from envelopekit import Settings, check
from envelopekit.babelqueue import BabelEnvelope, Router, redrive
from envelopekit.cloudevents import from_binary, from_message, from_structured, to_structured
from envelopekit.matrix import LamportClock, MxErrorCode, MxRequest
from envelopekit.som import SomEnvelope
from tests.som._corpus import DATA
from tests.test_public_api import PACKAGES

_URN = "urn:babel:job:billing:invoice-paid"
_JOB = BabelEnvelope.create(_URN, {"invoice": 1})
_ASKED = MxRequest.create("orders.get", {"id": 1}, expect_reply=True)
_STORY: dict[str, Any] = json.loads((DATA / "examples/story-context/tags.json").read_bytes())
_SYSTEM = {"system_id": "ncs-1", "system_type": "ncs"}
_SOM = SomEnvelope.create("story.context", _STORY, originating_system=_SYSTEM)
_EVENT = to_structured(_JOB)

# Each public call taking `settings=` or `clock=`, by its qualified name, given the keyword.
CALLS: dict[str, Callable[[dict[str, Any]], object]] = {
    "check": lambda kw: check(_JOB.to_json(), "babelqueue", **kw),
    "BabelEnvelope.create": lambda kw: BabelEnvelope.create(_URN, {}, **kw),
    "BabelEnvelope.child": lambda kw: _JOB.child(_URN, {}, **kw),
    "redrive": lambda kw: redrive(_JOB.to_json(), **kw),
    "Router": lambda kw: Router(**kw),
    "MxRequest.create": lambda kw: MxRequest.create("orders.get", {}, **kw),
    "MxRequest.reply": lambda kw: _ASKED.reply({}, **kw),
    "MxRequest.fail": lambda kw: _ASKED.fail(MxErrorCode.NOT_FOUND, "no", **kw),
    "SomEnvelope.create": lambda kw: SomEnvelope.create(
        "story.context", _STORY, originating_system=_SYSTEM, **kw
    ),
    "SomEnvelope.follow_up": lambda kw: _SOM.follow_up(
        "story.context", _STORY, originating_system=_SYSTEM, **kw
    ),
    "from_binary": lambda kw: from_binary({}, _JOB.to_json(), **kw),
    "from_message": lambda kw: from_message({}, _JOB.to_json(), **kw),
    "from_structured": lambda kw: from_structured(_EVENT, **kw),
    "to_structured": lambda kw: to_structured(_JOB, **kw),
}
KINDS = {"settings": Settings, "clock": LamportClock}
INSTANCES = {"settings": Settings(), "clock": LamportClock()}


def _taking(owner: Any) -> set[str]:
    try:
        parameters = inspect.signature(owner).parameters
    except (TypeError, ValueError):
        return set()
    return set(parameters) & set(KINDS)


def _public_calls() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            members = [(name, value)]
            if inspect.isclass(value):
                members += [
                    (f"{name}.{attribute}", member)
                    for attribute, member in vars(value).items()
                    if not attribute.startswith("_")
                ]
            for qualified, member in members:
                member = member.__func__ if isinstance(member, classmethod) else member
                if callable(member) and (taken := _taking(member)):
                    found[qualified] = taken
    return found


PUBLIC = _public_calls()


def test_every_public_call_taking_them_is_tried() -> None:
    assert set(PUBLIC) == set(CALLS)


@pytest.mark.parametrize(
    ("call", "name"), [(call, name) for call in sorted(PUBLIC) for name in sorted(PUBLIC[call])]
)
@pytest.mark.parametrize("bad", [5, "strict", {"max_depth": 3}], ids=["int", "str", "dict"])
def test_another_type_is_a_type_error_naming_the_argument(
    call: str, name: str, bad: object
) -> None:
    expected = KINDS[name].__name__
    with pytest.raises(TypeError, match=rf"^{name} must be a {expected} or None, not \w+$"):
        CALLS[call]({name: bad})


@pytest.mark.parametrize(
    ("call", "name"), [(call, name) for call in sorted(PUBLIC) for name in sorted(PUBLIC[call])]
)
def test_an_instance_or_none_is_taken(call: str, name: str) -> None:
    for given in (None, INSTANCES[name]):
        CALLS[call]({name: given})
