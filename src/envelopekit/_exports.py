"""The one export pattern of envelopekit's packages: each public name written once, loaded on use.

A package's ``__init__`` lists its public names in one ``if TYPE_CHECKING:`` block of
``from .module import Name as Name`` lines (the redundant alias is the typing spec's explicit
re-export, which mypy and basedpyright read), and hands its runtime side to :func:`attach`::

    if TYPE_CHECKING:
        from ._check import check as check
    else:
        __all__, __getattr__, __dir__ = attach(__name__)

:func:`attach` reads that same block from the package's source, so ``__all__``, the lazy
``__getattr__`` (PEP 562: a name's module is imported on first use, as pydantic's own names are)
and ``__dir__`` cannot drift from what the type checkers see. The hooks stay out of the type
checkers' view, so a misspelt import is a type error rather than ``Any``. The block is read with
two regular expressions, not :mod:`ast` (which would add more to ``import envelopekit`` than the
whole package costs); ``tests/test_public_api.py`` checks the result against an :mod:`ast` parse.

The hook removes itself once every name is bound, and the first use of ``envelopekit.check``
(or ``detect``) binds them all: CPython (3.11 to 3.13) never specialises an attribute read on
a module whose namespace holds ``__getattr__``, so while it is there each ``ek.check`` costs
about 20 ns more (bench/run.py: about 1.5% of a small message's ``check``).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Collection, Iterable
from types import ModuleType
from typing import Any

# The block: `if TYPE_CHECKING:` at the module's top level and its indented (or blank) lines.
_BLOCK = re.compile(r"^if TYPE_CHECKING:\n((?:[ \t]+\S.*\n|[ \t]*\n)+)", re.M)
# One `from .module import ...` statement, its names on one line or in parentheses.
_IMPORT = re.compile(r"from\s+(\.[\w.]*)\s+import\s+(\([^)]*\)|[^\n]*)")
_ALIAS = re.compile(r"^(\w+)\s+as\s+(\w+)$")


def exported(source: str, package: str) -> dict[str, tuple[str, str]]:
    """Each public name of a package's ``TYPE_CHECKING`` block -> (its module, its attribute).

    Raises:
        ImportError: the block is missing, or a name is imported without ``as Name`` (a type
            checker would take it for a private import).
    """
    block = _BLOCK.search(source)
    if block is None:
        raise ImportError(f"{package}: no `if TYPE_CHECKING:` block of exports")
    names: dict[str, tuple[str, str]] = {}
    for module, imported in _IMPORT.findall(re.sub(r"#[^\n]*", "", block.group(1))):
        for item in imported.strip("() \n").split(","):
            item = " ".join(item.split())
            if not item:
                continue
            alias = _ALIAS.match(item)
            if alias is None or alias.group(1) != alias.group(2):
                raise ImportError(f"{package}: export {item!r} is not written `Name as Name`")
            names[alias.group(2)] = (module, alias.group(1))
    return names


def attach(
    package: str, also: Iterable[str] = (), *, binding_all: Collection[str] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``, from its exports block.

    Args:
        package: the package's ``__name__``; its ``__init__`` is being executed.
        also: names the ``__init__`` itself defines that are public too (``__version__``).
        binding_all: names whose first use binds every name, so that the hook is gone from
            then on: a hot-path name whose import loads nearly all that the others need.
    """
    module = sys.modules[package]
    spec = module.__spec__
    # `get_data` reads a source file and a zip member alike (SourceFileLoader, zipimporter).
    loader: Any = None if spec is None else spec.loader
    if loader is None or module.__file__ is None:
        raise ImportError(f"{package}: its source is needed to read its exports")
    table = exported(loader.get_data(module.__file__).decode("utf-8"), package)
    if not table.keys() >= set(binding_all):
        raise ImportError(f"{package}: {sorted(set(binding_all) - table.keys())} not exported")
    names = [*table, *also]
    namespace = vars(module)

    def load(name: str) -> Any:
        where, attribute = table[name]
        if where == ".":
            value: Any = importlib.import_module(f".{attribute}", package)
        else:
            loaded = importlib.import_module(where, package)
            try:
                value = getattr(loaded, attribute)
            except AttributeError:
                # A submodule its package does not import (as `from m import sub` falls back).
                value = importlib.import_module(f"{where}.{attribute}", package)
        namespace[name] = value
        return value

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = load(name)
        if name in binding_all:
            for other in table:
                if other not in namespace:
                    load(other)
        if all(other in namespace for other in table):
            namespace.pop("__getattr__", None)  # another thread may have taken it out
        return value

    return names, __getattr__, listing(package, names)


def listing(module: str, names: Iterable[str]) -> Callable[[], list[str]]:
    """A public module's ``__dir__``: what a REPL or an IDE completes on ``module.``.

    Its public ``names``, the public subpackages loaded so far and the dunders; never what the
    module imports for itself (``TYPE_CHECKING``, ``Final``, ``logging``) nor its private
    modules, which ``dir()`` of the namespace lists once they are loaded.
    """
    namespace = vars(sys.modules[module])
    public = frozenset(names)

    def __dir__() -> list[str]:
        return sorted(
            public.union(
                name
                for name, value in namespace.items()
                if (name.startswith("__") and name.endswith("__"))
                or (
                    not name.startswith("_")
                    and isinstance(value, ModuleType)
                    and value.__name__ == f"{module}.{name}"
                )
            )
        )

    return __dir__
