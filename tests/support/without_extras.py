"""envelopekit as ``pip install envelopekit`` (or with some extras) leaves it, in this venv.

:func:`beyond` names every distribution (and its top-level modules) the dev venv holds beyond
what installing some requirements brings: by default the core install, so the extras' own and
their dependencies, and the dev tools. A copy of this file written as ``sitecustomize.py`` on
``PYTHONPATH`` (:func:`blocking_env`) makes them absent in that Python and in every process it
starts (the CLI's ``--jobs`` workers): ``import`` raises the import system's
``ModuleNotFoundError``, ``importlib.util.find_spec`` answers ``None`` and
:mod:`importlib.metadata` finds no distribution, as when the package was never installed."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any, NamedTuple

_VARIABLE = "ENVELOPEKIT_TEST_REFUSED"


class Refused(NamedTuple):
    """What a subprocess must not find: top-level module names, canonical distribution names."""

    modules: frozenset[str]
    distributions: frozenset[str]


class Refuse(importlib.abc.MetaPathFinder):
    """One finder of ``sys.meta_path``, blind to the refused modules and distributions."""

    def __init__(self, finder: Any, refused: Refused) -> None:
        self.finder = finder
        self.refused = refused

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        find = getattr(self.finder, "find_spec", None)
        if find is None or fullname.partition(".")[0] in self.refused.modules:
            return None
        spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target)
        return spec

    def find_distributions(self, *args: Any, **kwargs: Any) -> Iterable[Any]:
        find = getattr(self.finder, "find_distributions", None)
        for found in () if find is None else find(*args, **kwargs):
            name = str(found.metadata["Name"] or "")
            if _canonical(name) not in self.refused.distributions:
                yield found

    def invalidate_caches(self) -> None:
        invalidate = getattr(self.finder, "invalidate_caches", None)
        if invalidate is not None:
            invalidate()


def _canonical(name: str) -> str:
    # packaging.utils.canonicalize_name, which the subprocess cannot import (it is refused).
    return "-".join(name.replace("_", "-").replace(".", "-").lower().split("-"))


def install(refused: Refused) -> None:
    """Refuse from now on (a module a ``.pth`` imported at startup stays: the probes import
    each extra's modules first, to see them refused)."""
    sys.meta_path[:] = [Refuse(finder, refused) for finder in sys.meta_path]


def beyond(*roots: str) -> Refused:
    """Every installed distribution outside what installing ``roots`` brings (recursively).

    Args:
        roots: requirements as a user writes them (``envelopekit``, ``envelopekit[redis]``,
            ``faststream[rabbit]``), each with its extras' requirements.
    """
    from importlib import metadata

    from packaging.requirements import Requirement

    kept: set[str] = set()
    seen: set[tuple[str, str]] = set()
    pending = [Requirement(root) for root in roots or ("envelopekit",)]
    while pending:
        wanted = pending.pop()
        name = _canonical(wanted.name)
        kept.add(name)
        for extra in ("", *sorted(wanted.extras)):
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            for line in metadata.requires(name) or ():
                requirement = Requirement(line)
                marker = requirement.marker
                if marker is None or marker.evaluate({"extra": extra}):
                    if extra and (marker is None or marker.evaluate({"extra": ""})):
                        continue  # a core requirement, walked with extra ""
                    pending.append(requirement)
    installed = {_canonical(str(d.metadata["Name"])) for d in metadata.distributions()}
    return Refused(
        frozenset(
            module
            for module, distributions in _packages_distributions().items()
            if module.isidentifier()
            and module != "envelopekit"
            and not any(_canonical(d) in kept for d in distributions)
        ),
        frozenset(installed - kept),
    )


def _packages_distributions() -> dict[str, list[str]]:
    """Each top-level module name and the distributions holding it.

    ``importlib.metadata.packages_distributions`` as Python 3.11 has it: a distribution's
    ``top_level.txt``, or, without one (hatchling and others write none), the first part of
    each of its files' paths; Python 3.10's reads ``top_level.txt`` alone, so that it missed
    jsonschema, redis and the others there.
    """
    import inspect
    from importlib import metadata

    found: dict[str, list[str]] = {}
    for distribution in metadata.distributions():
        declared = (distribution.read_text("top_level.txt") or "").split()
        names = declared or {
            path.parts[0] if len(path.parts) > 1 else inspect.getmodulename(str(path)) or ""
            for path in distribution.files or ()
        }
        for name in names:
            if name and "." not in name:
                found.setdefault(name, []).append(str(distribution.metadata["Name"]))
    return found


def blocking_env(directory: str, refused: Refused) -> dict[str, str]:
    """The environment of a subprocess in which ``refused`` is not installed.

    Writes this file as ``<directory>/sitecustomize.py``, which ``site`` imports at startup.
    """
    with open(__file__, encoding="utf-8") as source:
        text = source.read()
    with open(os.path.join(directory, "sitecustomize.py"), "w", encoding="utf-8") as target:
        target.write(text)
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    env["PYTHONPATH"] = directory
    env[_VARIABLE] = json.dumps([sorted(refused.modules), sorted(refused.distributions)])
    return env


if __name__ == "sitecustomize":  # pragma: no cover - runs in the subprocesses only
    _modules, _distributions = json.loads(os.environ[_VARIABLE])
    install(Refused(frozenset(_modules), frozenset(_distributions)))
