"""Each package's ``__all__`` is complete and importable; API.md's names and signatures hold.

API.md (the public contract) is vendored verbatim in ``tests/data/api/`` and parsed here: each
import it writes must succeed, and each call it writes must match the real signature (the
positional parameters in order, the keyword-only ones with their defaults, the return type).
"""

from __future__ import annotations
import __future__

import ast
import importlib
import inspect
import pkgutil
import re
import types
from pathlib import Path
from typing import Any

import pytest

from envelopekit import _exports
from tests.conftest import DATA

PACKAGES = [
    "envelopekit",
    "envelopekit.rules",
    "envelopekit.babelqueue",
    "envelopekit.som",
    "envelopekit.matrix",
    "envelopekit.faststream",
    "envelopekit.testing",
    "envelopekit.cloudevents",
]
# The packages (every one but the rule catalogue module) whose names envelopekit/_exports.py loads.
EXPORTING = [name for name in PACKAGES if name != "envelopekit.rules"]


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


# The public contract, vendored verbatim with its checksum (tests/data/api/README.md).
CONTRACT = DATA / "api" / "API.md"
CONTRACT_BLOCKS = re.findall(r"```python\n(.*?)```", CONTRACT.read_text(encoding="utf-8"), re.S)
# `Class.method(...)`, `receiver.method(...)` or `[v = ]ek.name(...)` at a line's start, with its
# parameter list (which may run over lines) and, for a signature, `-> Return`.
SIGNATURE = re.compile(
    r"^(?:\w+ = (?=ek\.))?(\w+)\.(\w+)\(((?:[^()]|\([^()]*\))*)\)(?:\s*->\s*(\w+))?", re.M
)


def _contract_imports() -> list[tuple[str, str]]:
    found = []
    for block in CONTRACT_BLOCKS:
        for module, names in re.findall(r"^from (envelopekit[\w.]*) import (.+)$", block, re.M):
            found += [(module, name.strip()) for name in names.split(",")]
    return found


def _contract_signatures() -> list[tuple[str, str, str, str | None]]:
    # (owner, method, parameters, return): a lower-case receiver (`env`, `req`) is an instance
    # of the class named last before it; `ek` is the package; with no class before it, the
    # receiver is each envelope the contract parses (`env.to_json()`).
    envelopes = re.findall(r"(\w+)\.model_validate_json\(", "".join(CONTRACT_BLOCKS))
    found = []
    for block in CONTRACT_BLOCKS:
        owner = ""
        for receiver, method, parameters, returns in SIGNATURE.findall(block):
            if receiver[0].isupper():
                owner = receiver
            owners = [receiver] if receiver == "ek" else [owner] if owner else envelopes
            found += [(one, method, parameters, returns) for one in owners]
    return [(o, m, " ".join(p.split()), r or None) for o, m, p, r in found]


IMPORTS = _contract_imports()
SIGNATURES = _contract_signatures()


def _owner(name: str) -> Any:
    import envelopekit as ek

    if name == "ek":
        return ek
    modules = {imported: module for module, imported in IMPORTS}
    return getattr(importlib.import_module(modules[name]), name)


def test_the_contract_is_read() -> None:
    # The parser found what API.md promises; an empty parse would pass everything below.
    assert len(IMPORTS) >= 9
    methods = {(owner, method) for owner, method, _, _ in SIGNATURES}
    assert {
        ("BabelEnvelope", "create"),
        ("BabelEnvelope", "child"),
        ("BabelEnvelope", "retried"),
        ("BabelEnvelope", "dead_lettered"),
        ("SomEnvelope", "create"),
        ("SomEnvelope", "follow_up"),
        ("MxRequest", "create"),
        ("MxRequest", "reply"),
        ("MxRequest", "fail"),
        ("ek", "check"),
        ("ek", "violations"),
        ("ek", "json_schema"),
        ("ek", "Violation"),
    } <= methods


@pytest.mark.parametrize(("module", "name"), IMPORTS, ids=[n for _, n in IMPORTS])
def test_contract_names_import(module: str, name: str) -> None:
    value = getattr(importlib.import_module(module), name)
    assert isinstance(value, type), name
    assert name in importlib.import_module(module).__all__


@pytest.mark.parametrize(
    ("owner", "method", "parameters", "returns"),
    SIGNATURES,
    ids=[f"{o}.{m}" for o, m, _, _ in SIGNATURES],
)
def test_contract_signature(owner: str, method: str, parameters: str, returns: str | None) -> None:
    target = getattr(_owner(owner), method)
    if owner == "ek" and method == "Violation":
        # A dataclass: its fields, in order.
        written = ast.parse(f"def f({parameters}): pass").body[0]
        assert isinstance(written, ast.FunctionDef)
        assert list(target.__dataclass_fields__) == [a.arg for a in written.args.args]
        return
    actual = inspect.signature(target)
    if next(iter(actual.parameters), "") == "self":
        actual = actual.replace(parameters=list(actual.parameters.values())[1:])
    open_ended = parameters.rstrip().endswith("...")
    written = ast.parse(f"def f({parameters.rstrip(' ,.')}): pass").body[0]
    assert isinstance(written, ast.FunctionDef)
    params = list(actual.parameters.values())
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    contract_positional = [a.arg for a in written.args.args]
    assert positional[: len(contract_positional)] == contract_positional
    defaults = written.args.defaults
    signature_line = returns is not None or owner != "ek"
    with_defaults = contract_positional[len(contract_positional) - len(defaults) :]
    for arg, default in zip(with_defaults, defaults, strict=True):
        if signature_line:
            assert actual.parameters[arg].default == ast.literal_eval(default), arg
    for keyword, keyword_default in zip(
        written.args.kwonlyargs, written.args.kw_defaults, strict=True
    ):
        found = actual.parameters.get(keyword.arg)
        assert found is not None, f"{owner}.{method} has no keyword {keyword.arg!r}"
        assert found.kind in (found.KEYWORD_ONLY, found.POSITIONAL_OR_KEYWORD), keyword.arg
        if keyword_default is not None:
            assert found.default == ast.literal_eval(keyword_default), keyword.arg
    if written.args.kwarg is not None and written.args.kwarg.arg == "same_keywords":
        # `**same_keywords`: each keyword of the owner's `create`, declared (so a misspelt one
        # is a type error), not swallowed by a `**kwargs`.
        created = inspect.signature(_owner(owner).create).parameters
        wanted = {name for name, p in created.items() if p.kind is p.KEYWORD_ONLY}
        declared = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
        assert wanted and wanted <= declared, sorted(wanted - declared)
        assert not any(p.kind is p.VAR_KEYWORD for p in params), "**keywords"
    elif written.args.kwarg is not None:
        assert any(p.kind is p.VAR_KEYWORD for p in params), "**keywords"
    if not open_ended and written.args.kwarg is None and owner != "ek":
        # Nothing else is required: whatever the contract does not name has a default.
        extra = [p for p in params[len(contract_positional) :] if p.name not in {"self", "cls"}]
        assert all(p.default is not p.empty or p.kind is p.VAR_KEYWORD for p in extra)
    if returns is not None and owner != "ek":
        annotation = str(actual.return_annotation)
        base = annotation.split("[", 1)[0]
        assert base == returns or (base == "Self" and returns == owner), annotation


def _exports_block(name: str) -> list[ast.ImportFrom]:
    # The package's `if TYPE_CHECKING:` block as a type checker reads it.
    module = importlib.import_module(name)
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text("utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, name
    statements = blocks[0].body
    assert all(isinstance(one, ast.ImportFrom) and one.level >= 1 for one in statements)
    return [one for one in statements if isinstance(one, ast.ImportFrom)]


@pytest.mark.parametrize("name", EXPORTING)
def test_one_export_pattern(name: str) -> None:
    # Each package writes each public name once, in its TYPE_CHECKING block, as `Name as Name`
    # (what mypy and basedpyright read as a re-export); `__all__` and the lazy loader are read
    # from that block, and the regular expressions that read it agree with Python's parser.
    module = importlib.import_module(name)
    written = {
        alias.asname or alias.name: ("." * one.level + (one.module or ""), alias.name)
        for one in _exports_block(name)
        for alias in one.names
    }
    assert all(alias.asname == alias.name for one in _exports_block(name) for alias in one.names)
    assert module.__file__ is not None
    source = Path(module.__file__).read_text("utf-8")
    assert _exports.exported(source, name) == written
    extra = ["__version__"] if name == "envelopekit" else []
    assert module.__all__ == [*written, *extra]
    assert set(module.__all__) <= set(dir(module))
    star: dict[str, Any] = {}
    exec(f"from {name} import *", star)
    assert set(star) - {"__builtins__"} == set(module.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        getattr(module, "Nothing")  # noqa: B009


def _public_modules() -> list[str]:
    # Each package, and each module a package exports by name (`envelopekit.babelqueue.sqs`).
    found = []
    for name in PACKAGES:
        module = importlib.import_module(name)
        found.append(name)
        found += [
            value.__name__
            for value in (getattr(module, one) for one in module.__all__)
            if isinstance(value, types.ModuleType) and value.__name__ not in PACKAGES
        ]
    return found


@pytest.mark.parametrize("name", _public_modules())
def test_dir_lists_the_public_names_only(name: str) -> None:
    # What an IDE or a REPL completes on `module.`: `__all__` and the public subpackages, never
    # what the module imports for itself (`TYPE_CHECKING`, `Final`, `logging`) or its private
    # modules, whichever of them are loaded.
    module = importlib.import_module(name)
    for every in PACKAGES:
        importlib.import_module(every)
    subpackages = {one for one in PACKAGES if one.rpartition(".")[0] == name}
    shown = {one for one in dir(module) if not (one.startswith("__") and one.endswith("__"))}
    assert shown == set(module.__all__) - {"__version__"} | {
        one.rpartition(".")[2] for one in subpackages
    }


# The abstract bases the spec packages' models derive from: building blocks, not user API.
BASES = {"WireModel", "SomModel", "SomOpenModel", "FamilyModel", "MxModel"}


@pytest.mark.parametrize("name", EXPORTING)
def test_every_model_is_exported_and_every_name_documented(name: str) -> None:
    from envelopekit._model import WireModel

    package = importlib.import_module(name)
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg or info.name == "__main__":
            continue
        module = importlib.import_module(f"{name}.{info.name}")
        for attribute, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, WireModel)
                and value.__module__ == module.__name__
                and not attribute.startswith("_")
                # Not a parametrization pydantic filed under its name (BabelEnvelope[Any]).
                and attribute.isidentifier()
                and attribute not in BASES
            ):
                assert attribute in package.__all__, f"{module.__name__}.{attribute} not exported"
    for attribute in package.__all__:
        value = getattr(package, attribute)
        # A type alias (`Callable[...]`) is no class to document; Python 3.10's `isclass`
        # still says it is one (a `types.GenericAlias` passed `isinstance(x, type)` there).
        alias = isinstance(value, types.GenericAlias)
        if (inspect.isclass(value) and not alias) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name}.{attribute} has no docstring"


def test_the_exports_reader_refuses_what_a_type_checker_would_not_export() -> None:
    good = (
        "if TYPE_CHECKING:\n"
        "    from . import sub as sub\n"
        "    from ._a import (\n        A as A,  # why\n\n        b as b,\n    )\n"
        "else:\n"
        "    from ._c import C as C\n"
    )
    assert _exports.exported(good, "p") == {
        "sub": (".", "sub"),
        "A": ("._a", "A"),
        "b": ("._a", "b"),
    }
    with pytest.raises(ImportError, match="'A' is not written `Name as Name`"):
        _exports.exported("if TYPE_CHECKING:\n    from ._a import A\n", "p")
    with pytest.raises(ImportError, match="'A as B' is not written"):
        _exports.exported("if TYPE_CHECKING:\n    from ._a import A as B\n", "p")
    with pytest.raises(ImportError, match="no `if TYPE_CHECKING:` block"):
        _exports.exported("from ._a import A as A\n", "p")


def _in_a_fresh_interpreter(code: str) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_validating_babelqueue_does_not_load_the_toolkit() -> None:
    code = (
        "import sys; from envelopekit.babelqueue import BabelEnvelope; import envelopekit as ek; "
        "raw = BabelEnvelope.create('urn:babel:a:b', {}).to_json(); "
        "assert ek.check(raw, spec='babelqueue').ok; "
        "print(sorted(m for m in sys.modules if m.startswith('envelopekit.babelqueue.')))"
    )
    loaded = _in_a_fresh_interpreter(code)
    for toolkit in ("_bindings", "_routing", "_idempotency", "_payload_schema", "_traceparent"):
        assert toolkit not in loaded, loaded
    assert "_envelope" in loaded


def test_import_is_light() -> None:
    # `import envelopekit` must not build any model: the spec packages load on first use.
    code = (
        "import sys, envelopekit; "
        "print(any(m.startswith(('envelopekit.babelqueue', 'envelopekit.som', "
        "'envelopekit.matrix', 'pydantic.main')) for m in sys.modules))"
    )
    assert _in_a_fresh_interpreter(code) == "False"


@pytest.mark.parametrize("name", ["check", "detect"])
def test_the_first_use_of_check_or_detect_binds_every_name_and_removes_the_hook(
    name: str,
) -> None:
    # While a module's namespace holds `__getattr__`, CPython 3.11-3.13 never specialises an
    # attribute read on it: each `ek.check(...)` in a consumer's loop would pay for it.
    code = (
        "import dis, io, sys, envelopekit as ek\n"
        "before = '__getattr__' in vars(ek)\n"
        f"def read():\n    return ek.{name}\n"
        "for _ in range(1000):\n    read()\n"
        "out = io.StringIO()\n"
        "if sys.version_info >= (3, 11):\n    dis.dis(read, adaptive=True, file=out)\n"
        "print(before, '__getattr__' in vars(ek), all(n in vars(ek) for n in ek.__all__),\n"
        "      'LOAD_ATTR_MODULE' in out.getvalue() or sys.version_info < (3, 11))\n"
    )
    assert _in_a_fresh_interpreter(code) == "True False True True"


@pytest.mark.parametrize(
    "first",
    [
        "import envelopekit._check",  # imports `from . import rules` while half-built
        "from envelopekit import rules",
        "import envelopekit._cli",
        "import envelopekit as ek; ek.Violation",
        "import envelopekit as ek; ek.Settings",
    ],
)
def test_another_name_used_first_binds_only_itself(first: str) -> None:
    # Only `check`'s import loads nearly all that the other names need: a producer reading
    # `ek.Settings` loads no more than its module (`_check` among them, not before `check`).
    code = (
        f"{first}\nimport sys, envelopekit as ek\n"
        "kept = '__getattr__' in vars(ek)\n"
        "schema = 'envelopekit._schema' in sys.modules\n"
        "ek.check\n"
        "print(kept, schema, '__getattr__' in vars(ek))\n"
    )
    assert _in_a_fresh_interpreter(code) == "True False False"


def test_only_exported_names_may_bind_them_all(tmp_path: Path, monkeypatch: Any) -> None:
    package = tmp_path / "binds"
    package.mkdir()
    (package / "_a.py").write_text("A = 1\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ._a import A as A\n"
        "else:\n    from envelopekit._exports import attach\n"
        "    __all__, __getattr__, __dir__ = attach(__name__, binding_all={'B'})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"binds: \['B'\] not exported"):
        importlib.import_module("binds")


def test_a_lazy_package_keeps_its_hook_until_every_name_is_bound() -> None:
    code = (
        "import envelopekit.matrix as mx\n"
        "mx.MxRequest\n"
        "kept = '__getattr__' in vars(mx)\n"
        "for name in mx.__all__:\n    getattr(mx, name)\n"
        "print(kept, '__getattr__' in vars(mx))\n"
        "try:\n    mx.Nothing\nexcept AttributeError as error:\n    print(error)\n"
    )
    assert _in_a_fresh_interpreter(code) == (
        "True False\nmodule 'envelopekit.matrix' has no attribute 'Nothing'"
    )
