"""Differential test: the Matrix models against the three seed JSON Schemas (via `jsonschema`).

Thousands of seeded, generated and mutated documents are judged twice: by the models
(`model_validate_json`, and `ek.check` for classification by `op`) and by the vendored schemas
(`jsonschema`, the dialect each declares, Draft 2020-12 where none is declared, with format
checking). The two must agree on every document, except where one of the deliberate
differences below applies; each is a tested expectation (the model refuses exactly then, and
every difference must actually occur in the run), never a skip. The README lists them.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse, message_kind

DATA = Path(__file__).resolve().parent.parent / "data" / "matrix"
SEED = 20240611
ROUNDS = 2000  # per kind: 6000 documents, each judged by a model, by check() and by schema

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _validator(name: str) -> Any:
    schema = json.loads((DATA / "schema" / f"{name}.schema.json").read_text("utf-8"))
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


SCHEMAS = {name: _validator(name) for name in ("request", "response", "error-payload")}
MODELS: dict[str, type[MxRequest | MxResponse | MxErrorPayload]] = {
    "request": MxRequest,
    "response": MxResponse,
    "error-payload": MxErrorPayload,
}

# --- the deliberate differences (README: "Matrix: deliberate differences from the schemas") ---


def _walk(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def non_finite(doc: Any) -> bool:
    """NaN, Infinity or a number overflowing a double: not JSON numbers; refused."""
    return any(isinstance(v, float) and not math.isfinite(v) for v in _walk(doc))


def beyond_int64(doc: Any) -> bool:
    """An integer outside signed 64-bit anywhere: refused (cross-language rule)."""
    return any(type(v) is int and not INT64_MIN <= v <= INT64_MAX for v in _walk(doc))


def lone_surrogate(doc: Any) -> bool:
    r"""A string escaping a lone UTF-16 surrogate (`"\ud800"`): not Unicode text; refused."""
    return any(
        isinstance(v, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in v) for v in _walk(doc)
    )


def integral_float(kind: str, doc: Any) -> bool:
    """A float such as `3.0` where the schema says integer: JSON Schema accepts it, we do not."""
    if not isinstance(doc, dict):
        return False
    if kind in ("request", "response") and isinstance(doc.get("lamport"), float):
        return True
    if kind == "error-payload":
        return isinstance(doc.get("statusCode"), float)
    payload = doc.get("payload")
    return (
        kind == "response"
        and isinstance(payload, dict)
        and payload.get("ok") is False
        and isinstance(payload.get("statusCode"), float)
    )


def error_payload_in_response(doc: Any) -> bool:
    """A response whose payload has `ok: false` must also be a valid error payload (§14.9)."""
    if not isinstance(doc, dict):
        return False
    payload = doc.get("payload")
    return (
        isinstance(payload, dict)
        and payload.get("ok") is False
        and not SCHEMAS["error-payload"].is_valid(payload)
    )


DIFFERENCES: dict[str, Callable[[str, Any], bool]] = {
    "non-finite": lambda kind, doc: non_finite(doc),
    "int64": lambda kind, doc: beyond_int64(doc),
    "lone-surrogate": lambda kind, doc: lone_surrogate(doc),
    "integral-float": integral_float,
    "error-payload-in-response": lambda kind, doc: (
        kind == "response" and error_payload_in_response(doc)
    ),
}


def schema_valid(kind: str, doc: Any) -> bool:
    return bool(SCHEMAS[kind].is_valid(doc))


def differences(kind: str, doc: Any) -> list[str]:
    return [name for name, applies in DIFFERENCES.items() if applies(kind, doc)]


def model_valid(kind: str, text: bytes) -> bool:
    try:
        MODELS[kind].model_validate_json(text)
    except ValidationError:
        return False
    return True


# --- generation ---------------------------------------------------------------------------

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
CODES = [
    "OK",
    "NOT_FOUND",
    "INVALID_ARGUMENT",
    "UNAUTHENTICATED",
    "PERMISSION_DENIED",
    "UNAVAILABLE",
    "INTERNAL",
    "DEADLINE_EXCEEDED",
    "ALREADY_EXISTS",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
]
FIELDS = {
    "request": [
        "op",
        "payload",
        "iface",
        "correlationId",
        "replyTo",
        "lamport",
        "from",
        "traceId",
        "spanId",
        "parentSpanId",
    ],
    "response": [
        "op",
        "correlationId",
        "payload",
        "iface",
        "lamport",
        "from",
        "traceId",
        "spanId",
        "parentSpanId",
    ],
    "error-payload": ["ok", "error", "code", "statusCode", "details"],
}
ODD_KEYS = [
    "extra",
    "correlation_id",
    "reply_to",
    "from_",
    "trace_id",
    "status_code",
    "idempotencyKey",
    "cursor",
    "ok",
    "op",
    "replyTo",
    "",
    "a/b~c",
    "ünï",
]
STRINGS = [
    "",
    "x",
    "fs.list",
    "$join",
    "$reply",
    "reply",
    "ExpandDir",
    "$replies.c-1",
    TRACE,
    SPAN,
    "NOT_FOUND",
    "not_found",
    "Grüße ☃ 𝄞",
    "\ud800",
    "\udfff x",
    "null",
    "0",
    " ",
    "\n",
]


def rand_scalar(rng: random.Random) -> Any:
    pick = rng.randrange(14)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice([True, False])
    if pick == 2:
        return rng.choice([0, 1, -1, 99, 100, 404, 599, 600, 2**53, 2**63 - 1, 2**63, -(2**63) - 1])
    if pick == 3:
        return rng.randint(-1000, 10**6)
    if pick == 4:
        return rng.choice([0.0, -0.0, 3.0, 404.0, 1.5, -2.5, 1e-7, 1e300])
    if pick == 5:
        return rng.choice([math.nan, math.inf, -math.inf])
    return rng.choice(STRINGS)


def rand_json(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(10)
    if depth < 3 and pick == 0:
        return [rand_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    if depth < 3 and pick == 1:
        return {
            rng.choice(STRINGS + ODD_KEYS): rand_json(rng, depth + 1)
            for _ in range(rng.randrange(4))
        }
    return rand_scalar(rng)


def good_error_payload(rng: random.Random) -> dict[str, Any]:
    doc: dict[str, Any] = {"ok": False, "error": rng.choice(["x", "", "not found: /a"])}
    if rng.random() < 0.7:
        doc["code"] = rng.choice(CODES)
    if rng.random() < 0.6:
        doc["statusCode"] = rng.choice([100, 200, 400, 404, 500, 599])
    if rng.random() < 0.4:
        doc["details"] = rand_json(rng, 1) if rng.random() < 0.5 else {"path": "/a"}
    if rng.random() < 0.2:
        doc[rng.choice(ODD_KEYS)] = rand_json(rng, 2)
    return doc


def good_payload(rng: random.Random) -> Any:
    pick = rng.randrange(5)
    if pick == 0:
        return {"ok": True, "count": 2, "items": [{"name": "a"}, {"name": "b"}], "cursor": "eyJ9"}
    if pick == 1:
        return good_error_payload(rng)
    if pick == 2:
        return {"path": "/home/ada", "idempotencyKey": "w-1"}
    return rand_json(rng, 1)


def good(kind: str, rng: random.Random) -> dict[str, Any]:
    if kind == "error-payload":
        return good_error_payload(rng)
    cid = rng.choice(["c-1", "01890a5d-ac96-774b-bcce-b302099a8057", "𝄞"])
    doc: dict[str, Any] = {
        "op": "$reply" if kind == "response" else rng.choice(["fs.list", "$join", "ExpandDir"]),
        "payload": good_payload(rng),
    }
    if kind == "response" or rng.random() < 0.6:
        doc["correlationId"] = cid
    if kind == "request" and rng.random() < 0.5:
        doc["replyTo"] = "$replies." + cid
    optional = {
        "iface": "FsDaemon@1",
        "lamport": rng.choice([0, 1, 41, 2**53 - 1]),
        "from": "/apps/shell",
        "traceId": TRACE,
        "spanId": SPAN,
        "parentSpanId": SPAN,
    }
    for key, value in optional.items():
        if rng.random() < 0.5:
            doc[key] = value
    if kind == "response" and rng.random() < 0.2:
        doc[rng.choice(ODD_KEYS[:7])] = rand_json(rng, 2)
    rng.shuffle(keys := list(doc))
    return {key: doc[key] for key in keys}


def mutate(kind: str, doc: Any, rng: random.Random) -> Any:
    if not isinstance(doc, dict) or rng.random() < 0.03:
        return rand_json(rng, 2)
    doc = dict(doc)
    pick = rng.randrange(9)
    known = FIELDS[kind]
    if pick == 0 and doc:
        del doc[rng.choice(list(doc))]
    elif pick == 1:
        doc[rng.choice(ODD_KEYS)] = rand_json(rng, 2)
    elif pick in (2, 3, 4):
        doc[rng.choice(known)] = rand_scalar(rng)
    elif pick == 5:
        doc[rng.choice(known)] = rand_json(rng, 1)
    elif pick == 6 and isinstance(doc.get("payload"), dict):
        payload = dict(doc["payload"])
        if rng.random() < 0.5:
            payload["ok"] = False  # now an error payload, perhaps a broken one
        payload[rng.choice(FIELDS["error-payload"])] = rand_scalar(rng)
        doc["payload"] = payload
    elif pick == 7:
        # An integer written as a float: `41.0` where the schema says integer.
        key = "statusCode" if kind != "request" and rng.random() < 0.5 else "lamport"
        if kind == "response" and key == "statusCode":
            payload = doc.get("payload")
            if isinstance(payload, dict) and type(payload.get(key)) is int:
                doc["payload"] = {**payload, key: float(payload[key])}
        elif type(doc.get(key)) is int:
            doc[key] = float(doc[key])
    elif pick == 8:
        doc["op"] = rng.choice(["$reply", "fs.list", 1, None, "reply"])
    return doc


def encode(doc: Any, rng: random.Random) -> bytes:
    # ensure_ascii writes lone surrogates as \udXXX escapes, the only way they reach JSON text.
    ascii_only = rng.random() < 0.5 or lone_surrogate(doc)
    return json.dumps(doc, ensure_ascii=ascii_only).encode("utf-8")


def corpus(kind: str) -> Iterator[tuple[bytes, Any]]:
    rng = random.Random(f"{SEED}:{kind}")
    for _ in range(ROUNDS):
        doc: Any = good(kind, rng)
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            doc = mutate(kind, doc, rng)
        text = encode(doc, rng)
        yield text, json.loads(text)


# --- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(MODELS))
def test_models_agree_with_schemas(kind: str) -> None:
    seen: Counter[str] = Counter()
    for text, doc in corpus(kind):
        by_schema = schema_valid(kind, doc)
        found = differences(kind, doc)
        by_model = model_valid(kind, text)
        seen["valid" if by_model else "invalid"] += 1
        # Where no deliberate difference applies the verdicts are equal; where one does, the
        # model refuses (and the difference is counted, so it can be seen to happen).
        assert by_model == (by_schema and not found), (text, by_schema, found)
        if by_schema and found:
            seen.update(found)
    assert seen["valid"] > ROUNDS // 5 and seen["invalid"] > ROUNDS // 5, seen
    expected = {"non-finite", "int64", "lone-surrogate", "integral-float"}
    if kind == "response":
        expected.add("error-payload-in-response")
    missing = expected - set(seen)
    assert not missing, f"differences never exercised for {kind}: {missing} ({seen})"


@pytest.mark.parametrize("kind", list(MODELS))
def test_check_classifies_like_the_schemas(kind: str) -> None:
    agreed = 0
    for text, doc in corpus(kind):
        target = message_kind(doc)
        expected = schema_valid(target, doc) and not differences(target, doc)
        verdict = ek.check(text, spec="matrix")
        assert verdict.ok == expected, (text, target, verdict.violations)
        if verdict.ok:
            assert type(verdict.envelope) is MODELS[target]
        agreed += 1
    assert agreed == ROUNDS


def test_corpus_cases_agree_with_schemas() -> None:
    """The hand-written cases: schema and model agree, or the case names its difference."""
    cases = json.loads((DATA / "cases.json").read_text("utf-8"))["cases"]
    for case in cases:
        text = case["raw"] if "raw" in case else json.dumps(case["doc"], ensure_ascii=False)
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            assert not case["valid"]  # not JSON at all: both refuse
            continue
        kind = case["kind"]
        found = differences(kind, doc)
        if schema_valid(kind, doc) and not found:
            assert case["valid"], case["id"]
        elif schema_valid(kind, doc):
            assert not case["valid"] and case.get("difference") in found, (case["id"], found)
        else:
            assert not case["valid"] and "difference" not in case, case["id"]
