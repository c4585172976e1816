"""``examples/consumer.py`` runs, with the venv's interpreter, and does what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "consumer.py"


def test_the_consumer_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    # The handler charged once, although the order arrived twice (idempotency).
    assert lines.count("charging order 1042: 9990 cents") == 1
    assert "first delivery: acked" in lines
    assert "redelivery: acked" in lines
    assert "unknown URN: dead-lettered to orders.dlq: unknown_urn" in lines
    # Third SQS delivery: attempts reconciled to 2, the failure makes it 3 = max_attempts.
    assert "bad data, 3rd delivery: dead-lettered to orders.dlq: failed" in lines
    assert (
        "schema_version 2 attribute: quarantined undecoded: transport.schema_version_unsupported"
        in lines
    )
    assert "not an envelope: quarantined: message-envelope.required" in lines
    (follow_up,) = [line for line in lines if line.startswith("published ")]
    trace = follow_up.split("trace ")[1].split(",")[0]
    # The follow-up continues the trace, and its traceparent carries the same trace id.
    assert f"00-{trace.replace('-', '')}-" in follow_up


README = (Path(__file__).parents[2] / "README.md").read_text("utf-8")
START = README.index("### Consuming BabelQueue messages")


def _section(text: str) -> str:
    """``text`` up to the next heading of any level, outside code blocks (a ``# comment``
    line in a Python block is not a heading)."""
    kept: list[str] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#+ ", line):
            break
        kept.append(line)
    return "".join(kept)


SECTION = _section(README[START + 4 :])


def test_the_readme_consumer_section_runs(capsys: pytest.CaptureFixture[str]) -> None:
    # The worker loop in the README prints what a worker would do with each delivery.
    blocks = re.findall(r"```python\n(.*?)```", SECTION, flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines() == [
        "charging order 1042",
        "ack",
        "ack",
    ]
