"""What ``pip install envelopekit`` must do without an extra, run under :mod:`.without_extras`.

``python tests/support/core_only.py ROOT`` runs every case of :data:`CASES` in one process and
prints ``{case: null | "<type>: <message>"}`` as JSON; ``tests/test_extras.py`` reads it, one
test per case. Each case is what a user does: import, call, run a docstring's example.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Each extra and the top-level modules it brings (pyproject.toml's optional dependencies).
EXTRAS: dict[str, tuple[str, ...]] = {
    "schemas": ("jsonschema",),
    "redis": ("redis",),
    "faststream": ("faststream", "anyio"),
    "testing": ("hypothesis",),
}

# What needs an extra, each by the extra its ImportError must name: a package at its import,
# a name of a core package when it is read, a call at its first use (``first use:`` cases).
NEEDS: dict[str, str] = {
    "envelopekit.testing": "testing",
    "envelopekit.faststream": "faststream",
    "envelopekit.babelqueue.RedisSeenStore": "redis",
    "envelopekit.babelqueue.AsyncRedisSeenStore": "redis",
    "first use: envelopekit.babelqueue.PayloadSchemas.check": "schemas",
    "first use: envelopekit.babelqueue.check_payload": "schemas",
    "first use: envelopekit.babelqueue.Router(schemas=...)": "schemas",
}

FENCE = re.compile(r"```python\n(.*?)```", re.S)
MESSAGES = {
    "babelqueue": "examples/messages/babelqueue/order-created.json",
    "som": "examples/messages/som/telling-started.json",
    "matrix": "examples/messages/matrix/request-join-tell.json",
}

ROOT = Path(sys.argv[1]) if __name__ == "__main__" else Path(__file__).parents[2]


def public_packages() -> list[str]:
    """envelopekit and each public subpackage or module (no leading underscore)."""
    import envelopekit

    found = ["envelopekit"]
    for module in pkgutil.iter_modules(envelopekit.__path__):
        if not module.name.startswith("_"):
            found.append(f"envelopekit.{module.name}")
    return found


def _docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    blocks = FENCE.findall(module.__doc__ or "")
    if not blocks:
        raise AssertionError(f"{name}'s docstring has no example")
    for block in blocks:
        exec(compile(block, f"<{name} docstring>", "exec"), {})


def _check(spec: str) -> None:
    import envelopekit as ek

    verdict = ek.check((ROOT / MESSAGES[spec]).read_bytes(), spec=spec)
    if not verdict.ok or verdict.envelope is None:
        raise AssertionError(f"{spec}: {verdict.rules()}")
    if json.loads(verdict.envelope.to_json()) != json.loads((ROOT / MESSAGES[spec]).read_bytes()):
        raise AssertionError(f"{spec}: to_json changed the message")


def _payload_schemas() -> None:
    from envelopekit.babelqueue import PayloadSchemas

    PayloadSchemas({"urn:babel:orders:created": {"type": "object"}}).check(
        "urn:babel:orders:created", {}
    )


def _check_payload() -> None:
    from envelopekit.babelqueue import check_payload

    check_payload({"type": "object"}, {})


def _router_payload_schema() -> None:
    # The Router takes a missing extra for a schema it cannot apply: a failure naming the extra.
    from envelopekit import rules
    from envelopekit.babelqueue import BabelEnvelope, Fail, PayloadSchemas, Router

    router = Router(schemas=PayloadSchemas({"urn:babel:orders:created": {"type": "object"}}))
    router.register("urn:babel:orders:created", lambda env: None)
    decision = router.route(BabelEnvelope.create("urn:babel:orders:created", {}).to_json())
    if not isinstance(decision, Fail) or decision.rule != rules.PAYLOAD_SCHEMA_FAILED:
        raise AssertionError(f"not a payload-schema failure: {decision!r}")
    raise decision.error


def _refused(module: str) -> Callable[[], None]:
    def case() -> None:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            return
        raise AssertionError(f"{module} is importable: the probe proves nothing")

    return case


def _imported(name: str) -> Callable[[], None]:
    def case() -> None:
        importlib.import_module(name)

    return case


def _attribute(package: str, name: str) -> Callable[[], None]:
    def case() -> None:
        getattr(importlib.import_module(package), name)

    return case


def _example(package: str) -> Callable[[], None]:
    return lambda: _docstring_examples(package)


def _checked(spec: str) -> Callable[[], None]:
    return lambda: _check(spec)


def cases() -> dict[str, Callable[[], None]]:
    """Every case, by its id (which the test's parameters are)."""
    found: dict[str, Callable[[], None]] = {}
    for modules in EXTRAS.values():
        for module in modules:
            found[f"refused: {module}"] = _refused(module)
    for package in public_packages():
        found[package] = _imported(package)
        if package in NEEDS:
            continue
        for name in importlib.import_module(package).__all__:
            found[f"{package}.{name}"] = _attribute(package, name)
        if FENCE.search(importlib.import_module(package).__doc__ or ""):
            found[f"example: {package}"] = _example(package)
    for spec in MESSAGES:
        found[f"check: {spec}"] = _checked(spec)
    found["first use: envelopekit.babelqueue.PayloadSchemas.check"] = _payload_schemas
    found["first use: envelopekit.babelqueue.check_payload"] = _check_payload
    found["first use: envelopekit.babelqueue.Router(schemas=...)"] = _router_payload_schema
    return found


def outcome(case: Callable[[], None]) -> str | None:
    """``None``, or the exception's type and message (its traceback for an unexpected one)."""
    try:
        case()
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception:
        return traceback.format_exc()
    return None


def main() -> None:
    """Run every case; print the outcomes as one JSON object."""
    results: dict[str, Any] = {}
    for name, case in cases().items():
        results[name] = outcome(case)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
