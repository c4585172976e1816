"""The op and iface naming lints: report names off convention as warnings, never refuse them."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import envelopekit as ek
from envelopekit import rules
from envelopekit._violations import MAX_MESSAGE_CHARS
from envelopekit.matrix import (
    MxErrorCode,
    MxRequest,
    MxResponse,
    iface_problem,
    is_system_op,
    op_problem,
    reply_inbox,
)
from tests.test_cli import run


@pytest.mark.parametrize(
    "op", ["fs.list", "fs.write", "fs.dir.list", "fs.readFile", "$join", "$reply", "$leave"]
)
def test_on_convention(op: str) -> None:
    assert op_problem(op) is None
    doc = {"op": op, "payload": {}, "correlationId": "c", "replyTo": "$replies.c"}
    verdict = ek.check(json.dumps(doc).encode(), spec="matrix")
    assert verdict.ok
    assert rules.OP_CONVENTION not in {w.rule for w in verdict.warnings}


@pytest.mark.parametrize(
    ("op", "reason"),
    [
        ("ExpandDir", "interface-method"),
        ("", "neither"),
        ("fs", "neither"),
        ("FS.list", "neither"),
        ("fs.", "neither"),
        ("fs list", "neither"),
        ("$", "system op"),
        ("$Join", "system op"),
        ("$join.now", "system op"),
        ("$replies.c-1", "reply-inbox address"),
        ("fs.list\n", "neither"),
    ],
)
def test_off_convention_is_a_warning(op: str, reason: str) -> None:
    problem = op_problem(op)
    assert problem is not None and reason in problem
    verdict = ek.check(json.dumps({"op": op, "payload": {}}).encode(), spec="matrix")
    assert verdict.ok, verdict.violations
    lint = [w for w in verdict.warnings if w.rule == rules.OP_CONVENTION]
    assert len(lint) == 1
    assert lint[0].pointer == "/op" and lint[0].source == "policy"
    assert reason in lint[0].message


def test_system_ops() -> None:
    assert is_system_op("$join") and is_system_op("$anything")
    assert not is_system_op("fs.list")
    assert reply_inbox("c-1") == "$replies.c-1"


def test_request_reply_lints() -> None:
    req = MxRequest.create("fs.list", {}, expect_reply=True)
    assert req.envelope_warnings() == []
    # Read, not written: `create` refuses a tell with a correlation id (test_reply.py).
    tell = MxRequest.model_validate_json('{"op":"fs.log","payload":{},"correlationId":"c"}')
    assert [w.rule for w in tell.envelope_warnings()] == [rules.REPLY_UNPAIRED]
    asked = MxRequest.model_validate_json('{"op":"fs.log","payload":{},"replyTo":"$replies.c"}')
    assert [(w.rule, w.pointer) for w in asked.envelope_warnings()] == [
        (rules.REPLY_UNPAIRED, "/replyTo")
    ]
    odd = MxRequest.create("fs.log", {}, expect_reply=True, reply_to="inbox/7")
    assert [(w.rule, w.pointer) for w in odd.envelope_warnings()] == [
        (rules.REPLY_TO_CONVENTION, "/replyTo")
    ]


# --- iface: Name@N (matrix.md §2, S-6), a lint ----------------------------------------------

IFACES_ON_FORM = ["FsDaemon@1", "A@0", "x1@12"]
LONG_IFACE = "FsDaemon" * 20_000 + "@v1"  # 160 KB: past FULL_REPORT_BYTES, the large reading
IFACES_OFF_FORM = [
    pytest.param("@1", "the name", id="no-name"),
    pytest.param("FsDaemon", "no '@N'", id="no-version"),
    pytest.param("FsDaemon@", "the version", id="empty-version"),
    pytest.param("FsDaemon@v1", "the version", id="v-version"),
    pytest.param("1Fs@1", "the name", id="name-starts-with-a-digit"),
    pytest.param("Fs Daemon@1", "the name", id="space-in-name"),
    pytest.param("FsDaemon@1 ", "the version", id="trailing-space"),
    pytest.param("FsDaemon@1\n", "the version", id="trailing-newline"),
    pytest.param("Fs-Daemon@1", "the name", id="hyphen-in-name"),
    pytest.param("FsDaemon@\u0661", "the version", id="arabic-indic-digit"),
    pytest.param("FsDaemon@\u00b2", "the version", id="superscript-digit"),
    pytest.param("\u00c9clair@1", "the name", id="non-ascii-letter"),
    pytest.param("FsDaemon@1@2", "more than one '@'", id="two-ats"),
    pytest.param("", "empty", id="empty"),
    pytest.param(LONG_IFACE, "the version", id="very-long"),
]


def _request(iface: str) -> bytes:
    return orjson.dumps({"op": "fs.list", "payload": {}, "iface": iface})


def _response(iface: str) -> bytes:
    return orjson.dumps({"op": "$reply", "correlationId": "c", "payload": {}, "iface": iface})


def _read(door: str, raw: bytes) -> list[ek.Violation]:
    """The warnings of ``raw`` read through ``door``."""
    model: Any = MxResponse if raw.startswith(b'{"op":"$reply"') else MxRequest
    if door == "check":
        verdict = ek.check(raw, spec="matrix")
        assert verdict.ok, verdict.violations
        assert type(verdict.envelope) is model
        return verdict.warnings
    parsed = json.loads(raw)
    read = model.model_validate_json(raw) if door == "json" else model.model_validate(parsed)
    found: list[ek.Violation] = read.envelope_warnings()
    return found


DOORS = ["check", "json", "dict"]
BUILDERS = [pytest.param(_request, id="request"), pytest.param(_response, id="response")]


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize("iface", IFACES_ON_FORM)
def test_iface_on_form(iface: str, build: Any, door: str) -> None:
    assert iface_problem(iface) is None
    assert rules.IFACE_CONVENTION not in {w.rule for w in _read(door, build(iface))}


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize(("iface", "reason"), IFACES_OFF_FORM)
def test_iface_off_form_is_a_warning(iface: str, reason: str, build: Any, door: str) -> None:
    problem = iface_problem(iface)
    assert problem is not None and reason in problem
    assert len(problem) < MAX_MESSAGE_CHARS  # a long iface is quoted by a prefix: never cut
    lint = [w for w in _read(door, build(iface)) if w.rule == rules.IFACE_CONVENTION]
    assert lint == [ek.Violation(rules.IFACE_CONVENTION, "/iface", problem, "policy")]


@given(st.text(alphabet="aZ09@ \u0661\u00e9-\n", max_size=10))
def test_the_iface_lint_reads_name_at_version(iface: str) -> None:
    name, at, version = iface.partition("@")
    follows = (
        bool(at)
        and name[:1] in set(string.ascii_letters)
        and all(c in string.ascii_letters + string.digits for c in name)
        and version != ""
        and all(c in string.digits for c in version)
    )
    assert (iface_problem(iface) is None) is follows


@pytest.fixture(scope="module")
def cli_lines(tmp_path_factory: pytest.TempPathFactory) -> dict[bytes, dict[str, Any]]:
    """Each iface case as a request and a response, through one ``validate`` subprocess."""
    ifaces = [*IFACES_ON_FORM, *(str(p.values[0]) for p in IFACES_OFF_FORM)]
    messages = [build(iface) for iface in ifaces for build in (_request, _response)]
    feed: Path = tmp_path_factory.mktemp("iface") / "ifaces.ndjson"
    feed.write_bytes(b"".join(raw + b"\n" for raw in messages))
    done = run("validate", "--format", "json", "--spec", "matrix", str(feed))
    assert done.returncode == 0, done.stderr  # every one valid: warnings only
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return dict(zip(messages, lines, strict=True))


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize("iface", [*IFACES_ON_FORM, *(p.values[0] for p in IFACES_OFF_FORM)])
def test_the_cli_prints_the_iface_lint(
    cli_lines: dict[bytes, dict[str, Any]], iface: str, build: Any
) -> None:
    line = cli_lines[build(iface)]
    assert line["ok"] is True
    lint = [w for w in line["warnings"] if w["rule"] == rules.IFACE_CONVENTION]
    problem = iface_problem(iface)
    if problem is None:
        assert lint == []
    else:
        assert lint == [
            {
                "rule": rules.IFACE_CONVENTION,
                "pointer": "/iface",
                "message": problem,
                "source": "policy",
            }
        ]


def test_the_cli_text_shows_the_iface_lint(tmp_path: Path) -> None:
    feed = tmp_path / "one.json"
    feed.write_bytes(_request("FsDaemon@v1"))
    done = run("validate", "--spec", "matrix", str(feed))
    assert done.returncode == 0, done.stderr
    assert b"! iface.convention" in done.stdout and b"/iface" in done.stdout
    assert b"1 message: 1 valid, 0 invalid, 1 with warnings" in done.stdout


@pytest.mark.parametrize(("iface", "reason"), IFACES_OFF_FORM)
def test_create_sends_an_iface_off_form_as_an_op_off_convention(iface: str, reason: str) -> None:
    # The producer sends what the schema takes, as it sends `ExpandDir`, and reports it.
    req = MxRequest.create("ExpandDir", {}, iface=iface, expect_reply=True)
    assert req.iface == iface
    problem = iface_problem(iface)
    assert problem is not None and reason in problem
    lint = ek.Violation(rules.IFACE_CONVENTION, "/iface", problem, "policy")
    assert [w for w in req.envelope_warnings() if w.rule != rules.OP_CONVENTION] == [lint]
    assert ek.check(req.to_json(), spec="matrix").warnings == req.envelope_warnings()
    # A reply echoes the request's iface as sent (the caller matches on it), reported again.
    for answer in (req.reply({"ok": True}), req.fail(MxErrorCode.NOT_FOUND, "no such dir")):
        assert answer.iface == iface
        assert answer.envelope_warnings() == [lint]
        assert ek.check(answer.to_json(), spec="matrix").warnings == [lint]


@pytest.mark.parametrize("iface", IFACES_ON_FORM)
def test_create_with_an_iface_on_form_notes_nothing(iface: str) -> None:
    req = MxRequest.create("fs.list", {}, iface=iface, expect_reply=True)
    assert req.envelope_warnings() == []
    assert req.reply({"ok": True}).envelope_warnings() == []
    assert req.fail(MxErrorCode.INTERNAL, "x").envelope_warnings() == []
