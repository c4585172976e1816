"""envelopekit benchmarks: ratios against the peers a user would otherwise pick, in one run.

Run with ``make bench`` (or ``python bench/run.py [--quick] [--out FILE]``). Every number is the
median of several rounds on the same bytes in the same process; ratios, not absolute times,
are what the targets speak of. Nothing here runs under ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pty
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, Final, Protocol, cast

import jsonschema
import jsonschema_rs
import msgspec
import orjson
from _rounds import interleaved
from babelqueue.codec import EnvelopeCodec
from pydantic import BaseModel, ConfigDict
from pydantic_core import CoreSchema, SchemaValidator, core_schema, from_json

import envelopekit as ek
from envelopekit._cli import PROGRESS_DELAY
from envelopekit._failfast import fresh_validator
from envelopekit._text import json_branch
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxRequest, MxResponse
from envelopekit.som import SomEnvelope
from envelopekit.som._fast import _field_choices, _rewritten

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@dataclass(frozen=True)
class Result:
    name: str
    seconds: float
    """The median seconds per call over the rounds."""
    fastest: float
    """The least seconds per call of any round: what load from other processes inflates least."""

    @property
    def micros(self) -> float:
        return self.seconds * 1e6


def measure_group(
    calls: dict[str, Callable[[], object]], *, rounds: int, budget: float
) -> dict[str, Result]:
    """``measure`` for several calls at once, their rounds interleaved.

    Each round runs every call's calibrated loop once, in an order rotated from round to
    round, so a burst of load from another process falls on all of them alike; on a shared
    machine the ratios between them are then far steadier than from runs one after another.
    Time is the process's CPU time (every call measured is single-threaded): the time it
    spends descheduled while other processes run is not counted.
    """
    clock = time.process_time
    numbers: dict[str, int] = {}
    share = budget / rounds / len(calls)
    for name, call in calls.items():
        call()
        number = 1
        while True:
            start = clock()
            for _ in range(number):
                call()
            if clock() - start >= share or number >= 1 << 22:
                break
            number *= 2
        numbers[name] = number
    names = list(calls)
    samples = interleaved(
        [calls[name] for name in names], [numbers[name] for name in names], rounds, clock
    )
    return {
        name: Result(name, statistics.median(found), min(found))
        for name, found in zip(names, samples, strict=True)
    }


# --- inputs ---------------------------------------------------------------------------------


def compact(path: Path) -> bytes:
    return orjson.dumps(orjson.loads(path.read_bytes()))


BQ_RAW = compact(DATA / "babelqueue" / "fixtures" / "unicode-and-numbers.json")
LINE_ITEMS = [{"sku": f"sku-{i:04d}", "qty": i % 7 + 1, "tags": ["a", "b"]} for i in range(40)]
SOM_BEAT6 = compact(DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json")
SOM_SCHEMAS = {
    path.name.removesuffix(".schema.json"): json.loads(path.read_text("utf-8"))
    for path in (DATA / "som" / "schema").glob("*.schema.json")
}
SOM_FAMILY_BY_TYPE = {
    "story.context": "story-context",
    "telling.started": "telling-event",
    "link.committed": "link-event",
    "delivery.media_available": "delivery-media-available",
    "system.audit": "system-audit",
    "skill.warning.raised": "skill-warning",
}
SOM_WRAPPER = {
    "som_version": "1.0.0",
    "message_id": "01920000-0000-7000-8000-000000000001",
    "correlation_id": "01920000-0000-7000-8000-000000000002",
    "timestamp": "2026-09-11T16:41:00Z",
    "originating_system": {"system_id": "conformance-kit", "system_type": "custom"},
}
SOM_FAMILY_EXAMPLES = {
    "telling.started": "telling/started-with-transforms.json",
    "link.committed": "link/committed.json",
    "delivery.media_available": "delivery/media-available.json",
    "system.audit": "system-audit/suppressed.json",
    "skill.warning.raised": "skill-warning/raised.json",
}


def som_envelope(message_type: str, example: str) -> bytes:
    payload = orjson.loads((DATA / "som" / "examples" / example).read_bytes())
    document = {
        **SOM_WRAPPER,
        "message_type": message_type,
        "topic": "som." + message_type,
        "payload": payload,
    }
    return orjson.dumps(document)


MATRIX_SCHEMAS = {
    path.name.removesuffix(".schema.json"): json.loads(path.read_text("utf-8"))
    for path in (DATA / "matrix" / "schema").glob("*.json")
}


# --- the peers ------------------------------------------------------------------------------


class _Validator(Protocol):
    def is_valid(self, instance: Any) -> bool: ...


def som_validator(
    build: Callable[[dict[str, Any]], _Validator], parse: Callable[[bytes], Any]
) -> Callable[[bytes], bool]:
    """The SOM tools' procedure: envelope schema and wire version, then the family's schema."""
    envelope = build(SOM_SCHEMAS["envelope"])
    families = {name: build(schema) for name, schema in SOM_SCHEMAS.items()}

    def validate(raw: bytes) -> bool:
        document = parse(raw)
        if not envelope.is_valid(document) or document["som_version"] != "1.0.0":
            return False
        family = SOM_FAMILY_BY_TYPE.get(document["message_type"])
        return family is None or families[family].is_valid(document["payload"])

    return validate


def official_som_validator() -> Callable[[bytes], bool]:
    """The official tooling's way: jsonschema Draft 2020-12 with formats asserted."""
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return som_validator(
        lambda schema: jsonschema.Draft202012Validator(schema, format_checker=checker),
        json.loads,
    )


def rs_som_validator() -> Callable[[bytes], bool]:
    """The same with jsonschema-rs (orjson parse + validate, formats asserted)."""
    return som_validator(
        lambda schema: jsonschema_rs.validator_for(schema, validate_formats=True), orjson.loads
    )


class MsgspecMeta(msgspec.Struct):
    id: str
    queue: str
    lang: str
    schema_version: int
    created_at: int


class MsgspecEnvelope(msgspec.Struct):
    job: str
    trace_id: str
    data: dict[str, Any]
    meta: MsgspecMeta
    attempts: int


MSGSPEC_DECODER = msgspec.json.Decoder(MsgspecEnvelope)


class _FloorMeta(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    id: str
    queue: str
    lang: str
    schema_version: int
    created_at: int


class PydanticFloor(BaseModel):
    """The BabelQueue envelope's shape with no validator and no format: pydantic's own floor."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    job: str = ""
    trace_id: str
    data: dict[str, Any]
    meta: _FloorMeta
    attempts: int


def without_python(node: Any) -> Any:
    """A core schema with every Python validator taken out (plain ones become ``any``)."""
    if isinstance(node, list):
        return [without_python(item) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("function-after", "function-before", "function-wrap"):
        inner = without_python(node["schema"])
        if "ref" in node:  # other schemas refer to the wrapper by this name
            assert "ref" not in inner, node["ref"]
            inner = {**inner, "ref": node["ref"]}
        return inner
    if kind == "function-plain":
        return core_schema.any_schema(ref=node.get("ref"))
    copy = {key: without_python(value) for key, value in node.items() if key != "serialization"}
    if kind == "model":
        # pydantic-core reuses a finished model class's own validator (Python hooks and all)
        # for a nested model schema; a shell class of the same name builds from this schema.
        copy["cls"] = _shell(node["cls"])
    return copy


_SHELLS: dict[type, type] = {}


def _shell(cls: type) -> type:
    if cls not in _SHELLS:
        # BaseModel's own slots, so that an instance is laid out as the model's: pydantic-core
        # sets `__pydantic_fields_set__`, `__pydantic_extra__` and `__pydantic_private__` on
        # every instance, and a shell without the slots takes them into its `__dict__` (three
        # more inserts per object: the floor was 2-6% above the model tree it stands for).
        namespace = {"__module__": __name__, "__slots__": BaseModel.__slots__}
        _SHELLS[cls] = type(cls.__name__, (), namespace)
    return _SHELLS[cls]


def som_floor(message_type: str) -> SchemaValidator:
    """``SomEnvelope``'s own model tree, payload typed as the family, no Python validator.

    What pydantic-core alone costs to build the same typed models: the floor under any
    design that returns them.
    """
    schema: dict[str, Any] = dict(SomEnvelope.__pydantic_core_schema__)
    definitions: list[CoreSchema] = []
    if schema.get("type") == "definitions":
        definitions, schema = list(schema["definitions"]), schema["schema"]
    # The branch JSON validation runs (a message model's schema is json-or-python).
    schema = dict(json_branch(cast("CoreSchema", schema)))
    choices = _field_choices(schema, "payload")
    assert choices is not None
    variant = _rewritten(schema, {"payload": choices[message_type]})
    assert variant is not None
    top = core_schema.definitions_schema(variant, definitions) if definitions else variant
    floor = without_python(top)
    # Built anew, not from each complete model's own validator (which has its Python hooks).
    return fresh_validator(floor, _models_in(floor))


def through_pydantic_door(validator: SchemaValidator) -> Callable[[bytes], Any]:
    """``validator`` called as any pydantic model's JSON door calls its own.

    pydantic's ``BaseModel.model_validate_json`` itself (its frame, its argument check) on a
    class whose validator is ``validator``: the same Python call every model's door costs,
    ``SomEnvelope``'s own and the BabelQueue floor's (``PydanticFloor.model_validate_json``).
    """
    holder = type("SomEnvelope", (), {"__pydantic_validator__": validator})
    door = cast("Callable[[type, bytes], Any]", BaseModel.__dict__["model_validate_json"].__func__)
    return partial(door, holder)


def python_calls(call: Callable[[], object]) -> int:
    """How many Python functions ``call`` runs (a profiler hook counts them)."""
    calls = 0

    def hook(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls


def _models_in(node: Any) -> set[type]:
    """The classes of the model schemas in the core schema ``node``."""
    found: set[type] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "model" and isinstance(item.get("cls"), type):
                found.add(item["cls"])
            stack.extend(value for key, value in item.items() if key != "metadata")
        elif isinstance(item, list):
            stack.extend(item)
    return found


# --- suites ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    label: str
    ours: Result
    peer: Result
    target: str
    passed: bool | None
    speedup: bool = False  # shown as "Nx faster", as the rows with an at_least target

    @property
    def ratio(self) -> float:
        return self.ours.seconds / self.peer.seconds

    @property
    def fastest_ratio(self) -> float:
        return self.ours.fastest / self.peer.fastest


def compare(
    label: str,
    ours: Result,
    peer: Result,
    *,
    at_most: float | None = None,
    at_least: float | None = None,
    speedup: bool = False,
) -> Comparison:
    """A ratio with its target; with neither bound it is a reference row (a floor).

    A reference row with ``speedup`` is shown as a speed-up (peer / ours), as ``at_least`` is.
    """
    ratio = ours.seconds / peer.seconds
    if at_most is not None:
        return Comparison(label, ours, peer, f"≤ {at_most}x", ratio <= at_most)
    if at_least is not None:
        faster = peer.seconds / ours.seconds
        return Comparison(label, ours, peer, f"≥ {at_least}x faster", faster >= at_least)
    return Comparison(label, ours, peer, "—", None, speedup)


def fastapi_door(model: type[BaseModel]) -> Callable[[object], Any]:
    """A FastAPI route's body field of ``model``: what FastAPI runs on a request's parsed body.

    ``ModelField.validate``, a ``TypeAdapter`` of ``Annotated[model, Body()]`` called with
    ``from_attributes=True`` (``fastapi/_compat``), in-process: no HTTP, no JSON parse.
    """
    from fastapi import FastAPI

    async def echo(body: object) -> None:
        del body

    echo.__annotations__ = {"body": model, "return": None}
    app = FastAPI()
    app.post("/echo")(echo)
    field = app.routes[-1].dependant.body_params[0]  # type: ignore[attr-defined]
    validate = field.validate

    def door(document: object) -> Any:
        return validate(document, {}, loc=("body",))[0]

    return door


def faststream_door(model: object) -> Callable[[object], Any]:
    """A FastStream subscriber's argument of ``model``: fast_depends's arguments model.

    What a subscriber runs on a decoded message (``PydanticSerializer``, as FastStream builds
    it): the model of the handler's arguments, ``model`` a field of it.
    """
    import inspect

    from fast_depends.library.serializer import OptionItem
    from fast_depends.pydantic import PydanticSerializer

    arguments = PydanticSerializer()(
        name="handler",
        options=[OptionItem(field_name="body", field_type=model)],
        response_type=inspect.Parameter.empty,
    )

    def door(document: object) -> Any:
        return arguments({"body": document})["body"]

    return door


def door_rows(spec: str, group: dict[str, Result]) -> list[Comparison]:
    """The FastAPI and FastStream rows of ``group``.

    Its "validate" (the JSON door), "FastAPI", "FastStream" and "FastStream dict" (a `dict`
    argument: fast_depends's own cost, about 0.75x BabelQueue's whole JSON door, which no
    model's validator can take off). The FastStream target is of the door less that cost.
    """
    door, own = group["FastStream"], group["FastStream dict"]
    net = Result(
        f"{door.name}, less its own cost",
        door.seconds - own.seconds,
        max(door.fastest - own.fastest, 0.0),
    )
    return [
        compare(
            f"{spec} dict via FastAPI (the route's body field) vs model_validate_json",
            group["FastAPI"],
            group["validate"],
            at_most=1.5,
        ),
        compare(
            f"{spec} dict via FastStream, less fast_depends's own cost (a `dict` argument), "
            "vs model_validate_json",
            net,
            group["validate"],
            at_most=1.5,
        ),
        compare(
            f"(reference) {spec} dict via FastStream (fast_depends's arguments model) vs "
            "model_validate_json",
            door,
            group["validate"],
        ),
    ]


def som_from_dict(raw: bytes) -> SomEnvelope:
    """The FastAPI / FastStream door: the standard library's parse, then the model."""
    return SomEnvelope.model_validate(json.loads(raw))


def micro(rounds: int, budget: float) -> list[Comparison]:
    def group(calls: dict[str, Callable[[], object]]) -> dict[str, Result]:
        return measure_group(calls, rounds=rounds, budget=budget)

    text = BQ_RAW.decode("utf-8")
    decoded = EnvelopeCodec.decode(text)
    env = BabelEnvelope.model_validate_json(BQ_RAW)
    # Each door looked up once, as the SOM rows always called theirs: on a pydantic class an
    # attribute's lookup goes through its metaclass's `__getattr__` hook (about 1,000
    # instructions, 2-3% of the official decode's time here), which a plain class's does not.
    # The lookup in the loop stays in the reference rows.
    validate_json = BabelEnvelope.model_validate_json
    validate = BabelEnvelope.model_validate
    floor_json = PydanticFloor.model_validate_json
    floor_dict = PydanticFloor.model_validate
    bq = group(
        {
            "official": lambda: EnvelopeCodec.accepts(EnvelopeCodec.decode(text)),
            # From the bytes a broker hands over, made the str its signature takes.
            "official bytes": lambda: EnvelopeCodec.accepts(EnvelopeCodec.decode(BQ_RAW.decode())),
            "validate": lambda: validate_json(BQ_RAW),
            "validate, looked up": lambda: BabelEnvelope.model_validate_json(BQ_RAW),
            "dict": lambda: validate(json.loads(BQ_RAW)),
            "check": lambda: ek.check(BQ_RAW, spec="babelqueue"),
            "check auto": lambda: ek.check(BQ_RAW),
            "official encode": lambda: EnvelopeCodec.encode(decoded),
            "encode": env.to_json,
            "orjson": lambda: orjson.loads(BQ_RAW),
            "msgspec": lambda: MSGSPEC_DECODER.decode(BQ_RAW),
            "floor": lambda: floor_json(BQ_RAW),
            "floor, looked up": lambda: PydanticFloor.model_validate_json(BQ_RAW),
            "from_json": lambda: from_json(BQ_RAW),
        }
    )
    parsed = json.loads(BQ_RAW)
    bq_fastapi, bq_faststream = fastapi_door(BabelEnvelope), faststream_door(BabelEnvelope)
    dict_faststream = faststream_door(dict)
    assert bq_fastapi(parsed) == bq_faststream(parsed) == env
    bq_dict = group(
        {
            "model_validate": lambda: validate(parsed),
            "validate": lambda: validate_json(BQ_RAW),
            "FastAPI": lambda: bq_fastapi(parsed),
            "FastStream": lambda: bq_faststream(parsed),
            "FastStream dict": lambda: dict_faststream(parsed),
        }
    )
    # The same envelope with nested data, as an order's line items are (the fixture's data is
    # flat): what the number rules cost where data holds containers.
    nested = {**parsed, "data": {**parsed["data"], "items": LINE_ITEMS}}
    nested_raw = orjson.dumps(nested)
    bq_nested = group(
        {
            "validate": lambda: validate_json(nested_raw),
            "floor": lambda: floor_json(nested_raw),
            "model_validate": lambda: validate(nested),
            "floor model_validate": lambda: floor_dict(nested),
        }
    )
    out = [
        compare(
            "BabelQueue validate vs its floor (same shape, no rule)",
            bq["validate"],
            bq["floor"],
            at_most=1.3,
        ),
        compare(
            "BabelQueue validate vs official decode+accepts",
            bq["validate"],
            bq["official"],
            at_most=0.75,
        ),
        compare(
            "(reference) BabelQueue validate vs official decode+accepts from the same bytes "
            "(`bytes.decode` first, to the str its signature takes; the row above is given the "
            "str, as measured since round one)",
            bq["validate"],
            bq["official bytes"],
        ),
        compare(
            "(reference) BabelQueue validate vs official decode+accepts, "
            "`BabelEnvelope.model_validate_json` looked up on every call",
            bq["validate, looked up"],
            bq["official"],
        ),
        compare(
            "(reference) BabelQueue floor vs official decode+accepts, "
            "`PydanticFloor.model_validate_json` looked up on every call",
            bq["floor, looked up"],
            bq["official"],
        ),
        compare("BabelQueue validate vs orjson.loads", bq["validate"], bq["orjson"], at_most=4),
        compare(
            "BabelQueue ek.check vs model_validate_json (valid message)",
            bq["check"],
            bq["validate"],
            at_most=1.1,
        ),
        compare(
            "(reference) BabelQueue ek.check vs model_validate_json looked up on every call",
            bq["check"],
            bq["validate, looked up"],
        ),
        compare(
            '(reference) BabelQueue ek.check(spec="auto") vs ek.check(spec="babelqueue")',
            bq["check auto"],
            bq["check"],
        ),
        compare(
            "BabelQueue dict: model_validate(json.loads output) vs model_validate_json",
            bq_dict["model_validate"],
            bq_dict["validate"],
            at_most=1.5,
        ),
        *door_rows("BabelQueue", bq_dict),
        compare(
            "(reference) BabelQueue json.loads + model_validate vs model_validate_json",
            bq["dict"],
            bq["validate"],
        ),
        compare(
            "BabelQueue encode vs official encode", bq["encode"], bq["official encode"], at_most=0.3
        ),
        compare("(reference) BabelQueue validate vs msgspec Struct", bq["validate"], bq["msgspec"]),
        compare(
            "(reference) BabelQueue validate vs its floor, data holding 40 line items",
            bq_nested["validate"],
            bq_nested["floor"],
        ),
        compare(
            "(reference) BabelQueue dict: model_validate vs its floor, data holding 40 line items",
            bq_nested["model_validate"],
            bq_nested["floor model_validate"],
        ),
        compare("(floor) BabelQueue floor vs official decode+accepts", bq["floor"], bq["official"]),
        compare("(floor) BabelQueue floor vs orjson.loads", bq["floor"], bq["orjson"]),
        compare(
            "(floor) pydantic_core.from_json vs official decode+accepts",
            bq["from_json"],
            bq["official"],
        ),
    ]

    # The generic classmethods, typed for partial() (mypy cannot solve the payload type there).
    som_validate_json = cast("Callable[[bytes], SomEnvelope]", SomEnvelope.model_validate_json)
    som_validate = cast("Callable[[object], SomEnvelope]", SomEnvelope.model_validate)
    official_som = official_som_validator()
    rs_som = rs_som_validator()
    families = {"story.context": SOM_BEAT6} | {
        message_type: som_envelope(message_type, example)
        for message_type, example in SOM_FAMILY_EXAMPLES.items()
    }
    for message_type, raw in families.items():
        assert official_som(raw) and rs_som(raw), message_type
        bare = som_floor(message_type)
        floor = through_pydantic_door(bare)
        assert type(floor(raw)).__name__ == "SomEnvelope"
        assert python_calls(partial(bare.validate_json, raw)) == 0, message_type
        name = "beat-6" if message_type == "story.context" else message_type
        # The FastAPI and FastStream doors, of the one message the dict rows began with.
        doors: dict[str, Callable[[], object]] = {}
        if name == "beat-6":
            som_fastapi, som_faststream = fastapi_door(SomEnvelope), faststream_door(SomEnvelope)
            parsed_som = json.loads(raw)
            assert som_fastapi(parsed_som) == som_faststream(parsed_som) == som_validate_json(raw)
            doors = {
                "FastAPI": partial(som_fastapi, parsed_som),
                "FastStream": partial(som_faststream, parsed_som),
                "FastStream dict": partial(dict_faststream, parsed_som),
            }
        som = group(
            {
                **doors,
                "validate": partial(som_validate_json, raw),
                "dict": partial(som_validate, json.loads(raw)),
                "parse + dict": partial(som_from_dict, raw),
                "floor": partial(floor, raw),
                "bare floor": partial(bare.validate_json, raw),
                "jsonschema": partial(official_som, raw),
                "jsonschema-rs": partial(rs_som, raw),
            }
        )
        out += [
            compare(f"SOM {name} vs its floor", som["validate"], som["floor"], at_most=1.1),
            compare(
                f"SOM {name} vs jsonschema (envelope + payload, formats)",
                som["validate"],
                som["jsonschema"],
                at_least=35,
            ),
            compare(
                f"SOM {name} dict: model_validate(json.loads output) vs model_validate_json",
                som["dict"],
                som["validate"],
                at_most=1.5,
            ),
            *(door_rows(f"SOM {name}", som) if doors else []),
            compare(
                f"(reference) SOM {name} json.loads + model_validate vs model_validate_json",
                som["parse + dict"],
                som["validate"],
            ),
            compare(
                f"(reference) SOM {name} vs jsonschema-rs (parse + validate)",
                som["validate"],
                som["jsonschema-rs"],
            ),
            compare(
                f"(floor) SOM {name} floor vs jsonschema-rs", som["floor"], som["jsonschema-rs"]
            ),
            compare(
                f"(floor) SOM {name} floor vs jsonschema",
                som["floor"],
                som["jsonschema"],
                speedup=True,
            ),
            compare(
                f"(reference) SOM {name} vs its floor's validator alone (no model door)",
                som["validate"],
                som["bare floor"],
            ),
        ]

    request = MxRequest.create(
        "fs.expand_dir", {"path": "/srv/data", "depth": 2}, expect_reply=True
    )
    request_raw = request.to_json()
    reply_raw = request.reply({"ok": True, "count": 1, "items": [{"name": "a"}]}).to_json()
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    matrix_validators = {
        name: jsonschema.validators.validator_for(schema)(schema, format_checker=checker)
        for name, schema in MATRIX_SCHEMAS.items()
    }
    request_schema = next(v for k, v in matrix_validators.items() if "request" in k)
    response_schema = next(v for k, v in matrix_validators.items() if "response" in k)
    request_dict, reply_dict = json.loads(request_raw), json.loads(reply_raw)
    # Each door looked up once, as the BabelQueue and SOM rows call theirs.
    request_json, request_python = MxRequest.model_validate_json, MxRequest.model_validate
    reply_json, reply_python = MxResponse.model_validate_json, MxResponse.model_validate
    request_fastapi, request_faststream = fastapi_door(MxRequest), faststream_door(MxRequest)
    reply_fastapi, reply_faststream = fastapi_door(MxResponse), faststream_door(MxResponse)
    assert (
        request_fastapi(request_dict)
        == request_faststream(request_dict)
        == request_json(request_raw)
    )
    matrix = group(
        {
            "request FastAPI": lambda: request_fastapi(request_dict),
            "request FastStream": lambda: request_faststream(request_dict),
            "reply FastAPI": lambda: reply_fastapi(reply_dict),
            "reply FastStream": lambda: reply_faststream(reply_dict),
            "request FastStream dict": lambda: dict_faststream(request_dict),
            "reply FastStream dict": lambda: dict_faststream(reply_dict),
            "request": lambda: request_json(request_raw),
            "request dict": lambda: request_python(request_dict),
            "request parse + dict": lambda: request_python(json.loads(request_raw)),
            "request jsonschema": lambda: request_schema.is_valid(json.loads(request_raw)),
            "reply": lambda: reply_json(reply_raw),
            "reply dict": lambda: reply_python(reply_dict),
            "reply parse + dict": lambda: reply_python(json.loads(reply_raw)),
            "reply jsonschema": lambda: response_schema.is_valid(json.loads(reply_raw)),
        }
    )
    for kind in ("request", "reply"):
        out += [
            compare(
                f"Matrix {kind} parse vs jsonschema",
                matrix[kind],
                matrix[f"{kind} jsonschema"],
                at_least=1,
            ),
            compare(
                f"Matrix {kind} dict: model_validate(json.loads output) vs model_validate_json",
                matrix[f"{kind} dict"],
                matrix[kind],
                at_most=1.5,
            ),
            *door_rows(
                f"Matrix {kind}",
                {
                    "validate": matrix[kind],
                    "FastAPI": matrix[f"{kind} FastAPI"],
                    "FastStream": matrix[f"{kind} FastStream"],
                    "FastStream dict": matrix[f"{kind} FastStream dict"],
                },
            ),
            compare(
                f"(reference) Matrix {kind} json.loads + model_validate vs model_validate_json",
                matrix[f"{kind} parse + dict"],
                matrix[kind],
            ),
        ]
    return out


def import_time(module: str, runs: int) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        )
        samples.append(float(done.stdout))
    return statistics.median(samples)


def mixed_ndjson(path: Path, count: int) -> None:
    """``count`` BabelQueue messages, one in ten invalid, written as NDJSON."""
    good = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042, "sku": "A-1"})
    good_raw = good.to_json()
    bad_raw = good_raw.replace(b'"schema_version":1', b'"schema_version":2')
    with path.open("wb") as stream:
        for i in range(count):
            stream.write((bad_raw if i % 10 == 9 else good_raw) + b"\n")


def cli_run(
    path: Path,
    *options: str,
    terminal: bool = False,
    jobs: int = 1,
    bar: bool = True,
    core: int | None = None,
) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds of `envelopekit validate --format json`.

    With ``terminal`` the command's stderr is a pseudo-terminal (drained as it is written),
    so it draws its progress bar as it does for a user, which ``bar`` says it must (or must
    not); otherwise stderr is not a terminal. With ``core`` the command runs on that CPU alone.
    """
    script = (
        "import os, resource, subprocess, sys, time;"
        "sys.argv[2] == '-' or os.sched_setaffinity(0, {int(sys.argv[2])});"
        "t = time.perf_counter();"
        "subprocess.run(sys.argv[3:], stdout=subprocess.DEVNULL,"
        " stderr=None if sys.argv[1] == 'tty' else subprocess.DEVNULL);"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(time.perf_counter() - t, u.ru_maxrss, u.ru_utime + u.ru_stime)"
    )
    command = [
        sys.executable, "-c", script, "tty" if terminal else "-",
        "-" if core is None else str(core),
        sys.executable, "-m", "envelopekit", "validate", "--spec", "babelqueue",
        "--format", "json", "--jobs", str(jobs), *options, str(path),
    ]  # fmt: skip
    if not terminal:
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        seconds, rss, cpu = done.stdout.split()
        return float(seconds), int(rss), float(cpu)
    leader, follower = pty.openpty()
    drawn: list[bytes] = []

    def drain() -> None:
        with suppress(OSError):
            while chunk := os.read(leader, 65536):
                drawn.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = subprocess.run(
            command, check=True, stdout=subprocess.PIPE, stderr=follower, text=True
        )
    finally:
        os.close(follower)
        reader.join(timeout=5)
        os.close(leader)
    shown = b"validating" in b"".join(drawn)
    assert shown == bar, f"the progress bar was {'not ' * bar}drawn on the terminal"
    seconds, rss, cpu = done.stdout.split()
    return float(seconds), int(rss), float(cpu)


def shared_core() -> int | None:
    """A CPU this process may run on, for pairs co-scheduled on it; ``None`` where a process
    cannot be bound to one (not Linux)."""
    if not hasattr(os, "sched_getaffinity") or not hasattr(os, "sched_setaffinity"):
        return None
    return max(os.sched_getaffinity(0))


def co_scheduled(
    first: Callable[..., tuple[float, int, float]],
    second: Callable[..., tuple[float, int, float]],
    leader: int,
    core: int,
) -> tuple[tuple[float, int, float], tuple[float, int, float]]:
    """``first`` and ``second`` run at the same time on ``core`` (``leader`` started first);
    a failure of either is raised here."""
    calls = (partial(first, core=core), partial(second, core=core))
    with ThreadPoolExecutor(max_workers=2) as pool:
        started = {side: pool.submit(calls[side]) for side in (leader, 1 - leader)}
    return started[0].result(), started[1].result()


def cli_pair(
    first: Callable[..., tuple[float, int, float]],
    second: Callable[..., tuple[float, int, float]],
    runs: int,
    *,
    together: bool = False,
) -> tuple[dict[str, float], dict[str, float]]:
    """Two CLI runs measured alternately (ABBA...): the median and least wall and CPU seconds
    of each, and its largest peak RSS (KiB).

    With ``together`` (where a process can be bound to a CPU: ``shared_core``; elsewhere the
    runs alternate as without it) each pair runs at once, both bound to one CPU: the
    two share every moment of the machine, so what slows one (a neighbour, the host's clock)
    slows the other alike, and their CPU times compare far more steadily than of runs one
    after the other (a run's CPU time moved by ±10% from run to run here, its co-scheduled
    pair's ratio by ±1%). Each run's wall clock is about twice its own: only for ratios.
    """
    results: tuple[list[tuple[float, int, float]], list[tuple[float, int, float]]] = ([], [])
    core = shared_core() if together else None
    for index in range(runs * (1 if core is not None else 2)):
        # Alternate which goes first, so neither always runs on a warmer (or busier) machine.
        which = index % 2 if (index // 2) % 2 == 0 else 1 - index % 2
        if core is None:
            results[which].append((first, second)[which]())
            continue
        for side, done in enumerate(co_scheduled(first, second, which, core)):
            results[side].append(done)

    def summary(found: list[tuple[float, int, float]]) -> dict[str, float]:
        wall = [seconds for seconds, _, _ in found]
        cpu = [used for _, _, used in found]
        return {
            "wall": statistics.median(wall),
            "wall_min": min(wall),
            "cpu": statistics.median(cpu),
            "cpu_min": min(cpu),
            "rss": max(rss for _, rss, _ in found),
        }

    return summary(results[0]), summary(results[1])


def job_counts() -> list[int]:
    """1 and 2 jobs, and on a bigger machine every power of two up to its cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [1, 2] + [n for n in (4, 8, 16, 32) if n <= (cores or 1)]


def jobs_rounds(small: Path, large: Path, count: int, runs: int) -> dict[int, dict[str, float]]:
    """``--jobs N`` for each count, each on both inputs, rounds alternating the order.

    The steady rate is the extra messages of the large input over its extra wall seconds: the
    start-up (interpreter, imports, workers) cancels out of it.
    """
    counts = job_counts()
    found: dict[int, dict[Path, list[tuple[float, int, float]]]] = {
        n: {small: [], large: []} for n in counts
    }
    for index in range(runs):
        for jobs in counts if index % 2 == 0 else counts[::-1]:
            for path in (small, large) if index % 2 == 0 else (large, small):
                found[jobs][path].append(cli_run(path, jobs=jobs))
    out: dict[int, dict[str, float]] = {}
    for jobs, runs_of in found.items():
        wall = {path: statistics.median(x[0] for x in done) for path, done in runs_of.items()}
        out[jobs] = {
            "wall": wall[large],
            "cpu": statistics.median(x[2] for x in runs_of[large]),
            "rss": max(x[1] for x in runs_of[large]),
            "rate": count * 4 / wall[large],
            "steady": count * 3 / (wall[large] - wall[small]),
        }
    return out


LONG_RUN: Final = 5.0  # seconds: a run that draws the bar for more than half of it


def scale(count: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.ndjson"
        large = Path(folder) / "large.ndjson"
        mixed_ndjson(small, count)
        mixed_ndjson(large, count * 4)
        # A whole process run varies more than an in-process loop: medians of several runs,
        # each pair of commands compared run against run, alternately.
        base, large_run = cli_pair(partial(cli_run, small), partial(cli_run, large), runs)
        # A run that ends within the bar's delay: on a terminal, no bar is drawn. Co-scheduled,
        # on half the small input, so that its doubled wall clock stays well within the delay.
        short = Path(folder) / "short.ndjson"
        mixed_ndjson(short, count // 2)
        plain, bar = cli_pair(
            partial(cli_run, short),
            partial(cli_run, short, terminal=True, bar=False),
            runs,
            together=True,
        )
        # The bar drawn from the start, on both inputs: the difference between the two sizes
        # is its cost per message, with rich's import (paid once) cancelled out. These pairs,
        # and the long run's, are co-scheduled on one core: a few percent is all they measure.
        at_once = ("--progress-delay", "0")
        plain_at_once, bar_at_once = cli_pair(
            partial(cli_run, small, *at_once),
            partial(cli_run, small, *at_once, terminal=True),
            runs,
            together=True,
        )
        plain_large, bar_large = cli_pair(
            partial(cli_run, large, *at_once),
            partial(cli_run, large, *at_once, terminal=True),
            runs,
            together=True,
        )
        # The default on a run long enough for the bar (about LONG_RUN seconds on this
        # machine alone, by the large input's pace): drawn from PROGRESS_DELAY on, rich
        # imported then. Co-scheduled, each run's wall clock is about twice that, so the bar is
        # drawn earlier in its work and redrawn twice as often for it: the row overstates a
        # run alone's cost, if anything.
        long = Path(folder) / "long.ndjson"
        long_count = round(count * 4 / large_run["wall"] * LONG_RUN)
        mixed_ndjson(long, long_count)
        plain_long, bar_long = cli_pair(
            partial(cli_run, long), partial(cli_run, long, terminal=True), runs, together=True
        )
        # Co-scheduled as the bar's pairs: run one after the other, a neighbour starting moved
        # this median by a fifth (1.66x; 1.31x co-scheduled minutes later, session 44).
        allow, refuse = cli_pair(
            partial(cli_run, small),
            partial(cli_run, small, "--duplicate-keys", "refuse"),
            runs,
            together=True,
        )
        jobs = jobs_rounds(small, large, count, runs)
    return {
        "jobs": jobs,
        "messages": count,
        "base": base,
        "large": large_run,
        "plain": plain,
        "bar": bar,
        "plain_at_once": plain_at_once,
        "bar_at_once": bar_at_once,
        "long_count": long_count,
        "plain_long": plain_long,
        "bar_long": bar_long,
        "plain_large": plain_large,
        "bar_large": bar_large,
        "allow": allow,
        "refuse": refuse,
    }


def machine_load() -> str:
    """The load average and CPU pressure (Linux), to print beside wall-clock numbers."""
    one, five, fifteen = os.getloadavg()
    text = f"load average {one:.2f} {five:.2f} {fifteen:.2f}"
    with suppress(OSError):
        pressure = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        text += f"; CPU pressure {pressure.split()[1]}"
    return text


def versions() -> dict[str, str]:
    names = ["envelopekit", "pydantic", "pydantic-core", "orjson", "jsonschema", "jsonschema-rs",
             "msgspec", "babelqueue"]  # fmt: skip
    return {name: metadata.version(name) for name in names}


def report(comparisons: list[Comparison], imports: dict[str, float], cli: dict[str, Any]) -> str:
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()),
        "",
        "| Comparison | envelopekit | peer | ratio (ours/peer) | ratio of minima | target | met |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for c in comparisons:
        if c.speedup or "faster" in c.target:
            shown = f"{1 / c.ratio:.1f}x faster"
            fastest = f"{1 / c.fastest_ratio:.1f}x faster"
        else:
            shown, fastest = f"{c.ratio:.3f}", f"{c.fastest_ratio:.3f}"
        lines.append(
            f"| {c.label} | {c.ours.micros:.2f} µs | {c.peer.micros:.2f} µs | {shown} | {fastest} "
            f"| {c.target} | {'—' if c.passed is None else 'yes' if c.passed else '**no**'} |"
        )
    ratio = imports["envelopekit"] / imports["pydantic"]
    lines.append(
        f"| import envelopekit vs import pydantic | {imports['envelopekit'] * 1e3:.1f} ms "
        f"| {imports['pydantic'] * 1e3:.1f} ms | {ratio:.2f} | — | < 1x | "
        f"{'yes' if ratio < 1 else '**no**'} |"
    )
    count = cli["messages"]
    base, large = cli["base"], cli["large"]
    flat = large["rss"] <= base["rss"] * 1.2

    def row(label: str, ours: dict[str, float], peer: dict[str, float], limit: float | None) -> str:
        ratio, fastest = ours["cpu"] / peer["cpu"], ours["cpu_min"] / peer["cpu_min"]
        met = "—" if limit is None else "yes" if ratio <= limit else "**no**"
        return (
            f"| {label} | {ours['cpu']:.2f} s CPU | {peer['cpu']:.2f} s CPU | {ratio:.3f} "
            f"| {fastest:.3f} | {'—' if limit is None else f'≤ {limit}x'} | {met} |"
        )

    lines += [
        row(
            f"CLI on a terminal vs stderr not a terminal, {count // 2:,} messages, co-scheduled: "
            f"the run ends within the bar's {PROGRESS_DELAY:g} s delay (no bar drawn, rich not "
            "imported)",
            cli["bar"],
            cli["plain"],
            1.03,
        ),
        row(
            f"CLI progress bar on a terminal vs stderr not a terminal, {cli['long_count']:,} "
            f"messages (a {cli['plain_long']['cpu']:.1f} s run, co-scheduled with its pair on "
            f"one core: the bar drawn from {PROGRESS_DELAY:g} s on, rich imported then)",
            cli["bar_long"],
            cli["plain_long"],
            1.03,
        ),
        row(
            f"(reference) CLI progress bar drawn from the start (`--progress-delay 0`), "
            f"{count * 4:,} messages",
            cli["bar_large"],
            cli["plain_large"],
            None,
        ),
        row(
            f"(reference) the same, {count:,} messages: rich's import in a run too short for "
            "the default delay to draw a bar",
            cli["bar_at_once"],
            cli["plain_at_once"],
            None,
        ),
        steady_row(cli, 1.03),
        row("CLI --duplicate-keys refuse vs the default", cli["refuse"], cli["allow"], 1.5),
        "",
        f"CLI (`envelopekit validate --spec babelqueue --format json`, 1 in 10 invalid, "
        f"start-up included): {count:,} messages in {base['wall']:.2f} s wall, "
        f"{base['cpu']:.2f} s CPU = {count / base['wall']:,.0f} msg/s by the wall clock, "
        f"{count / base['cpu']:,.0f} per CPU second; peak RSS {base['rss'] / 1024:.1f} MiB; "
        f"at {count * 4:,} messages {count * 4 / large['wall']:,.0f} msg/s "
        f"({count * 4 / large['cpu']:,.0f} per CPU second) and peak RSS "
        f"{large['rss'] / 1024:.1f} MiB (flat: {'yes' if flat else '**no**'}). On a terminal, "
        f"wall clock: {cli['bar']['wall']:.2f} s against {cli['plain']['wall']:.2f} s at "
        f"{count // 2:,} messages (no bar), "
        f"{cli['bar_large']['wall']:.2f} s against {cli['plain_large']['wall']:.2f} s at "
        f"{count * 4:,} messages (the bar drawn from the start; each pair co-scheduled on one "
        f"core, so about twice a run's own wall clock); "
        f"duplicate keys refused (co-scheduled too): {cli['refuse']['wall']:.2f} s against "
        f"{cli['allow']['wall']:.2f} s.",
        "",
        *jobs_report(cli["jobs"], count * 4),
    ]
    return "\n".join(lines) + "\n"


def steady_row(cli: dict[str, Any], limit: float) -> str:
    """The progress bar's CPU per message: the large input's extra CPU over the small one's,
    the bar drawn from the start, on a terminal against not, so the start-up (rich's import
    among it) cancels out."""
    extra: int = cli["messages"] * 3

    def per_message(run: str, key: str) -> float:
        larger: float = cli[f"{run}_large"][key] - cli[f"{run}_at_once"][key]
        return larger / extra * 1e6

    bar, plain = per_message("bar", "cpu"), per_message("plain", "cpu")
    fastest = per_message("bar", "cpu_min") / per_message("plain", "cpu_min")
    fixed = cli["bar_at_once"]["cpu"] - cli["plain_at_once"]["cpu"]
    return (
        f"| CLI progress bar, steady: CPU per message (start-up out; on the small input the "
        f"terminal run's start-up, rich's import in it, costs {fixed * 1e3:+.0f} ms) "
        f"| {bar:.2f} µs | {plain:.2f} µs | {bar / plain:.3f} | {fastest:.3f} | ≤ {limit}x "
        f"| {'yes' if bar / plain <= limit else '**no**'} |"
    )


def jobs_report(jobs: dict[int, dict[str, float]], count: int) -> list[str]:
    one = jobs[1]
    lines = [
        f"`validate --jobs N` on {count:,} BabelQueue messages (1 in 10 invalid), wall clock; "
        "steady: the extra messages of the large input over its extra seconds, start-up out:",
        "",
        "| jobs | wall | msg/s (start-up in) | steady msg/s | speed-up (steady) | CPU | peak RSS "
        "(one process) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, row in jobs.items():
        lines.append(
            f"| {n} | {row['wall']:.2f} s | {row['rate']:,.0f} | {row['steady']:,.0f} "
            f"| {row['rate'] / one['rate']:.2f}x ({row['steady'] / one['steady']:.2f}x) "
            f"| {row['cpu']:.2f} s | {row['rss'] / 1024:.1f} MiB |"
        )
    two = jobs[2]
    speed_up = two["steady"] / one["steady"]
    lines += [
        "",
        "| Target (issue 16) | this run | met |",
        "|---|---|---|",
        f"| `--jobs 2` ≥ 1.7x `--jobs 1` (steady; start-up in: {two['rate'] / one['rate']:.2f}x) "
        f"| {speed_up:.2f}x | {'yes' if speed_up >= 1.7 else '**no**'} |",
        f"| `--jobs 2` ≥ 180,000 msg/s (steady; start-up in: {two['rate']:,.0f}) "
        f"| {two['steady']:,.0f} | {'yes' if two['steady'] >= 180_000 else '**no**'} |",
    ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds, smaller CLI run")
    parser.add_argument("--out", type=Path, help="also write the markdown report here")
    parser.add_argument(
        "--jobs-only", action="store_true", help="only the `validate --jobs N` table"
    )
    args = parser.parse_args()
    count = 20_000 if args.quick else 100_000
    if args.jobs_only:
        with tempfile.TemporaryDirectory() as folder:
            small, large = Path(folder) / "small.ndjson", Path(folder) / "large.ndjson"
            mixed_ndjson(small, count)
            mixed_ndjson(large, count * 4)
            before, busy = machine_load(), os.getloadavg()[0] > 0.5
            rounds_of = jobs_rounds(small, large, count, 3 if args.quick else 5)
            after = machine_load()
            print("\n".join(jobs_report(rounds_of, count * 4)))
            print(f"\nBefore: {before}\nAfter:  {after}")
            if busy:
                print("(not a quiet machine: other processes shared the cores; read the ratio)")
        return 0
    rounds, budget = (5, 0.5) if args.quick else (9, 2.0)
    comparisons = micro(rounds, budget)
    runs = 5 if args.quick else 15
    imports = {name: import_time(name, runs) for name in ("pydantic", "envelopekit")}
    cli = scale(count, 3 if args.quick else 5)
    text = report(comparisons, imports, cli)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
