"""Documentation that runs: every example in envelopekit's docstrings, and the architecture page.

Two kinds of example live in docstrings: ``>>>`` sessions (run by :mod:`doctest`, which checks
each printed value) and fenced ``python`` blocks (run here, each asserting what it shows). A
docstring example that stops working, or a block that shows without asserting, fails here.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import re
import textwrap
import types
from pathlib import Path

import pytest

import envelopekit

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
