"""envelopekit without its extras: the core works, each extra-backed feature names what to install.

A subprocess of this venv's Python is made blind to every distribution beyond the core
install's requirements (``tests/support/without_extras.py``): what ``pip install envelopekit``
leaves. There, every public package and name that needs no extra imports, a message of each
spec is checked, every package docstring's example runs, and the CLI's commands print what
they print with every extra installed; each feature of an extra raises an ``ImportError``
naming ``pip install 'envelopekit[<extra>]'``, never a ``ModuleNotFoundError`` from deep inside.
Each extra alone (FastStream's beside the broker's own extra) works with nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import core_only
from tests.support.without_extras import beyond, blocking_env

ROOT = Path(__file__).parents[1]
PROBE = ROOT / "tests" / "support" / "core_only.py"
CASES = sorted(core_only.cases())


def _python(arguments: list[str], env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
    """This venv's Python run with ``arguments`` in the checkout, in ``env``."""
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def core_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A subprocess environment with only the core install's distributions."""
    refused = beyond()
    for modules in core_only.EXTRAS.values():
        assert set(modules) <= refused.modules, "an extra's module would be importable"
    return blocking_env(str(tmp_path_factory.mktemp("core-only")), refused)


@pytest.fixture(scope="module")
def outcomes(core_env: dict[str, str]) -> dict[str, str | None]:
    """Each case of the probe, run once in one core-only subprocess."""
    # Warnings are errors, as in this suite (pyproject's filterwarnings).
    done = _python(["-W", "error", str(PROBE), str(ROOT)], core_env)
    assert done.returncode == 0, done.stderr
    found: dict[str, str | None] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("case", CASES)
def test_without_extras(outcomes: dict[str, str | None], case: str) -> None:
    extra = core_only.NEEDS.get(case)
    got = outcomes[case]
    if extra is None:
        assert got is None, got
    else:
        assert got is not None, f"{case} worked without the {extra!r} extra"
        # Exactly ImportError: a ModuleNotFoundError is the bare one from deep inside.
        assert got.startswith("ImportError: "), got
        assert f"pip install 'envelopekit[{extra}]'" in got


def test_every_extra_is_probed() -> None:
    from importlib import metadata

    declared = set(metadata.metadata("envelopekit").get_all("Provides-Extra") or ())
    assert set(core_only.EXTRAS) == declared - {"dev", "fuzz", "bench"}
    assert set(core_only.NEEDS.values()) == set(core_only.EXTRAS)


@pytest.fixture(scope="module")
def feeds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inputs of the CLI cases: two payload schemas and a dead letter."""
    folder = tmp_path_factory.mktemp("cli-inputs")
    (folder / "old.json").write_text('{"type": "object", "properties": {"a": {"type": "string"}}}')
    (folder / "new.json").write_text('{"type": "object", "required": ["a"]}')
    dead = ROOT / "tests" / "data" / "babelqueue" / "fixtures" / "dead-lettered.json"
    (folder / "feed.ndjson").write_bytes(json.dumps(json.loads(dead.read_bytes())).encode())
    return folder


COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "validate": ["validate", "examples/messages"],
    "validate --jobs 2": ["validate", "--jobs", "2", "--format", "json", "examples/messages"],
    "schema": ["schema", "--spec", "som"],
    "asyncapi": ["asyncapi", "--spec", "matrix"],
    "compat": ["compat", "{feeds}/old.json", "{feeds}/new.json"],
    "redrive": ["redrive", "--kept", "{feeds}/kept.ndjson", "{feeds}/feed.ndjson"],
}


def _run(arguments: list[str], env: dict[str, str] | None) -> tuple[int, str, str]:
    done = _python(["-m", "envelopekit", *arguments], env)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_without_extras(core_env: dict[str, str], feeds: Path, command: str) -> None:
    arguments = [argument.format(feeds=feeds) for argument in COMMANDS[command]]
    with_extras = _run(arguments, None)
    assert with_extras[0] in (0, 1), with_extras[2]
    assert _run(arguments, core_env) == with_extras


# Each extra on its own, as its users install it (and FastStream's broker extra beside
# envelopekit's): what it brings works with nothing else beyond the core. `examples(...)` runs
# the fenced Python of each named docstring (`module` or `module:attribute`).
EXAMPLES = """
import importlib, inspect, re
def examples(*paths):
    for path in paths:
        module, _, name = path.partition(":")
        found = importlib.import_module(module)
        for part in filter(None, name.split(".")):
            found = getattr(found, part)
        blocks = re.findall(r"```python\\n(.*?)```", inspect.getdoc(found) or "", re.S)
        assert blocks, path
        for block in blocks:
            exec(compile(block, path, "exec"), {})
"""

SUBSCRIBERS = """
from faststream.{kind} import {broker}
from envelopekit.babelqueue import Router
from envelopekit.faststream import babelqueue_subscriber, matrix_subscriber, som_subscriber

broker = {broker}()
babelqueue_subscriber(broker, "orders", Router())
som_subscriber(broker, "som", lambda envelope, payload: None)
matrix_subscriber(broker, "matrix", lambda request: None)
try:
    from envelopekit.faststream import BareFormat
except ImportError as exc:  # the Redis list format: FastStream's own error names its extra
    assert "faststream[redis]" in str(exc), exc
else:
    raise AssertionError("BareFormat imported without redis-py")
"""

SCENARIOS: dict[str, tuple[tuple[str, ...], str]] = {
    "schemas": (
        ("envelopekit[schemas]",),
        "examples('envelopekit.babelqueue:PayloadSchemas')",
    ),
    "redis": (
        ("envelopekit[redis]",),
        """
import redis
from envelopekit.babelqueue import BabelEnvelope, RedisSeenStore, idempotent
examples("envelopekit.babelqueue:RedisSeenStore")
calls = []
guarded = idempotent(RedisSeenStore(redis.Redis.from_url("{redis_url}")), calls.append)
envelope = BabelEnvelope.create("urn:babel:orders:created", {})
guarded(envelope)
guarded(envelope)
assert calls == [envelope], calls
""",
    ),
    "testing": (("envelopekit[testing]",), "examples('envelopekit.testing')"),
    "faststream on redis": (
        ("envelopekit[faststream]", "faststream[redis]"),
        "examples('envelopekit.faststream', 'envelopekit.faststream:babelqueue_subscriber',"
        " 'envelopekit.faststream:som_subscriber', 'envelopekit.faststream:matrix_subscriber')",
    ),
    "faststream on rabbit": (
        ("envelopekit[faststream]", "faststream[rabbit]"),
        SUBSCRIBERS.format(kind="rabbit", broker="RabbitBroker"),
    ),
    "faststream on kafka": (
        ("envelopekit[faststream]", "faststream[kafka]"),
        SUBSCRIBERS.format(kind="kafka", broker="KafkaBroker"),
    ),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_extra_alone(tmp_path: Path, redis_url: str, scenario: str) -> None:
    roots, code = SCENARIOS[scenario]
    env = blocking_env(str(tmp_path), beyond(*roots))
    done = _python(["-c", EXAMPLES + code.replace("{redis_url}", redis_url)], env)
    assert done.returncode == 0, done.stderr
