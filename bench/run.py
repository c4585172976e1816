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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import jsonschema
import jsonschema_rs
import msgspec
import orjson
from babelqueue.codec import EnvelopeCodec
from pydantic import BaseModel, ConfigDict
from pydantic_core import CoreSchema, SchemaValidator, core_schema, from_json

import envelopekit as ek
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

    @property
    def micros(self) -> float:
        return self.seconds * 1e6


def measure(name: str, call: Callable[[], object], *, rounds: int, budget: float) -> Result:
    """Median seconds per call over ``rounds`` rounds of a calibrated number of calls."""
    call()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= budget / rounds / 4 or number >= 1 << 22:
            break
        number *= 2
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - start) / number)
    return Result(name, statistics.median(samples))


# --- inputs ---------------------------------------------------------------------------------


def compact(path: Path) -> bytes:
    return orjson.dumps(orjson.loads(path.read_bytes()))


BQ_RAW = compact(DATA / "babelqueue" / "fixtures" / "unicode-and-numbers.json")
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
        _SHELLS[cls] = type(cls.__name__, (), {"__module__": __name__})
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
    choices = _field_choices(schema, "payload")
    assert choices is not None
    variant = _rewritten(schema, {"payload": choices[message_type]})
    assert variant is not None
    top = core_schema.definitions_schema(variant, definitions) if definitions else variant
    return SchemaValidator(without_python(top))


# --- suites ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    label: str
    ours: Result
    peer: Result
    target: str
    passed: bool | None

    @property
    def ratio(self) -> float:
        return self.ours.seconds / self.peer.seconds


def compare(
    label: str,
    ours: Result,
    peer: Result,
    *,
    at_most: float | None = None,
    at_least: float | None = None,
) -> Comparison:
    """A ratio with its target; with neither bound it is a reference row (a floor)."""
    ratio = ours.seconds / peer.seconds
    if at_most is not None:
        return Comparison(label, ours, peer, f"≤ {at_most}x", ratio <= at_most)
    if at_least is not None:
        speedup = peer.seconds / ours.seconds
        return Comparison(label, ours, peer, f"≥ {at_least}x faster", speedup >= at_least)
    return Comparison(label, ours, peer, "—", None)


def micro(rounds: int, budget: float) -> list[Comparison]:
    def m(name: str, call: Callable[[], object]) -> Result:
        return measure(name, call, rounds=rounds, budget=budget)

    text = BQ_RAW.decode("utf-8")
    decoded = EnvelopeCodec.decode(text)
    env = BabelEnvelope.model_validate_json(BQ_RAW)
    official_decode = m(
        "babelqueue decode+accepts", lambda: EnvelopeCodec.accepts(EnvelopeCodec.decode(text))
    )
    ours_validate = m(
        "BabelEnvelope.model_validate_json", lambda: BabelEnvelope.model_validate_json(BQ_RAW)
    )
    ours_check = m("ek.check(spec=babelqueue)", lambda: ek.check(BQ_RAW, spec="babelqueue"))
    official_encode = m("babelqueue encode", lambda: EnvelopeCodec.encode(decoded))
    ours_encode = m("BabelEnvelope.to_json", env.to_json)
    floor = m("orjson.loads", lambda: orjson.loads(BQ_RAW))
    msgspec_floor = m("msgspec Struct decode", lambda: MSGSPEC_DECODER.decode(BQ_RAW))
    pydantic_floor = m(
        "pydantic, same shape, no validators", lambda: PydanticFloor.model_validate_json(BQ_RAW)
    )
    parse_floor = m("pydantic_core.from_json", lambda: from_json(BQ_RAW))

    out = [
        compare(
            "BabelQueue validate vs official decode+accepts",
            ours_validate,
            official_decode,
            at_most=0.5,
        ),
        compare(
            "BabelQueue ek.check vs official decode+accepts",
            ours_check,
            official_decode,
            at_most=0.5,
        ),
        compare("BabelQueue encode vs official encode", ours_encode, official_encode, at_most=0.3),
        compare("BabelQueue validate vs orjson.loads floor", ours_validate, floor, at_most=4),
        compare("BabelQueue validate vs msgspec Struct (reference)", ours_validate, msgspec_floor),
        compare(
            "(floor) pydantic, same shape, no validators, vs official decode+accepts",
            pydantic_floor,
            official_decode,
        ),
        compare("(floor) pydantic, no validators, vs orjson.loads", pydantic_floor, floor),
        compare(
            "(floor) pydantic_core.from_json vs official decode+accepts",
            parse_floor,
            official_decode,
        ),
    ]

    official_som = official_som_validator()
    rs_som = rs_som_validator()
    assert official_som(SOM_BEAT6) and rs_som(SOM_BEAT6)
    ours_som = m(
        "SomEnvelope.model_validate_json beat-6", lambda: SomEnvelope.model_validate_json(SOM_BEAT6)
    )
    out.append(
        compare(
            "SOM beat-6 vs jsonschema (envelope + payload, formats)",
            ours_som,
            m("jsonschema beat-6", lambda: official_som(SOM_BEAT6)),
            at_least=50,
        )
    )
    rs_beat6 = m("jsonschema-rs beat-6", lambda: rs_som(SOM_BEAT6))
    out.append(
        compare("SOM beat-6 vs jsonschema-rs (parse + validate)", ours_som, rs_beat6, at_most=2)
    )
    floor_som = som_floor("story.context")
    assert type(floor_som.validate_json(SOM_BEAT6)).__name__ == "SomEnvelope"
    som_floor_result = m("SOM floor beat-6", lambda: floor_som.validate_json(SOM_BEAT6))
    out.append(
        compare(
            "(floor) SOM beat-6, same typed models, no Python validator, vs jsonschema-rs",
            som_floor_result,
            rs_beat6,
        )
    )
    out.append(compare("SOM beat-6 vs that floor", ours_som, som_floor_result))
    for message_type, example in SOM_FAMILY_EXAMPLES.items():
        raw = som_envelope(message_type, example)
        assert official_som(raw), message_type
        ours = m(f"SomEnvelope {message_type}", partial(SomEnvelope.model_validate_json, raw))
        out.append(
            compare(
                f"SOM {message_type} vs jsonschema",
                ours,
                m(f"jsonschema {message_type}", partial(official_som, raw)),
                at_least=50,
            )
        )
        rs = m(f"jsonschema-rs {message_type}", partial(rs_som, raw))
        out.append(compare(f"SOM {message_type} vs jsonschema-rs", ours, rs, at_most=2))
        floor_family = som_floor(message_type).validate_json
        assert type(floor_family(raw)).__name__ == "SomEnvelope"
        out.append(
            compare(
                f"(floor) SOM {message_type}, no Python validator, vs jsonschema-rs",
                m(f"SOM floor {message_type}", partial(floor_family, raw)),
                rs,
            )
        )

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
    out.append(
        compare(
            "Matrix request parse vs jsonschema",
            m("MxRequest.model_validate_json", lambda: MxRequest.model_validate_json(request_raw)),
            m("jsonschema request", lambda: request_schema.is_valid(json.loads(request_raw))),
            at_least=1,
        )
    )
    out.append(
        compare(
            "Matrix reply parse vs jsonschema",
            m("MxResponse.model_validate_json", lambda: MxResponse.model_validate_json(reply_raw)),
            m("jsonschema response", lambda: response_schema.is_valid(json.loads(reply_raw))),
            at_least=1,
        )
    )
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


def cli_run(path: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of `envelopekit validate --format json` on a file."""
    script = (
        "import resource, subprocess, sys, time;"
        "t = time.perf_counter();"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    command = [
        sys.executable, "-c", script,
        sys.executable, "-m", "envelopekit", "validate", "--spec", "babelqueue",
        "--format", "json", str(path),
    ]  # fmt: skip
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    seconds, rss = done.stdout.split()
    return float(seconds), int(rss)


def median_run(path: Path, runs: int = 3) -> tuple[float, int]:
    """The median wall seconds of ``runs`` CLI runs on ``path``, and the largest peak RSS."""
    results = [cli_run(path) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def scale(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.ndjson"
        large = Path(folder) / "large.ndjson"
        mixed_ndjson(small, count)
        mixed_ndjson(large, count * 4)
        # A whole process run varies more than an in-process loop: the median of three runs.
        small_seconds, small_rss = median_run(small)
        large_seconds, large_rss = median_run(large)
    return {
        "messages": count,
        "seconds": small_seconds,
        "per_second": count / small_seconds,
        "rss_kib": small_rss,
        "messages_4x": count * 4,
        "per_second_4x": count * 4 / large_seconds,
        "rss_kib_4x": large_rss,
    }


def versions() -> dict[str, str]:
    names = ["envelopekit", "pydantic", "pydantic-core", "orjson", "jsonschema", "jsonschema-rs",
             "msgspec", "babelqueue"]  # fmt: skip
    return {name: metadata.version(name) for name in names}


def report(comparisons: list[Comparison], imports: dict[str, float], cli: dict[str, float]) -> str:
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()),
        "",
        "| Comparison | envelopekit | peer | ratio (ours/peer) | target | met |",
        "|---|---:|---:|---:|---|---|",
    ]
    for c in comparisons:
        shown = f"{1 / c.ratio:.1f}x faster" if "faster" in c.target else f"{c.ratio:.3f}"
        lines.append(
            f"| {c.label} | {c.ours.micros:.2f} µs | {c.peer.micros:.2f} µs | {shown} "
            f"| {c.target} | {'—' if c.passed is None else 'yes' if c.passed else '**no**'} |"
        )
    ratio = imports["envelopekit"] / imports["pydantic"]
    lines.append(
        f"| import envelopekit vs import pydantic | {imports['envelopekit'] * 1e3:.1f} ms "
        f"| {imports['pydantic'] * 1e3:.1f} ms | {ratio:.2f} | < 2x | "
        f"{'yes' if ratio < 2 else '**no**'} |"
    )
    rate = cli["per_second"]
    flat = cli["rss_kib_4x"] <= cli["rss_kib"] * 1.2
    lines += [
        "",
        f"CLI (`envelopekit validate --spec babelqueue --format json`, 1 in 10 invalid): "
        f"{cli['messages']:,.0f} messages in {cli['seconds']:.2f} s = {rate:,.0f} msg/s "
        f"(target ≥ 100,000: {'met' if rate >= 100_000 else '**not met**'}); "
        f"peak RSS {cli['rss_kib'] / 1024:.1f} MiB; at {cli['messages_4x']:,.0f} messages "
        f"{cli['per_second_4x']:,.0f} msg/s and peak RSS {cli['rss_kib_4x'] / 1024:.1f} MiB "
        f"(flat: {'yes' if flat else '**no**'}).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds, smaller CLI run")
    parser.add_argument("--out", type=Path, help="also write the markdown report here")
    args = parser.parse_args()
    rounds, budget = (5, 0.2) if args.quick else (9, 1.0)
    comparisons = micro(rounds, budget)
    runs = 5 if args.quick else 15
    imports = {name: import_time(name, runs) for name in ("pydantic", "envelopekit")}
    cli = scale(20_000 if args.quick else 100_000)
    text = report(comparisons, imports, cli)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
