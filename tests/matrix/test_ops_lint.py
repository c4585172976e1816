"""The op naming lint: reports off-convention ops as warnings, never refuses them."""

from __future__ import annotations

import json

import pytest

import envelopekit as ek
from envelopekit import rules
from envelopekit.matrix import MxRequest, is_system_op, op_problem, reply_inbox


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
    tell = MxRequest.create("fs.log", {}, correlation_id="c")
    assert [w.rule for w in tell.envelope_warnings()] == [rules.REPLY_UNPAIRED]
    odd = MxRequest.create("fs.log", {}, expect_reply=True, reply_to="inbox/7")
    assert [(w.rule, w.pointer) for w in odd.envelope_warnings()] == [
        (rules.REPLY_TO_CONVENTION, "/replyTo")
    ]
