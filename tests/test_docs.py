"""Documentation that runs: every example in envelopekit's docstrings, and the architecture page.

Two kinds of example live in docstrings: ``>>>`` sessions (run by :mod:`doctest`, which checks
each printed value) and fenced ``python`` blocks (run here, each asserting what it shows). A
docstring example that stops working, or a block that shows without asserting, fails here.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
import pydoc
import re
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

import envelopekit
from tests.test_public_api import _public_modules

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "envelopekit"
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def _modules() -> list[types.ModuleType]:
    names = ["envelopekit"] + [
        info.name
        for info in pkgutil.walk_packages(envelopekit.__path__, "envelopekit.")
        if not info.name.endswith("__main__")  # running it is the CLI
    ]
    return [importlib.import_module(name) for name in names]


def _fenced() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        nodes = [tree] + [
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        for node in nodes:
            for index, block in enumerate(FENCE.findall(ast.get_docstring(node) or "")):
                where = f"{path.relative_to(SOURCE)}:{getattr(node, 'name', '')}:{index}"
                found.append((where, textwrap.dedent(block)))
    return found


FENCED = _fenced()
DOCTESTS = [
    test
    for module in _modules()
    for test in doctest.DocTestFinder(exclude_empty=True).find(module)
    if test.examples
]


def test_the_examples_are_found() -> None:
    assert len(FENCED) >= 20
    assert len(DOCTESTS) >= 5


@pytest.mark.parametrize(("where", "block"), FENCED, ids=[w for w, _ in FENCED])
def test_fenced_example_runs_and_asserts(where: str, block: str) -> None:
    code = compile(block, f"<docstring {where}>", "exec")
    assert any(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(block))), (
        f"{where}: the example shows but asserts nothing"
    )
    exec(code, {"__name__": f"docstring_example_{where}"})


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_doctest_example_runs(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    result = runner.run(test, out=lambda text: None)
    assert result.failed == 0, f"{test.name}: {result.failed} of {result.attempted} failed"


def test_the_architecture_page_links_resolve() -> None:
    page = ROOT / "docs" / "ARCHITECTURE.md"
    links = re.findall(r"\]\((\.\./[^)#]+)\)", page.read_text("utf-8"))
    assert len(links) >= 15
    for link in links:
        assert (page.parent / link).resolve().exists(), link


# --- what help() shows names public things only --------------------------------------------------

# A private module, named in full or alone (`envelopekit._violations.rule_error`,
# `_failfast.restored`): what a user cannot import, nor find in the documentation.
_PRIVATE_MODULES = sorted(
    {
        info.name.rpartition(".")[2]
        for info in pkgutil.walk_packages(envelopekit.__path__, "envelopekit.")
        if re.fullmatch(r"_[a-z]\w*", info.name.rpartition(".")[2])
    },
    key=len,
    reverse=True,
)
PRIVATE_PATH = re.compile(
    rf"(?<![\w.])(?:envelopekit(?:\.[a-z]\w*)*\.)?(?:{'|'.join(_PRIVATE_MODULES)})(?![\w(])"
)


def _ours(value: object) -> bool:
    return str(getattr(value, "__module__", None) or "").startswith("envelopekit")


def _docstrings(value: object) -> Iterator[tuple[str, str | None]]:
    """What ``help(value)`` shows of envelopekit's words: its docstring, its methods', fields'."""
    yield "", getattr(value, "__doc__", None) if callable(value) else None
    if not inspect.isclass(value):
        return
    for cls in value.__mro__:
        if not _ours(cls):
            continue
        for name, member in vars(cls).items():
            function = (
                member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
            )
            if pydoc.visiblename(name, obj=value) and (
                inspect.isfunction(function) or isinstance(function, property)
            ):
                yield f".{name}", function.__doc__
    if issubclass(value, BaseModel):  # field docstrings: JSON Schema's and OpenAPI's words too
        for name, field in value.model_fields.items():
            yield f".{name}", field.description


def _public_names() -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for name in _public_modules():
        module = importlib.import_module(name)
        found.append((name, module))
        for public in module.__all__:
            value = getattr(module, public)
            if not isinstance(value, types.ModuleType):
                found.append((f"{name}.{public}", value))
    return found


PUBLIC_NAMES = _public_names()


def test_the_docstrings_of_the_public_names_are_read() -> None:
    read = [
        doc
        for name, value in PUBLIC_NAMES
        for _, doc in (
            [("", value.__doc__)] if isinstance(value, types.ModuleType) else _docstrings(value)
        )
        if doc
    ]
    assert len(read) > 800
    assert PRIVATE_PATH.search("(``envelopekit._violations.rule_error``)")
    assert PRIVATE_PATH.search("(``_failfast.restored``)")
    assert not PRIVATE_PATH.search("a model's ``_notes()``, ``__schema_name__``, ``_actors``")


@pytest.mark.parametrize(("name", "value"), PUBLIC_NAMES, ids=[name for name, _ in PUBLIC_NAMES])
def test_a_public_docstring_names_no_private_module(name: str, value: object) -> None:
    # help() is a user's documentation: a private module is nothing they can import or look up.
    docs = [("", value.__doc__)] if isinstance(value, types.ModuleType) else _docstrings(value)
    named = [
        f"{name}{where}: {found.group()}"
        for where, doc in docs
        for found in PRIVATE_PATH.finditer(doc or "")
    ]
    assert named == []


_KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def _changelog_sections() -> list[tuple[str, str, list[str]]]:
    """(release, kind, its lines after the heading) for each ``###`` section of CHANGELOG.md."""
    found: list[tuple[str, str, list[str]]] = []
    release = ""
    for line in (ROOT / "CHANGELOG.md").read_text("utf-8").splitlines():
        if line.startswith("## "):
            release = line[3:]
        elif line.startswith("### "):
            found.append((release, line[4:], []))
        elif found and found[-1][0] == release:
            found[-1][2].append(line)
    return found


def test_the_changelog_keeps_its_kinds_in_order_and_its_entries_together() -> None:
    # Keep a Changelog: each release's kinds once, in their order; an entry is a list item, and a
    # blank line inside a kind's list means a lost heading (entries filed under the kind above).
    sections = _changelog_sections()
    assert sections and sections[0][0] == "[Unreleased]"
    releases = dict.fromkeys(release for release, _, _ in sections)
    for release in releases:
        kinds = [kind for seen, kind, _ in sections if seen == release]
        assert all(kind in _KINDS for kind in kinds), (release, kinds)
        assert kinds == sorted(set(kinds), key=_KINDS.index), (release, kinds)
    for release, kind, lines in sections:
        body = "\n".join(lines).strip("\n")
        assert body.startswith("- "), (release, kind)
        assert "\n\n" not in body, (release, kind, body[: body.index("\n\n")][-200:])
