"""The wheel as ``pip install envelopekit`` gets it: built once per session, listed, installed.

The wheel must hold every file of ``src/envelopekit`` the repository tracks (the modules, whose
source ``_exports.attach`` reads, ``py.typed``, the shipped JSON Schemas and AsyncAPI
documents) and nothing else (no ``.pyc``, cache or test data), and declare the ``envelopekit``
console script. Installed into a fresh venv (its dependencies read from this one's
site-packages, whose editable ``.pth`` is not processed), its console script validates the
examples as this checkout does and writes again, from the installed models, exactly the
schemas and AsyncAPI documents the wheel ships. Put on ``sys.path`` as it is (a zip), it runs too.
"""

from __future__ import annotations

import email.parser
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = "src/envelopekit/"
# Offline (--no-index): the build backend and the dependencies are this venv's own.
PIP = [sys.executable, "-m", "pip", "--quiet"]


def _tracked() -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", PACKAGE],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return {"envelopekit/" + path[len(PACKAGE) :] for path in listed.split("\0") if path}


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, built once by its build backend (offline)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            *PIP,
            "wheel",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("envelopekit-*.whl")
    return built


@pytest.fixture(scope="session")
def contents(wheel: Path) -> dict[str, bytes]:
    """Each file of the wheel by its name."""
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _package_files(contents: dict[str, bytes]) -> set[str]:
    return {name for name in contents if not name.startswith("envelopekit-")}


def test_the_wheel_holds_every_tracked_file(contents: dict[str, bytes]) -> None:
    tracked = _tracked()
    assert {"envelopekit/py.typed", "envelopekit/__init__.py"} <= tracked
    assert any(name.endswith(".asyncapi.json") for name in tracked)
    assert any(name.endswith(".schema.json") for name in tracked)
    assert sorted(tracked - _package_files(contents)) == []


def test_the_wheel_holds_nothing_else(contents: dict[str, bytes]) -> None:
    assert sorted(_package_files(contents) - _tracked()) == []


def test_the_wheel_declares_the_console_script(contents: dict[str, bytes]) -> None:
    (entry_points,) = (n for n in contents if n.endswith(".dist-info/entry_points.txt"))
    lines = contents[entry_points].decode().splitlines()
    assert lines[lines.index("[console_scripts]") + 1] == "envelopekit = envelopekit._cli:main"


def test_the_wheel_declares_each_extra(contents: dict[str, bytes]) -> None:
    (metadata,) = (n for n in contents if n.endswith(".dist-info/METADATA"))
    parsed = email.parser.BytesParser().parsebytes(contents[metadata])
    extras = set(parsed.get_all("Provides-Extra") or ())
    assert {"schemas", "redis", "faststream", "testing"} <= extras


def _printed(python: Path, code: str) -> str:
    """What ``python -c code`` prints, stripped."""
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (pip, offline), its ``bin`` directory returned."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = _printed(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # This venv's site-packages as a plain path: its own .pth files (the editable install's
    # src/) are not processed, so envelopekit is found in the wheel only.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    subprocess.run(
        [
            *PIP,
            "--python",
            str(python),
            "install",
            "--no-index",
            "--no-deps",
            "--no-compile",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    where = _printed(python, "import envelopekit; print(envelopekit.__file__)")
    assert Path(where).is_relative_to(Path(site)), where
    return python.parent


def _cli(bin_directory: Path | None, *arguments: str) -> subprocess.CompletedProcess[bytes]:
    command = (
        [sys.executable, "-m", "envelopekit"]
        if bin_directory is None
        else [str(bin_directory / "envelopekit")]
    )
    return subprocess.run(
        [*command, *arguments], cwd=ROOT, capture_output=True, timeout=300, check=False
    )


def test_the_installed_console_script_validates_the_examples(installed: Path) -> None:
    ours = _cli(None, "validate", "examples/messages")
    theirs = _cli(installed, "validate", "examples/messages")
    assert ours.returncode in (0, 1), ours.stderr
    assert (theirs.returncode, theirs.stdout, theirs.stderr) == (
        ours.returncode,
        ours.stdout,
        ours.stderr,
    )


# What `make schemas` writes, each under the folder of the package it ships in.
WRITTEN = {
    "schemas": ["schema", "--out"],
    "schemas/draft-07": ["schema", "--draft", "07", "--out"],
    "asyncapi": ["asyncapi", "--out"],
}


@pytest.mark.parametrize("folder", list(WRITTEN))
def test_the_wheel_ships_what_the_installed_models_write(
    installed: Path, contents: dict[str, bytes], tmp_path: Path, folder: str
) -> None:
    done = _cli(installed, *WRITTEN[folder], str(tmp_path))
    assert done.returncode == 0, done.stderr
    written = {
        f"envelopekit/{folder}/{path.relative_to(tmp_path).as_posix()}": path.read_bytes()
        for path in tmp_path.rglob("*")
        if path.is_file()
    }
    assert written
    shipped = {
        name: data
        for name, data in contents.items()
        if name.startswith(f"envelopekit/{folder}/")
        and name.endswith(".json")
        and (folder != "schemas" or not name.startswith("envelopekit/schemas/draft-07/"))
    }
    assert sorted(shipped) == sorted(written)
    for name, data in written.items():
        assert shipped[name] == data, name


# envelopekit run from the wheel itself on sys.path (zipimport): its exports are read through
# the loader (`_exports.attach`), never from a path next to a module.
FROM_ZIP = """
import runpy, sys
import envelopekit
assert envelopekit.__file__.startswith(sys.argv[1]), envelopekit.__file__
sys.argv[:] = ["envelopekit", "validate", "examples/messages"]
runpy.run_module("envelopekit", run_name="__main__", alter_sys=True)
"""


def test_the_wheel_runs_as_a_zip(wheel: Path) -> None:
    ours = _cli(None, "validate", "examples/messages")
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    theirs = subprocess.run(
        [sys.executable, "-c", FROM_ZIP, str(wheel)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(wheel)},
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert (theirs.returncode, theirs.stdout, theirs.stderr) == (
        ours.returncode,
        ours.stdout,
        ours.stderr,
    )
