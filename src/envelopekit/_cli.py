"""The ``envelopekit`` command line: ``validate`` messages and write the JSON ``schema`` files.

Inputs stream: a JSON file is one message, an ``.ndjson``/``.jsonl`` file and standard input
(``-``) are one message a line, and a directory is every such file below it, in name order.
Nothing but the current line is held in memory, so a multi-gigabyte NDJSON file runs flat.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

import orjson

from . import __version__, _cli_compat, _cli_redrive
from ._check import SPECS, check
from ._settings import get_settings
from ._violations import Verdict

__all__ = ["main"]

EXIT_VALID: Final = 0
EXIT_INVALID: Final = 1
EXIT_USAGE: Final = 2

LINE_SUFFIXES: Final = frozenset({".ndjson", ".jsonl"})
MESSAGE_SUFFIXES: Final = frozenset({".json"}) | LINE_SUFFIXES
WRITE_BATCH: Final = 256
# Below this much input (a few thousand messages) a progress bar is noise.
PROGRESS_MIN_BYTES: Final = 1024 * 1024
# The bar moves in about this many steps over the input, each from 16 KiB to 1 MiB of it, and
# redraws this often a second (rich's default, 10, cost about 1% of a run).
PROGRESS_STEPS: Final = 256
PROGRESS_MIN_STEP: Final = 16 * 1024
PROGRESS_MAX_STEP: Final = 1024 * 1024
PROGRESS_REFRESH: Final = 4


class UsageError(Exception):
    """A path that cannot be read, or arguments that make no sense (exit status 2)."""


class Message(NamedTuple):
    """One message to validate and where it came from (``file`` or ``file:line``)."""

    source: str
    raw: bytes


@dataclass
class Summary:
    """Counts over a run."""

    valid: int = 0
    invalid: int = 0
    warned: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    warnings: Counter[str] = field(default_factory=Counter)

    def add(self, verdict: Verdict[Any]) -> None:
        """Count one verdict."""
        if verdict.ok:
            self.valid += 1
        else:
            self.invalid += 1
            self.rules.update(verdict.rules())
        if verdict.warnings:
            self.warned += 1
            self.warnings.update(list(dict.fromkeys(w.rule for w in verdict.warnings)))

    @property
    def total(self) -> int:
        """How many messages were checked."""
        return self.valid + self.invalid


# --- inputs ---------------------------------------------------------------------------------


def _files(target: Path) -> Iterator[Path]:
    if target.is_dir():
        found = [
            p for p in sorted(target.rglob("*")) if p.is_file() and p.suffix in MESSAGE_SUFFIXES
        ]
        if not found:
            # "0 messages, all valid" would read as a pass for a path that holds nothing.
            raise UsageError(f"no .json, .ndjson or .jsonl files under {target}")
        yield from found
    elif target.is_file():
        yield target
    else:
        raise UsageError(f"no such file or directory: {target}")


def _lines(stream: IO[bytes], name: str) -> Iterator[Message]:
    for number, line in enumerate(stream, start=1):
        body = line.strip()
        if body:
            yield Message(f"{name}:{number}", body)


def _messages(paths: Sequence[str], stdin: IO[bytes], progress: _Progress) -> Iterator[Message]:
    for entry in paths or ["-"]:
        if entry == "-":
            for message in _lines(stdin, "<stdin>"):
                progress.advance(len(message.raw) + 1)
                yield message
            continue
        for path in _files(Path(entry)):
            yield from _file_messages(path, progress)


def _file_messages(path: Path, progress: _Progress) -> Iterator[Message]:
    try:
        if path.suffix in LINE_SUFFIXES:
            with path.open("rb") as stream:
                for message in _lines(stream, str(path)):
                    progress.advance(len(message.raw) + 1)
                    yield message
        else:
            raw = path.read_bytes()
            progress.advance(len(raw))
            yield Message(str(path), raw)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _input_bytes(paths: Sequence[str], stdin: IO[bytes]) -> int:
    total = 0
    for entry in paths or ["-"]:
        if entry == "-":
            # Known only when stdin is a file redirected in, not a pipe.
            with suppress(OSError, ValueError):
                status = os.fstat(stdin.fileno())
                if stat.S_ISREG(status.st_mode):
                    total += status.st_size
            continue
        target = Path(entry)
        if target.is_file():
            total += target.stat().st_size
        elif target.is_dir():
            total += sum(p.stat().st_size for p in _files(target))
    return total


class _Progress:
    """A rich progress bar on stderr, only on a terminal and only for large inputs."""

    def __init__(self, total: int, enabled: bool) -> None:
        self._bar: Any = None
        self._task: Any = None
        # rich's advance() takes a lock and records a speed sample: called per message it cost
        # more than validating one (bench/run.py); bytes are handed over in steps instead.
        self._step = min(max(total // PROGRESS_STEPS, PROGRESS_MIN_STEP), PROGRESS_MAX_STEP)
        self._pending = 0
        self._context: AbstractContextManager[Any] = nullcontext()
        if enabled and total >= PROGRESS_MIN_BYTES:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
                refresh_per_second=PROGRESS_REFRESH,
            )
            self._task = self._bar.add_task("validating", total=total)
            self._context = self._bar

    def __enter__(self) -> _Progress:
        self._context.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._flush()
        self._context.__exit__(None, None, None)

    def advance(self, size: int) -> None:
        """Record ``size`` more bytes read."""
        if self._bar is not None:
            self._pending += size
            if self._pending >= self._step:
                self._flush()

    def _flush(self) -> None:
        if self._bar is not None and self._pending:
            self._bar.advance(self._task, self._pending)
            self._pending = 0


# --- output ---------------------------------------------------------------------------------


def _text(message: Message, verdict: Verdict[Any]) -> str:
    mark = "valid  " if verdict.ok else "INVALID"
    lines = [f"{mark} {message.source} ({verdict.spec})"]
    lines.extend(
        f"    {v.rule:<40} {v.pointer or '(document)':<28} {v.message}" for v in verdict.violations
    )
    lines.extend(
        f"  ! {w.rule:<40} {w.pointer or '(document)':<28} {w.message}" for w in verdict.warnings
    )
    return "\n".join(lines) + "\n"


def _json(message: Message, verdict: Verdict[Any]) -> bytes:
    if verdict.ok and not verdict.warnings:
        # The common line, without building and encoding a dict.
        return b'{"source":' + orjson.dumps(message.source) + _CLEAN[verdict.spec]
    return _json_full(message, verdict)


def _json_full(message: Message, verdict: Verdict[Any]) -> bytes:
    return (
        orjson.dumps(
            {
                "source": message.source,
                "ok": verdict.ok,
                "spec": verdict.spec,
                "violations": [v.to_dict() for v in verdict.violations],
                "warnings": [w.to_dict() for w in verdict.warnings],
            }
        )
        + b"\n"
    )


_CLEAN: Final[dict[str, bytes]] = {
    spec: b',"ok":true,"spec":"' + spec.encode() + b'","violations":[],"warnings":[]}\n'
    for spec in SPECS
}


def _summary_text(summary: Summary) -> str:
    lines = [
        f"{summary.total} message{'s' if summary.total != 1 else ''}: "
        f"{summary.valid} valid, {summary.invalid} invalid, {summary.warned} with warnings"
    ]
    if summary.rules:
        lines.append("violations by rule:")
        lines.extend(f"  {count:>8}  {rule}" for rule, count in summary.rules.most_common())
    if summary.warnings:
        lines.append("warnings by rule:")
        lines.extend(f"  {count:>8}  {rule}" for rule, count in summary.warnings.most_common())
    return "\n".join(lines) + "\n"


# --- commands -------------------------------------------------------------------------------


def _validate(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    settings = get_settings()
    if args.duplicate_keys is not None:
        settings = settings.model_copy(update={"duplicate_keys": args.duplicate_keys})
    summary = Summary()
    as_json = args.format == "json"
    spec: str = args.spec
    total = _input_bytes(args.paths, sys.stdin.buffer)
    pending: list[bytes] = []
    with _Progress(total, enabled=stderr.isatty()) as progress:
        for message in _messages(args.paths, sys.stdin.buffer, progress):
            verdict = check(message.raw, spec, settings=settings)
            summary.add(verdict)
            pending.append(
                _json(message, verdict) if as_json else _text(message, verdict).encode("utf-8")
            )
            # One write per batch: a write per message costs more than validating it.
            if len(pending) >= WRITE_BATCH:
                stdout.write(b"".join(pending))
                pending.clear()
    stdout.write(b"".join(pending))
    if as_json:
        stderr.write(_summary_text(summary))
    else:
        stdout.write(b"\n" + _summary_text(summary).encode("utf-8"))
    return EXIT_INVALID if summary.invalid else EXIT_VALID


def _schema(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from ._schema import SCHEMA_NAMES, json_schema, write_schemas

    specs = SPECS if args.spec == "all" else (args.spec,)
    if args.out is not None:
        for path in write_schemas(Path(args.out), specs):
            stderr.write(f"wrote {path}\n")
        return EXIT_VALID
    documents = {spec: {n: json_schema(spec, n) for n in SCHEMA_NAMES[spec]} for spec in specs}
    stdout.write(orjson.dumps(documents, option=orjson.OPT_INDENT_2) + b"\n")
    return EXIT_VALID


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="envelopekit",
        description="Validate BabelQueue, SOM and Matrix messages; write their JSON Schemas.",
    )
    parser.add_argument("--version", action="version", version=f"envelopekit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser(
        "validate",
        help="validate messages and print a verdict per message",
        description="Exit status: 0 all valid, 1 at least one invalid, 2 usage or I/O error.",
    )
    validate.add_argument(
        "--spec", choices=("auto", *SPECS), default="auto", help="the spec (default: auto)"
    )
    validate.add_argument(
        "--format", choices=("text", "json"), default="text", help="output (default: text)"
    )
    validate.add_argument(
        "--duplicate-keys",
        choices=("allow", "warn", "refuse"),
        help="objects that repeat a member name (json.duplicate_key); default: the "
        "ENVELOPEKIT_DUPLICATE_KEYS setting, else allow",
    )
    validate.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="JSON or NDJSON files, directories of them, or - for NDJSON on stdin (default)",
    )
    schema = commands.add_parser("schema", help="print or write the generated JSON Schemas")
    schema.add_argument("--spec", choices=("all", *SPECS), default="all")
    schema.add_argument("--out", metavar="DIR", help="write <DIR>/<spec>/<name>.schema.json")
    _cli_redrive.add_parser(commands)
    _cli_compat.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    stdout = sys.stdout.buffer
    try:
        if args.command == "validate":
            return _validate(args, stdout, sys.stderr)
        if args.command == "redrive":
            return _cli_redrive.run(args, sys.stdin.buffer, stdout, sys.stderr)
        if args.command == "compat":
            return _cli_compat.run(args, stdout, sys.stderr)
        return _schema(args, stdout, sys.stderr)
    except UsageError as exc:
        sys.stderr.write(f"envelopekit: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours.
        sys.stderr.close()
        return EXIT_VALID
    finally:
        with suppress(BrokenPipeError):
            stdout.flush()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
