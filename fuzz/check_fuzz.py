"""atheris: the campaign's oracles on mutated bytes, for long runs outside CI (``make fuzz``).

The oracles are those of ``tests/test_check_properties.py`` (``check`` never raises, pointers
resolve, ``ok`` iff no violation, re-encoding is accepted and equal, ``check`` agrees with
``model_validate_json``; ``Router.dispatch`` never raises and republishes what ``check``
accepts, near the size limit too, with handler texts past the dead letter's cut), with
repeated names allowed, noted or refused (:data:`MODES`). The corpus starts from the vendored
messages of the three specs; a crash is written by libFuzzer as ``crash-<sha1>`` in the
working directory.

    make fuzz                       # FUZZ_SECONDS=600 by default
    .venv/bin/python fuzz/check_fuzz.py -max_total_time=60 -workers=2 .fuzz/corpus
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["envelopekit"]):
    from envelopekit import SPECS as _NAMES
    from envelopekit import Settings
    from envelopekit._check import spec_named
    from envelopekit.babelqueue import Router  # noqa: F401

    for _name in _NAMES:  # the specs load lazily: load them while instrumenting
        spec_named(_name)

from tests.test_check_properties import (  # noqa: E402
    ATTEMPTS,
    DATA,
    GAPS,
    NEAR,
    NEAR_ROUTER,
    SHOUTS,
    dispatch_oracle,
    near_limit,
    oracles,
    with_attempts,
)

SPECS = ("auto", "babelqueue", "som", "matrix")
# Repeated names allowed (the default), noted, or refused, the last with caps the messages
# reach (one finding kept, four levels): the first byte picks (its 20s).
MODES = (
    None,
    Settings(duplicate_keys="warn"),
    Settings(duplicate_keys="refuse"),
    Settings(duplicate_keys="refuse", max_violations=1, max_depth=4),
)
CORPUS = ROOT / ".fuzz" / "corpus"


def one_input(data: bytes) -> None:
    """One fuzz input: its first byte picks the spec and the duplicate-key mode.

    The rest is the message. For the Router, the first byte also says whether ``attempts`` is
    set, and to what (near the int64 maximum too); the second says how near the size limit the
    message is padded, how long its handler's failure text is and its ``attempts``.
    """
    if not data:
        return
    spec = SPECS[data[0] % len(SPECS)]
    raw = data[1:]
    oracles(raw, spec, MODES[data[0] // 20 % len(MODES)])
    if spec in ("auto", "babelqueue"):
        dispatch_oracle(raw)
        pick = data[0] // len(SPECS) % (len(ATTEMPTS) + 1)
        if pick:
            dispatch_oracle(with_attempts(raw, ATTEMPTS[pick - 1]))
        near = raw[0] if raw else 0
        gap, near = GAPS[near % len(GAPS)], near // len(GAPS)
        shout, near = SHOUTS[near % len(SHOUTS)], near // len(SHOUTS)
        attempts = ATTEMPTS[near % len(ATTEMPTS)]
        dispatch_oracle(near_limit(raw, gap, shout, attempts), NEAR_ROUTER, NEAR)


def seed_corpus() -> Path:
    """The vendored messages, each prefixed by the byte that picks ``auto``."""
    CORPUS.mkdir(parents=True, exist_ok=True)
    for path in sorted(DATA.rglob("*.json")):
        target = CORPUS / f"{path.parent.name}-{path.name}"
        if not target.exists():
            target.write_bytes(b"\x00" + path.read_bytes())
    return CORPUS


def main() -> None:
    """Run libFuzzer; with no corpus directory given, the seeded one."""
    args = sys.argv
    if not any(not arg.startswith("-") for arg in args[1:]):
        args = [*args, str(seed_corpus())]
    if shutil.which("true") is None:  # pragma: no cover - libFuzzer forks helpers
        raise SystemExit("a POSIX environment is needed")
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
