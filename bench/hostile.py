"""Hostile input: the cost of ``check`` on adversarial messages, each at the size limit.

Run with ``make bench`` (or ``python bench/hostile.py [--quick] [--out FILE]``). Each class is
built at the limit ``check`` applies to it (1 MiB; 240,000 bytes for SOM) and timed as a ratio
to ``orjson.loads`` of the same bytes, the cheapest thing any consumer does with a message. When
orjson refuses the bytes (NaN, an integer beyond 64 bits), the floor is ``orjson.loads`` of the
same document with each hostile token replaced by a valid one of the same length, so the floor
still reads every byte. Peak memory is what ``tracemalloc`` sees during one ``check`` (Python
allocations: the parsed document, errors, violations). Targets: at most 10x and 32 MiB.
The door columns are the same bytes through the message model's own ``model_validate_json``
(``BabelEnvelope``, ``SomEnvelope``, ``MxRequest`` or ``MxResponse``, as a service validating at
its boundary calls it): its time, the errors its ``ValidationError`` holds, its ratio to the
same floor, its peak.
``--cpu`` times by process CPU time, for a shared machine.
``--doors`` prints the door table instead: each class through every door a service calls
(the message model's ``model_validate_json``, its typed variant, ``model_validate`` of what
``json.loads`` made of the bytes), each against the same floor, and the doors over 10x.

A second table is within the bound (16 KiB, where ``SomEnvelope.model_validate_json`` tries
its fast path first): beat-6 with ``_actors`` filled with one shape of free-form JSON up to
16 KB, through the door and through the model's own validator (``__pydantic_validator__``,
its free-form hook in Python), and their ratio. No target: it shows what the fast path's
reading of free-form JSON costs against the model's on hostile shapes.

One row is not at the limit, and the targets do not apply to it: the lone 5,000-digit integer
in a 5 KB message, the reproducer of issue 12 (its verdict, not its cost). Against the 5 us
parse of a message that small, it shows what the stand-in reading of a too-long integer costs
per call; the same class at the limit (one integer of 1 MiB) is a row of its own.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import count
from pathlib import Path
from typing import Any, cast

import orjson
from _rounds import interleaved
from pydantic import BaseModel, ConfigDict, ValidationError

import envelopekit as ek
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxRequest, MxResponse
from envelopekit.som import SomEnvelope, StoryContext

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
MIB = 1_048_576
SOM_LIMIT = 240_000
TIME_TARGET = 10.0
MEMORY_TARGET = 32 * MIB

BQ_HEAD = (
    b'{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
    b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php",'
    b'"schema_version":1,"created_at":1749132727000},"attempts":0,"data":{"a":'
)
MX_HEAD = b'{"op":"fs.write","correlationId":"c-1","replyTo":"$replies.c-1","payload":'
BQ_META_OPEN = (
    b'{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
    b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php",'
    b'"schema_version":1,"created_at":1749132727000,"vendor":['
)


def fill(head: bytes, item: bytes, tail: bytes, limit: int, sep: bytes = b",") -> bytes:
    """``head item,item,... tail`` with as many items as fit in ``limit`` bytes."""
    count = (limit - len(head) - len(tail) + len(sep)) // (len(item) + len(sep))
    return head + sep.join([item] * count) + tail


def som_story(payload_tail: bytes, limit: int = SOM_LIMIT) -> bytes:
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope["payload"]["assets"] = []
    raw = orjson.dumps(envelope)
    head, marker, rest = raw.partition(b'"assets":[]')
    assert marker
    return fill(head + b'"assets":[', payload_tail, b"]" + rest, limit)


def som_member(name: str, head: bytes, item: bytes, tail: bytes, limit: int = SOM_LIMIT) -> bytes:
    """The beat-6 story with its member ``name`` as ``head item,item,... tail`` within ``limit``."""
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope[name] = "@"
    before, marker, after = orjson.dumps(envelope).partition(b'"@"')
    assert marker
    return fill(before + head, item, tail + after, limit)


def som_tags(head: bytes, item: bytes, tail: bytes) -> bytes:
    """The beat-6 story with its payload's ``tags`` as ``head item_0,item_1,... tail``."""
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope["payload"]["tags"] = "@"
    before, marker, after = orjson.dumps(envelope).partition(b'"@"')
    assert marker
    return numbered(before + head, item, tail + after, SOM_LIMIT)


def som_member_keys(name: str, count: int) -> bytes:
    """The beat-6 story with ``count`` unknown keys added to its member ``name``."""
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope[name] = {**envelope[name], **{key.decode(): 0 for key in short_keys(count)}}
    raw = orjson.dumps(envelope)
    assert len(raw) <= SOM_LIMIT
    return raw


def som_link_withdrawn(
    count: int, link_id: object = "0190a000-0000-7000-8000-00000000aaa1"
) -> bytes:
    """A ``link.committed`` whose ``withdrawn`` (refused on it) holds ``count`` unknown keys."""
    payload = orjson.loads((DATA / "som" / "examples" / "link" / "committed.json").read_bytes())
    payload["link_id"] = link_id
    payload["withdrawn"] = {key.decode(): 0 for key in short_keys(count)}
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope.update(message_type="link.committed", topic="som.link.committed", payload=payload)
    raw = orjson.dumps(envelope)
    assert len(raw) <= SOM_LIMIT
    return raw


def som_extensions(count: int) -> bytes:
    """The beat-6 story with ``count`` extension keys not namespaced ``com.<vendor>.``."""
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope["payload"]["extensions"] = {key.decode(): 0 for key in short_keys(count)}
    raw = orjson.dumps(envelope)
    assert len(raw) <= SOM_LIMIT
    return raw


def numbered(head: bytes, item: bytes, tail: bytes, limit: int, sep: bytes = b",") -> bytes:
    """``head item_0,item_1,... tail`` within ``limit`` bytes, item ``i`` with ``#`` written ``i``.

    Each object then differs from the others (a counter in it), as an attacker writes them to
    defeat a reading of each distinct object text once.
    """
    items: list[bytes] = []
    size = len(head) + len(tail) - len(sep)
    for i in count():
        written = item.replace(b"#", b"%d" % i)
        size += len(written) + len(sep)
        if size > limit:
            break
        items.append(written)
    return head + sep.join(items) + tail


def short_keys(count: int) -> list[bytes]:
    alphabet = [bytes([c]) for c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    keys = list(alphabet)
    while len(keys) < count:
        keys = [k + c for k in keys for c in alphabet]
    return keys[:count]


def deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@dataclass(frozen=True)
class Case:
    name: str
    raw: bytes
    spec: str
    floor: bytes
    settings: ek.Settings
    at_limit: bool = True

    @classmethod
    def of(
        cls,
        name: str,
        raw: bytes,
        spec: str = "auto",
        *,
        swap: tuple[bytes, bytes] | None = None,
        settings: ek.Settings | None = None,
        at_limit: bool = True,
    ) -> Case:
        floor = raw if swap is None else raw.replace(*swap)
        orjson.loads(floor)  # the floor itself must be JSON
        return cls(name, raw, spec, floor, settings or ek.Settings(), at_limit)

    def check(self) -> ek.Verdict[Any]:
        return ek.check(self.raw, self.spec, settings=self.settings)

    def parse_floor(self) -> object:
        return orjson.loads(self.floor)


def through_door(model: Any, raw: bytes) -> int:
    """``model.model_validate_json(raw)``: the errors it raised (0: valid)."""
    try:
        model.model_validate_json(raw)
    except ValidationError as exc:
        return exc.error_count()
    return 0


class Loose(BaseModel):
    """A typed payload that takes any object: its members are extras, read as JSON gives them."""

    model_config = ConfigDict(extra="allow")


def typed_door_model(raw: bytes, spec: str | None) -> Any:
    """The typed door for ``raw`` of ``spec``: the model with its payload (or ``data``) typed."""
    if spec == "som":
        return SomEnvelope[StoryContext]
    if spec == "matrix":
        return MxResponse[Loose] if b'"$reply"' in raw else MxRequest[Loose]
    return BabelEnvelope[Loose]


def validate_loaded(model: Any, document: object) -> int:
    """``model.model_validate(document)``: the errors it raised (0: valid)."""
    try:
        model.model_validate(document)
    except ValidationError as exc:
        return exc.error_count()
    return 0


def validate_held(model: Any, document: object) -> int:
    """The class's own validator of ``document``: the errors it raised (0: valid)."""
    try:
        model.__pydantic_validator__.validate_python(document)
    except ValidationError as exc:
        return exc.error_count()
    return 0


def door_model(raw: bytes, spec: str | None) -> Any:
    """The model a service validating at its boundary would use for ``raw`` of ``spec``."""
    if spec == "som":
        return SomEnvelope
    if spec == "matrix":
        return MxResponse if b'"$reply"' in raw else MxRequest
    return BabelEnvelope


def cases() -> list[Case]:
    big_int = b"9" * 5000
    escapes = b'"\\"\\\\\\"a"'  # "\"\\\"a": an escaped quote, backslash and quote
    whole = b"9" * (MIB - len(BQ_HEAD) - 2)  # one integer filling the message
    exponent = b"9" * (MIB - len(MX_HEAD) - len(b'{"a":1e}}'))  # one exponent filling it
    return [
        Case.of("som story.context, assets = [{}] * n", som_story(b"{}"), "som"),
        Case.of("som story.context, assets of bad items", som_story(b'{"asset_id":1}'), "som"),
        Case.of(
            "babelqueue data = [NaN, ...]",
            fill(BQ_HEAD + b"[", b"NaN", b"]}}", MIB),
            swap=(b"NaN", b"1.0"),
        ),
        Case.of(
            "babelqueue data = [1e400, ...]",
            fill(BQ_HEAD + b"[", b"1e400", b"]}}", MIB),
            swap=(b"1e400", b"1e300"),
        ),
        Case.of(
            "babelqueue data = [2**64, ...] (read, with warnings)",
            fill(BQ_HEAD + b"[", b"18446744073709551616", b"]}}", MIB),
            swap=(b"18446744073709551616", b"1.844674407370955161"),
        ),
        Case.of(
            "matrix payload = [2**64, ...]",
            fill(MX_HEAD + b'{"a":[', b"18446744073709551616", b"]}}", MIB),
            "matrix",
            swap=(b"18446744073709551616", b"1.844674407370955161"),
        ),
        Case.of(
            "matrix payload = [2**60, ...] (valid, with warnings)",
            fill(MX_HEAD + b'{"a":[', b"1152921504606846976", b"]}}", MIB),
            "matrix",
        ),
        # Small integers, the most numbers a byte (session 32's sweep): free-form JSON that
        # Matrix, SOM and CloudEvents walked in Python, a step a number, twice for Matrix.
        Case.of(
            "matrix payload = [-1, -1, ...] (small integers)",
            fill(MX_HEAD + b'{"a":[', b"-1", b"]}}", MIB),
            "matrix",
        ),
        Case.of(
            "som extensions value = [-1, -1, ...] (small integers)",
            som_member("extensions", b'{"com.x.y":[', b"-1", b"]}"),
            "som",
        ),
        # One number to note after many plain ones: the proof fails, and the array is read.
        Case.of(
            "babelqueue data = [-1, ..., 2**53+1] (one warning at the end)",
            fill(BQ_HEAD + b"[", b"-1", b",9007199254740993]}}", MIB),
        ),
        Case.of(
            "matrix payload = [-1, ..., 2**53+1] (one warning at the end)",
            fill(MX_HEAD + b'{"a":[', b"-1", b",9007199254740993]}}", MIB),
            "matrix",
        ),
        # The same under `spec="auto"` (session 34): the class near 10x before detection read
        # only the members its tests read.
        Case.of(
            "matrix payload = [-1, ..., 2**53+1] (one warning at the end, auto)",
            fill(MX_HEAD + b'{"a":[', b"-1", b",9007199254740993]}}", MIB),
        ),
        Case.of(
            "babelqueue data = [-1, ..., 1e400] (one refusal at the end)",
            fill(BQ_HEAD + b"[", b"-1", b",1e400]}}", MIB),
            swap=(b"1e400", b"1.000"),
        ),
        Case.of(
            "matrix payload = [-1, ..., 1e400] (one refusal at the end)",
            fill(MX_HEAD + b'{"a":[', b"-1", b",1e400]}}", MIB),
            "matrix",
            swap=(b"1e400", b"1.000"),
        ),
        # One number to note after many plain objects (session 33's sweep): the scan read and
        # held each object, and an unknown key was walked, then scanned.
        Case.of(
            "babelqueue data = [{a: -1}, ..., {a: 2**53+1}] (one warning after objects)",
            fill(BQ_HEAD + b"[", b'{"a":-1}', b',{"a":9007199254740993}]}}', MIB),
        ),
        Case.of(
            "babelqueue meta unknown key = [{a: -1}, ..., {a: 2**53+1}] (one warning)",
            fill(
                BQ_META_OPEN, b'{"a":-1}', b',{"a":9007199254740993}]},"attempts":0,"data":{}}', MIB
            ),
        ),
        Case.of(
            "matrix payload = [{a: -1}, ..., {a: 2**53+1}] (one warning after objects)",
            fill(MX_HEAD + b"[", b'{"a":-1}', b',{"a":9007199254740993}]}', MIB),
            "matrix",
        ),
        Case.of(
            "matrix reply unknown key = [{a: -1}, ..., {a: 2**53+1}] (one warning)",
            fill(
                b'{"op":"$reply","correlationId":"c","ok":true,"payload":1,"x":[',
                b'{"a":-1}',
                b',{"a":9007199254740993}]}',
                MIB,
            ),
            "matrix",
        ),
        # The same one level deeper in a Matrix reply (session 33's sweep, 11.9x-13.5x): the
        # walk and the scan read each object in Python.
        Case.of(
            "matrix error details = [{a: -1}, ..., {a: 0.1234567890123456}] (nothing to note)",
            fill(
                b'{"op":"$reply","correlationId":"c","payload":{"ok":false,"error":"x","details":[',
                b'{"a":-1}',
                b',{"a":0.1234567890123456}]}}',
                MIB,
            ),
            "matrix",
        ),
        Case.of(
            "matrix list page items = [{a: -1}, ..., {a: 2**53+1}] (one warning)",
            fill(
                b'{"op":"$reply","correlationId":"c","payload":{"ok":true,"count":2,"items":[',
                b'{"a":-1}',
                b',{"a":9007199254740993}]}}',
                MIB,
            ),
            "matrix",
        ),
        Case.of(
            "som extensions value = [[-1], ..., 0.1234567890123456] (nothing to note)",
            som_member("extensions", b'{"com.x.y":[', b"[-1]", b",0.1234567890123456]}"),
            "som",
        ),
        # SOM tags beside an invalid tag, searched for a repeat as sent (session 47: every tag
        # was read, where the large reading stops the list at the invalid one; 19x, 11.8x).
        Case.of(
            "som tags = [[-1, -1, ...]] (one tag of small integers)",
            som_tags(b"[[", b"-1", b"]]"),
            "som",
        ),
        Case.of(
            "som tags = [{scheme: 1}, {a: i}, ...] (an invalid tag, then objects)",
            som_tags(b'[{"scheme":1},', b'{"a":#}', b"]"),
            "som",
        ),
        Case.of(
            "som @context = {a: [-1, ..., 1e400]} (one refusal at the end, a plain validator)",
            som_member("@context", b'{"a":[', b"-1", b",1e400]}"),
            "som",
            swap=(b"1e400", b"1.000"),
        ),
        Case.of(
            "babelqueue data = [-1, ..., 0.1234567890123456] (a 16-digit fraction at the end)",
            fill(BQ_HEAD + b"[", b"-1", b",0.1234567890123456]}}", MIB),
        ),
        Case.of(
            "babelqueue data = [60-deep arrays, ...]", fill(BQ_HEAD + b"[", deep(60), b"]}}", MIB)
        ),
        Case.of("babelqueue data = [[], [], ...]", fill(BQ_HEAD + b"[", b"[]", b"]}}", MIB)),
        Case.of(
            "matrix payload = [[], [], ...]",
            fill(MX_HEAD + b'{"a":[', b"[]", b"]}}", MIB),
            "matrix",
        ),
        Case.of(
            "matrix request, 110,000 unknown keys",
            MX_HEAD + b"{}," + b",".join(b'"%s":0' % key for key in short_keys(110_000)) + b"}",
            "matrix",
        ),
        Case.of(
            "som envelope, 29,999 unknown keys",
            b"{" + b",".join(b'"%s":0' % key for key in short_keys(29_999)) + b"}",
            "som",
        ),
        Case.of(
            "som story.context payload, 29,000 unknown keys",
            som_member_keys("payload", 29_000),
            "som",
        ),
        Case.of(
            "som originating_system, 29,000 unknown keys",
            som_member_keys("originating_system", 29_000),
            "som",
        ),
        # A member its message type refuses, holding many errors of its own (session 47: the
        # door rebuilt each of pydantic's errors in Python to add the refusal; check did not).
        Case.of(
            "som link.committed withdrawn, 22,772 unknown keys",
            som_link_withdrawn(22_772),
            "som",
        ),
        Case.of(
            "som link.committed withdrawn, 22,772 unknown keys, a bad link_id",
            som_link_withdrawn(22_772, link_id=1),
            "som",
        ),
        Case.of(
            "som story.context extensions, 29,000 keys not namespaced",
            som_extensions(29_000),
            "som",
        ),
        # Long strings of one shape in a member (session 31's sweep): escapes the number proof
        # read pairwise, a blank test that looked each space up, a warning quoting all of it.
        Case.of(
            "babelqueue data string of \\u0001 escapes (1 MiB)",
            fill(BQ_HEAD + b'"', b"\\u0001", b'"}}', MIB, sep=b""),
            "babelqueue",
        ),
        Case.of(
            "babelqueue data of 100 arrays and a string of \\u0001 escapes (1 MiB)",
            fill(
                BQ_HEAD + b"[" + b",".join([b"[]"] * 100) + b'],"s":"',
                b"\\u0001",
                b'"}}',
                MIB,
                sep=b"",
            ),
            "babelqueue",
        ),
        Case.of(
            "babelqueue job of spaces (1 MiB)",
            fill(b'{"job":"', b" ", b'",' + BQ_HEAD.partition(b'",')[2] + b"1}}", MIB, sep=b""),
            "babelqueue",
        ),
        Case.of(
            "matrix error code of 1 MiB (TTT...)",
            fill(b'{"ok":false,"error":"x","code":"', b"T", b'"}', MIB, sep=b""),
            "matrix",
        ),
        Case.of(
            "matrix replyTo of 1 MiB (a/a/...)",
            fill(
                b'{"op":"fs.write","correlationId":"c-1","replyTo":"',
                b"a/",
                b'","payload":{}}',
                MIB,
                sep=b"",
            ),
            "matrix",
        ),
        Case.of(
            "matrix op of 1 MiB (a.a.a...A)",
            b'{"op":"' + b"a." * ((MIB - 40) // 2) + b'A","payload":{}}',
            "matrix",
        ),
        # Required members missing around a large value: pydantic-core built the object around
        # them as Python objects once per missing member (session 30).
        Case.of(
            "babelqueue {unknown: [{}, ...]}: every member missing",
            fill(b'{"unknown":[', b"{}", b"]}", MIB),
            "babelqueue",
        ),
        Case.of(
            "babelqueue meta = {unknown: [{}, ...]}: its members missing",
            fill(
                BQ_HEAD.partition(b'"meta":')[0] + b'"data":{},"meta":{"unknown":[',
                b"{}",
                b"]}}",
                MIB,
            ),
            "babelqueue",
        ),
        Case.of(
            "som {unknown: [{}, ...]}: every member missing",
            fill(b'{"unknown":[', b"{}", b"]}", SOM_LIMIT),
            "som",
        ),
        Case.of(
            "som originating_system = {unknown: [{}, ...]}: its members missing",
            som_member("originating_system", b'{"unknown":[', b"{}", b"]}"),
            "som",
        ),
        Case.of(
            "matrix {unknown: [{}, ...]}: every member missing",
            fill(b'{"unknown":[', b"{}", b"]}", MIB),
            "matrix",
        ),
        # A bare error payload was read as a request, then through the union; an error code
        # that is no string reached the enum class, which quotes it whole (session 30).
        Case.of(
            "matrix bare error payload, code = [{}, ...]",
            fill(b'{"ok":false,"error":"x","code":[', b"{}", b"]}", MIB),
            "matrix",
        ),
        Case.of(
            "matrix reply, payload.code = [{}, ...]",
            fill(
                b'{"op":"$reply","correlationId":"c","payload":{"ok":false,"error":"x","code":[',
                b"{}",
                b"]}}",
                MIB,
            ),
            "matrix",
        ),
        Case.of(
            "babelqueue data = 1 MiB string of brackets",
            BQ_HEAD + b'"' + b"[{" * ((MIB - len(BQ_HEAD) - 10) // 2) + b'"}}',
        ),
        Case.of(
            "babelqueue data = 5,000-digit integer (5 KB, not at the limit)",
            BQ_HEAD + big_int + b"}}",
            swap=(big_int, b"1." + b"9" * 4998),
            at_limit=False,
        ),
        Case.of(
            "babelqueue data = one integer of 1 MiB",
            BQ_HEAD + whole + b"}}",
            swap=(whole, b"1." + whole[2:]),
        ),
        Case.of(
            "matrix payload = one number token of 1 MiB (1e999...)",
            MX_HEAD + b'{"a":1e' + exponent + b"}}",
            "matrix",
            swap=(b"1e" + exponent, b"1." + exponent),
        ),
        # The stand-in reading of an integer too long for the parser, after what its finder
        # reads (session 40: 9.2x-20x before; the finder's own readings, and a parse of the
        # MiB that stops at the integer, where the spec proves its numbers first).
        *(
            Case.of(
                f'{where} = {{s: ["\\"\\\\\\"a", ...], n: 5,000-digit integer}}{named}',
                raw,
                spec,
                swap=(big_int, b"1." + b"9" * 4998),
            )
            for where, own, raw in (
                (
                    "babelqueue data",
                    "babelqueue",
                    fill(BQ_HEAD + b'{"s":[', escapes, b'],"n":' + big_int + b"}}}", MIB),
                ),
                (
                    "matrix payload",
                    "matrix",
                    fill(MX_HEAD + b'{"s":[', escapes, b'],"n":' + big_int + b"}}", MIB),
                ),
                (
                    "som _actors",
                    "som",
                    som_member("_actors", b'{"s":[', escapes, b'],"n":' + big_int + b"}"),
                ),
            )
            for spec, named in (("auto", ""), (own, f" (spec {own})"))
        ),
        Case.of(
            "babelqueue data = [1e-5, ..., 5,000-digit integer]",
            fill(BQ_HEAD + b"[", b"1e-5", b"," + big_int + b"]}}", MIB),
            swap=(big_int, b"1." + b"9" * 4998),
        ),
        Case.of(
            "babelqueue data = [1,\\n 1,\\n ..., 5,000-digit integer]",
            fill(BQ_HEAD + b"[", b"1", b",\n" + big_int + b"]}}", MIB, sep=b",\n"),
            swap=(big_int, b"1." + b"9" * 4998),
        ),
        Case.of(
            'babelqueue data = [1e-(5,000 digits), "\\"\\\\\\"a", ..., 5,000-digit integer]',
            fill(BQ_HEAD + b"[1e-" + big_int + b",", escapes, b"," + big_int + b"]}}", MIB),
            swap=(b"," + big_int + b"]", b"," + b"1." + b"9" * 4998 + b"]"),
        ),
        Case.of(
            'babelqueue data = ["\\"\\\\\\"a", 5,000-digit integer, ...]',
            fill(BQ_HEAD + b"[", escapes + b"," + big_int, b"]}}", MIB),
            swap=(big_int, b"1." + b"9" * 4998),
        ),
        Case.of(
            "babelqueue data = [5,000-digit integer, ...]",
            fill(BQ_HEAD + b"[", big_int, b"]}}", MIB),
            swap=(big_int, b"1." + b"9" * 4998),
        ),
        Case.of(
            "babelqueue, 1 MiB of repeated keys (refuse)",
            fill(BQ_HEAD + b"{", b'"k":0', b"}}}", MIB),
            "babelqueue",
            settings=ek.Settings(duplicate_keys="refuse"),
        ),
        *duplicate_cases(),
        Case.of(
            "babelqueue, 1 MiB of distinct keys (valid)",
            BQ_HEAD + b"{" + b",".join(b'"k%06d":0' % i for i in range(85_000)) + b"}}}",
        ),
    ]


def duplicate_cases() -> list[Case]:
    """Issue 12's shapes of repeated names, each under ``duplicate_keys="refuse"`` at 1 MiB."""
    refuse = ek.Settings(duplicate_keys="refuse")
    data = BQ_HEAD + b"["
    shapes = [
        ("[{a, a}, ...]: every object repeats", fill(data, b'{"a":0,"a":0}', b"]}}", MIB)),
        (
            "{x: {a, a}, x: ...}: objects under one name",
            fill(BQ_HEAD + b"{", b'"x":{"a":0,"a":0}', b"}}}", MIB),
        ),
        (
            "[{a}, ..., {a, a}]: one repeat at the end",
            fill(data, b'{"a":0}', b',{"a":0,"a":0}]}}', MIB),
        ),
        ("[{}, ..., {a, a}]", fill(data, b"{}", b',{"a":0,"a":0}]}}', MIB)),
        ("[[], ..., {a, a}]", fill(data, b"[]", b',{"a":0,"a":0}]}}', MIB)),
        (
            "[{a, a, b, b}, ...]: two names twice",
            fill(data, b'{"a":0,"a":0,"b":0,"b":0}', b"]}}", MIB),
        ),
        ("[{\\u0061, a}, ...]: escaped names", fill(data, b'{"\\u0061":0,"a":0}', b"]}}", MIB)),
        ("[{a{, a{}, ...]: brackets in names", fill(data, b'{"a{":0,"a{":0}', b"]}}", MIB)),
        ("[{x: {a, a}}, ...]: one level down", fill(data, b'{"x":{"a":0,"a":0}}', b"]}}", MIB)),
        ("[{x: {}, x: {}}, ...]: shadowed objects", fill(data, b'{"x":{},"x":{}}', b"]}}", MIB)),
        (
            "85,000 distinct keys, then a repeat",
            BQ_HEAD
            + b"{"
            + b",".join(b'"k%06d":0' % i for i in range(85_000))
            + b',"k000000":1}}}',
        ),
        # Issue 12, round 2: names repeated in other patterns, escapes, brackets and colons in
        # values, objects in arrays, wide objects, shapes in turn, json.dumps spacing.
        (
            "[{a, b, a, b}, ...]: names in turn",
            fill(data, b'{"a":0,"b":0,"a":0,"b":0}', b"]}}", MIB),
        ),
        (
            "[{a, a, a, b}, ...]: a name three times",
            fill(data, b'{"a":0,"a":0,"a":0,"b":0}', b"]}}", MIB),
        ),
        (
            "[{a, b, c, a, b, c}, ...]: three names twice",
            fill(data, b'{"a":0,"b":0,"c":0,"a":0,"b":0,"c":0}', b"]}}", MIB),
        ),
        (
            "[{n*200, n*200}, ...]: long names",
            fill(data, b'{"' + b"n" * 200 + b'":0,"' + b"n" * 200 + b'":0}', b"]}}", MIB),
        ),
        (
            '[{a\\", a\\", \\\\, \\\\}, ...]: escaped quotes and backslashes',
            fill(data, b'{"a\\"":0,"a\\"":0,"\\\\":0,"\\\\":0}', b"]}}", MIB),
        ),
        (
            '[{\\u0022{, \\"{, \\u007b, {}, ...]: quotes and braces escaped or not',
            fill(data, b'{"\\u0022{":0,"\\"{":0,"\\u007b":0,"{":0}', b"]}}", MIB),
        ),
        (
            '[{a: "[{:,", a: "}]"}, ...]: brackets and colons in values',
            fill(data, b'{"a:":"[{:,","a:":"}]"}', b"]}}", MIB),
        ),
        ("[[{a, a}], ...]: objects in arrays", fill(data, b'[{"a":0,"a":0}]', b"]}}", MIB)),
        (
            "[{k0..k49, k0}, ...]: wide objects",
            fill(
                data, b"{" + b",".join(b'"k%d":0' % i for i in range(50)) + b',"k0":1}', b"]}}", MIB
            ),
        ),
        (
            "[{a, a}, {b: [1]}, [{c}], ...]: shapes in turn",
            fill(data, b'{"a":0,"a":0},{"b":[1]},[{"c":0}]', b"]}}", MIB),
        ),
        (
            "[{a: 0, a: 0, b: 0, b: 0}, ...]: as json.dumps writes",
            fill(data, b'{"a": 0, "a": 0, "b": 0, "b": 0}', b"]}}", MIB, sep=b", "),
        ),
        (
            "{x: {a, a}, y: {a, a}, ...}: objects under names in turn",
            fill(BQ_HEAD + b"{", b'"x":{"a":0,"a":0},"y":{"a":0,"a":0}', b"}}}", MIB),
        ),
        ("[{a, b}, ...]: no repeat", fill(data, b'{"a":0,"b":0}', b"]}}", MIB)),
        # Issue 12, round 4: the same shapes with a counter `i` in each object, so that no two
        # object texts are alike: in a value, or in the names where that is the harder.
        (
            "[{a: i, a: i}, ...]: every object repeats, each object distinct",
            numbered(data, b'{"a":#,"a":#}', b"]}}", MIB),
        ),
        (
            "[{a_i, a_i, b_i, b_i}, ...]: two names twice, each object distinct",
            numbered(data, b'{"a#":0,"a#":0,"b#":0,"b#":0}', b"]}}", MIB),
        ),
        (
            "[{\\u0061: i, a: i}, ...]: escaped names, each object distinct",
            numbered(data, b'{"\\u0061":#,"a":#}', b"]}}", MIB),
        ),
        (
            "[{a{: i, a{: i}, ...]: brackets in names, each object distinct",
            numbered(data, b'{"a{":#,"a{":#}', b"]}}", MIB),
        ),
        (
            '[{a\\": i, a\\": i, \\\\: i, \\\\: i}, ...]: escaped quotes and backslashes, '
            "each object distinct",
            numbered(data, b'{"a\\"":#,"a\\"":#,"\\\\":#,"\\\\":#}', b"]}}", MIB),
        ),
        (
            '[{\\u0022{: i, \\"{: i, \\u007b: i, {: i}, ...]: quotes and braces escaped or not, '
            "each object distinct",
            numbered(data, b'{"\\u0022{":#,"\\"{":#,"\\u007b":#,"{":#}', b"]}}", MIB),
        ),
        (
            '[{a: "[{:,i", a: "}]"}, ...]: brackets and colons in values, each object distinct',
            numbered(data, b'{"a:":"[{:,#","a:":"}]"}', b"]}}", MIB),
        ),
        (
            "[{a: i, a: i, b: i, b: i}, ...]: as json.dumps writes, each object distinct",
            numbered(data, b'{"a": #, "a": #, "b": #, "b": #}', b"]}}", MIB, sep=b", "),
        ),
        (
            "{x_i: {a_i, a_i}, ...}: objects under distinct names, each object distinct",
            numbered(BQ_HEAD + b"{", b'"x#":{"a#":0,"a#":0}', b"}}}", MIB),
        ),
    ]
    return [
        Case.of(f"babelqueue, {name} (refuse)", raw, "babelqueue", settings=refuse)
        for name, raw in shapes
    ]


def som_actors(actors: Callable[[int], object], limit: int = FULL_REPORT_BYTES) -> bytes:
    """beat-6 with ``_actors`` set to ``actors(n)``, for the largest ``n`` within ``limit``."""
    story = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    low, high = 1, limit
    while low < high:
        middle = (low + high + 1) // 2
        if len(orjson.dumps({**story, "_actors": actors(middle)})) <= limit:
            low = middle
        else:
            high = middle - 1
    return orjson.dumps({**story, "_actors": actors(low)})


def nested(value: object, levels: int) -> object:
    for _ in range(levels):
        value = [value]
    return value


WITHIN_BOUND: list[tuple[str, Callable[[int], object]]] = [
    ("28-deep arrays of ints", lambda n: {"x": nested(list(range(n)), 28)}),
    ("[[], [], ...]", lambda n: {"x": [[]] * n}),
    ("an array of ints", lambda n: {"x": list(range(n))}),
    ('an array of {"a": [1]}', lambda n: {"x": [{"a": [1]}] * n}),
    ("an object of ints", lambda n: {"x": {f"k{i}": i for i in range(n)}}),
    ("distinct keys, each []", lambda n: {f"k{i}": [] for i in range(n)}),
    ("distinct keys, each {}", lambda n: {f"k{i}": {} for i in range(n)}),
    ("distinct keys, each 0", lambda n: {f"k{i}": 0 for i in range(n)}),
    ('distinct keys, each "s"', lambda n: {f"k{i}": "s" for i in range(n)}),
    ("distinct keys, each [[[[1]]]]", lambda n: {f"k{i}": [[[[1]]]] for i in range(n)}),
    (
        'distinct keys, each {"id": ..., "n": ...}',
        lambda n: {f"k{i}": {"id": f"a{i}", "n": i} for i in range(n)},
    ),
]


def doors(rounds: int, clock: Callable[[], float], only: str | None) -> list[str]:
    """The door table: each class through every door a service calls, against its floor.

    ``model_validate_json`` of the message model and of its typed variant (the payload, or
    BabelQueue's ``data``, typed: :class:`Loose`; SOM's as ``StoryContext``), ``model_validate``
    of what ``json.loads`` made of the same bytes (the parse not timed), and the class's own
    validator of the same (what a ``TypeAdapter`` of the class, FastAPI's body and FastStream's
    arguments run).
    """
    lines = [
        "| input (at the limit) | bytes | orjson.loads | model_validate_json (errors) | ratio "
        "| typed door (errors) | ratio | model_validate of json.loads (errors) | ratio "
        "| class validator of json.loads (errors) | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    over: list[str] = []
    for case in cases():
        if only is not None and only not in case.name:
            continue
        spec = case.check().spec
        calls: list[Callable[[], object]] = [
            case.parse_floor,
            partial(through_door, door_model(case.raw, spec), case.raw),
            partial(through_door, typed_door_model(case.raw, spec), case.raw),
        ]
        try:
            document = json.loads(case.raw)
        except ValueError:  # an integer past the interpreter's 4,300 digits: no such door
            document = None
        else:
            calls.append(partial(validate_loaded, door_model(case.raw, spec), document))
            calls.append(partial(validate_held, door_model(case.raw, spec), document))
        errors = [cast("int", call()) for call in calls[1:]]
        floor, *found = timed(calls, rounds, clock)
        cells = []
        names = ("door", "typed", "loaded", "class")
        for name, seconds, raised in zip(names, found, errors, strict=False):
            ratio = seconds / floor
            if case.at_limit and ratio > TIME_TARGET:
                over.append(f"{case.name} ({name} {ratio:.1f}x)")
            cells.append(f"{seconds * 1e3:.2f} ms ({raised:,}) | {ratio:.1f}x")
        if document is None:
            cells.append("json.loads refuses the bytes | - | - | -")
        lines.append(
            f"| {case.name} | {len(case.raw):,} | {floor * 1e3:.2f} ms | "
            + " | ".join(cells)
            + " |"
        )
    lines += ["", f"doors over {TIME_TARGET:.0f}x: " + ("; ".join(over) if over else "none")]
    return lines


def within_bound(rounds: int, clock: Callable[[], float]) -> list[str]:
    """The second table: SOM's free-form JSON within 16 KiB, the door against the model's own."""
    own = SomEnvelope.__pydantic_validator__.validate_json
    # The class itself (not SomEnvelope[Any], a subclass the door's fast path does not serve).
    door_of = cast("Callable[[bytes], object]", SomEnvelope.model_validate_json)
    lines = [
        "| 16 KB story.context, `_actors` holding | bytes | model_validate_json "
        "| model's own validator | door ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, actors in WITHIN_BOUND:
        raw = som_actors(actors)
        door, model = timed([partial(door_of, raw), partial(own, raw)], rounds, clock)
        lines.append(
            f"| {name} | {len(raw):,} | {door * 1e6:.0f} us | {model * 1e6:.0f} us "
            f"| {door / model:.2f}x |"
        )
    return lines


def timed(
    calls: list[Callable[[], object]],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """The median time of one call of each of ``calls``, their rounds interleaved.

    Each sample times enough calls to take 2 ms. The rounds take turns (:func:`interleaved`):
    timed one call after another, a row's ratio moved by 20% from run to run on a shared
    machine.
    """
    numbers = []
    for call in calls:
        start = clock()
        call()
        numbers.append(max(1, int(0.002 / max(clock() - start, 1e-9))))
    return [statistics.median(found) for found in interleaved(calls, numbers, rounds, clock)]


def peak(call: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="three rounds instead of nine")
    parser.add_argument("--out", type=Path, help="also write the markdown table here")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time by process CPU time (a shared machine's other load does not count)",
    )
    parser.add_argument("--only", help="only the rows whose name holds this text")
    parser.add_argument(
        "--doors",
        action="store_true",
        help="the door table instead: every model door against orjson.loads",
    )
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 9
    clock = time.process_time if args.cpu else time.perf_counter
    if args.doors:
        table = "\n".join(doors(rounds, clock, args.only))
        print(table)
        if args.out is not None:
            args.out.write_text(table + "\n", "utf-8")
        return 0
    lines = [
        "| input (at the limit) | bytes | verdict | violations | check | orjson.loads | ratio "
        "| peak traced | orjson.loads peak | model_validate_json (errors) | door ratio "
        "| door peak |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    failed = []
    for case in cases():
        if args.only is not None and args.only not in case.name:
            continue
        verdict = case.check()
        door_call = partial(through_door, door_model(case.raw, verdict.spec), case.raw)
        errors = door_call()
        seconds, floor, door = timed([case.check, case.parse_floor, door_call], rounds, clock)
        memory = peak(case.check)
        ratio = seconds / floor
        rules = ", ".join(verdict.rules()[:3]) or "ok"
        lines.append(
            f"| {case.name} | {len(case.raw):,} | {rules} | {len(verdict.violations)} "
            f"| {seconds * 1e3:.2f} ms | {floor * 1e3:.2f} ms | {ratio:.1f}x "
            f"| {memory / MIB:.1f} MiB | {peak(case.parse_floor) / MIB:.1f} MiB "
            f"| {door * 1e3:.2f} ms ({errors:,}) | {door / floor:.1f}x "
            f"| {peak(door_call) / MIB:.1f} MiB |"
        )
        if case.at_limit and (ratio > TIME_TARGET or memory > MEMORY_TARGET):
            failed.append(case.name)
    table = "\n".join([*lines, "", *within_bound(rounds, clock)])
    print(table)
    print(
        f"\ntargets (at the limit): <= {TIME_TARGET:.0f}x orjson.loads, "
        f"<= {MEMORY_TARGET // MIB} MiB; "
        + (f"missed by: {', '.join(failed)}" if failed else "all met")
    )
    if args.out is not None:
        args.out.write_text(table + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
