"""The base of every wire model: one way of making warnings, the same for the three specs."""

from __future__ import annotations

import importlib

import orjson

import envelopekit as ek
from envelopekit import rules
from envelopekit._check import REGISTRY
from envelopekit._model import WireModel, attach_warnings
from envelopekit._violations import violation
from envelopekit.matrix import MxRequest
from envelopekit.som import SomEnvelope
from tests.conftest import DATA


def _models() -> list[type[WireModel]]:
    for entry in REGISTRY.values():
        importlib.import_module(entry.package)
    found: list[type[WireModel]] = []
    todo = [WireModel]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def test_no_model_makes_warnings_its_own_way() -> None:
    # A model contributes what it notes about itself through `_notes`; `envelope_warnings`,
    # what `check` reads, is WireModel's for every model of every spec.
    models = _models()
    assert len(models) > 40
    for cls in models:
        assert cls.envelope_warnings is WireModel.envelope_warnings, cls.__qualname__
    overriding = {cls.__name__ for cls in models if "_notes" in vars(cls)}
    assert {"SomEnvelope", "MxRequest", "MxResponse", "MxErrorPayload"} <= overriding
    # `check` asks a model only when it has something noted or notes of its own: `__notes__`
    # must say so for every model, or a warning would go missing.
    for cls in models:
        assert cls.__notes__ == (cls._notes is not WireModel._notes), cls.__qualname__


def test_what_validation_noted_comes_first_then_what_the_model_notes() -> None:
    example = DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"
    raw = orjson.dumps({**orjson.loads(example.read_bytes()), "som_version": "1.2.0"})
    env = SomEnvelope.model_validate_json(raw, context={"som_version_mode": "tolerant"})
    noted = env.envelope_warnings()
    assert [w.rule for w in noted] == [rules.SOM_VERSION_UNSUPPORTED_MINOR]
    earlier = violation(rules.NUMBER_UNSAFE_INTEGER, "/payload/x", "noted while reading")
    attach_warnings(env, [earlier])
    assert env.envelope_warnings() == [earlier, *noted]


def test_check_reports_each_spec_s_warnings_through_the_one_method() -> None:
    forbidden = ek.check(
        b'{"job":"urn:a:b","trace_id":"0190a000-0000-4000-8000-000000000001","data":{},'
        b'"meta":{"id":"0190a000-0000-4000-8000-000000000001","queue":"q","lang":"python",'
        b'"schema_version":1,"created_at":1700000000000,"ts":1},"attempts":0}',
        spec="babelqueue",
    )
    assert forbidden.ok
    assert [w.rule for w in forbidden.warnings] == [rules.FORBIDDEN_KEY]
    assert forbidden.envelope is not None
    assert forbidden.warnings == forbidden.envelope.envelope_warnings()
    lint = ek.check(MxRequest(op="Bad Op", payload={}).to_json(), spec="matrix")
    assert [w.rule for w in lint.warnings] == [rules.OP_CONVENTION]
    assert lint.envelope is not None
    assert lint.warnings == lint.envelope.envelope_warnings()
