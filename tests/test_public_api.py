"""Each package's ``__all__`` is complete and importable, and API.md's names exist."""

from __future__ import annotations
import __future__

import importlib
import types

import pytest

PACKAGES = [
    "envelopekit",
    "envelopekit.rules",
    "envelopekit.babelqueue",
    "envelopekit.som",
    "envelopekit.matrix",
    "envelopekit.faststream",
]


def _public_names(module: types.ModuleType) -> set[str]:
    # Public names the package defines (or re-exports from its own modules); names imported
    # from elsewhere (typing.Final, dataclasses.dataclass) are not its API.
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and name != "TYPE_CHECKING"
        and not isinstance(value, (types.ModuleType, __future__._Feature))
        and str(getattr(value, "__module__", "envelopekit")).startswith("envelopekit")
    }


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_complete_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    assert len(exported) == len(module.__all__), "duplicates in __all__"
    for attribute in exported:
        assert hasattr(module, attribute), attribute
    missing = _public_names(module) - exported
    assert not missing, f"public but not in __all__: {sorted(missing)}"


def test_api_contract_names() -> None:
    # The names API.md promises, spelled exactly.
    import envelopekit as ek
    from envelopekit.babelqueue import BabelEnvelope, BabelMeta, DeadLetter
    from envelopekit.matrix import MxErrorCode, MxErrorPayload, MxRequest, MxResponse
    from envelopekit.som import OriginatingSystem, SomEnvelope

    for function in (ek.check, ek.violations, ek.json_schema):
        assert callable(function)
    assert set(ek.Violation.__dataclass_fields__) == {
        "rule",
        "pointer",
        "message",
        "source",
    }
    for cls, methods in {
        BabelEnvelope: ("create", "child", "retried", "dead_lettered", "to_json"),
        SomEnvelope: ("create", "follow_up", "to_json"),
        MxRequest: ("create", "reply", "fail", "to_json"),
    }.items():
        for method in methods:
            assert callable(getattr(cls, method)), (cls, method)
    assert all(isinstance(c, type) for c in (BabelMeta, DeadLetter, OriginatingSystem))
    assert all(isinstance(c, type) for c in (MxResponse, MxErrorPayload, MxErrorCode))


def test_lazy_names_match_all() -> None:
    import envelopekit
    import envelopekit.babelqueue

    assert set(envelopekit._LAZY) | {"__version__"} == set(envelopekit.__all__)
    assert list(envelopekit.babelqueue._LAZY) == envelopekit.babelqueue.__all__
    with pytest.raises(AttributeError):
        envelopekit.babelqueue.Nothing  # noqa: B018


def test_validating_babelqueue_does_not_load_the_toolkit() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from envelopekit.babelqueue import BabelEnvelope; import envelopekit as ek; "
        "raw = BabelEnvelope.create('urn:babel:a:b', {}).to_json(); "
        "assert ek.check(raw, spec='babelqueue').ok; "
        "print(sorted(m for m in sys.modules if m.startswith('envelopekit.babelqueue.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = done.stdout.strip()
    for toolkit in ("_bindings", "_routing", "_idempotency", "_payload_schema", "_traceparent"):
        assert toolkit not in loaded, loaded
    assert "_envelope" in loaded


def test_import_is_light() -> None:
    # `import envelopekit` must not build any model: the spec packages load on first use.
    import subprocess
    import sys

    code = (
        "import sys, envelopekit; "
        "print(any(m.startswith(('envelopekit.babelqueue', 'envelopekit.som', "
        "'envelopekit.matrix', 'pydantic.main')) for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
