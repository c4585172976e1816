"""Every Python example in the README runs as written, in order, each as its own module."""

from __future__ import annotations

import linecache
import re
import sys
import types
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block-{i}" for i in range(len(BLOCKS))])
def test_readme_block_asserts_what_it_shows(code: str) -> None:
    # A block that only runs proves it does not crash; each also checks what it claims.
    assert re.search(r"^\s*assert\b", code, re.M), code


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block-{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    # A real module, so pydantic can resolve generics over classes the example defines.
    name = f"readme_example_{BLOCKS.index(code)}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    # The block's own text under its own name, so `inspect.getsource` (hypothesis calls it on
    # a decorated test) reads the block, not README.md from its first line.
    filename = f"<README.md {name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    try:
        exec(compile(code, filename, "exec"), module.__dict__)
    finally:
        del sys.modules[name]
        linecache.cache.pop(filename, None)
