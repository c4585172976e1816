"""``envelopekit redrive``: a dead-letter feed in, redriven messages and kept messages out.

The feed is NDJSON (a file, or ``-`` for standard input; a ``.json`` file is one message).
Redriven bodies go to ``--out`` (standard output by default), one a line, byte for byte what
the official Python redrive publishes; every other line goes to ``--kept`` exactly as read, so
nothing is ever lost. A line per message on standard error says what happened to it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Final

from ._json import dumps
from .babelqueue._dead_letter import DeadLetter
from .babelqueue._envelope import BabelEnvelope
from .babelqueue._redrive import Kept, Redriven, redrive

__all__ = ["add_parser", "run"]

EXIT_DONE: Final = 0
EXIT_INVALID: Final = 1
EXIT_USAGE: Final = 2


class RedriveUsageError(Exception):
    """Arguments that make no sense, or a path that cannot be read or written (exit 2)."""


def add_parser(commands: Any) -> None:
    """Register ``redrive`` on the ``envelopekit`` sub-command parsers."""
    parser = commands.add_parser(
        "redrive",
        help="redrive dead-lettered messages from an NDJSON feed",
        description=(
            "Reset dead-lettered BabelQueue messages for reprocessing (dead_letter removed, "
            "attempts 0, everything else verbatim) and write them to --out; write every other "
            "message to --kept unchanged. Exit status: 0 done, 1 some messages were not "
            "BabelQueue v1 envelopes (kept), 2 usage or I/O error."
        ),
    )
    parser.add_argument(
        "feed", nargs="?", default="-", metavar="FEED", help="NDJSON file, or - (default)"
    )
    parser.add_argument("--out", default="-", metavar="FILE", help="redriven bodies (default -)")
    parser.add_argument(
        "--kept", metavar="FILE", help="messages left untouched, byte-identical (required)"
    )
    parser.add_argument("--urn", action="append", default=[], help="only this URN (repeatable)")
    parser.add_argument(
        "--reason", action="append", default=[], help="only this dead_letter.reason (repeatable)"
    )
    parser.add_argument(
        "--since", metavar="TIME", help="only dead_letter.failed_at >= TIME (Unix ms or ISO 8601)"
    )
    parser.add_argument(
        "--until", metavar="TIME", help="only dead_letter.failed_at < TIME (Unix ms or ISO 8601)"
    )
    parser.add_argument("--max", type=int, default=0, help="redrive at most N (0: no limit)")
    parser.add_argument("--to-queue", metavar="QUEUE", help="republish here (a sandbox replay)")
    parser.add_argument(
        "--records",
        action="store_true",
        help='write {"queue","headers","body"} lines instead of bare bodies',
    )
    parser.add_argument(
        "--bypass",
        action="store_true",
        help="a replay: stamp the bq-replay-bypass header (needs --records to carry it)",
    )
    parser.add_argument("--dry-run", action="store_true", help="report the plan; redrive nothing")


@dataclass(frozen=True, slots=True)
class _Filter:
    urns: frozenset[str]
    reasons: frozenset[str]
    since: int | None
    until: int | None

    def __call__(self, envelope: BabelEnvelope[Any]) -> bool:
        if self.urns and envelope.job not in self.urns:
            return False
        block = envelope.dead_letter
        dead_letter = block if isinstance(block, DeadLetter) else None
        if self.reasons and (dead_letter is None or dead_letter.reason not in self.reasons):
            return False
        if self.since is None and self.until is None:
            return True
        if dead_letter is None:  # no failure time to compare
            return False
        failed_at = dead_letter.failed_at
        if self.since is not None and failed_at < self.since:
            return False
        return self.until is None or failed_at < self.until


def _time(text: str | None, flag: str) -> int | None:
    if text is None:
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise RedriveUsageError(
            f"{flag} {text!r} is neither Unix milliseconds nor an ISO 8601 time"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _feed(entry: str, stdin: IO[bytes] | None) -> Iterator[tuple[str, bytes]]:
    if entry == "-":
        if stdin is None:  # started with `<&-`
            raise RedriveUsageError("standard input is closed")
        try:
            yield from _lines(stdin, "<stdin>")
        except OSError as exc:
            raise RedriveUsageError(f"cannot read <stdin>: {exc.strerror or exc}") from exc
        return
    path = Path(entry)
    try:
        if path.suffix == ".json":
            yield str(path), path.read_bytes()
            return
        with path.open("rb") as stream:
            yield from _lines(stream, str(path))
    except OSError as exc:
        raise RedriveUsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _lines(stream: IO[bytes], name: str) -> Iterator[tuple[str, bytes]]:
    for number, line in enumerate(stream, start=1):
        # Only the line terminator goes: a kept line is written back exactly as it was read.
        body = line[:-1] if line.endswith(b"\n") else line
        if body.strip():
            yield f"{name}:{number}", body


class _Sink:
    """An output of the run: a write that fails (a full disk) is a usage error naming it."""

    def __init__(self, stream: IO[bytes], name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, data: bytes) -> None:
        try:
            self._stream.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise RedriveUsageError(f"cannot write {self._name}: {exc.strerror or exc}") from exc

    def flush(self) -> None:
        """Write what is buffered: a file's last lines fail here, not at its close."""
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise RedriveUsageError(f"cannot write {self._name}: {exc.strerror or exc}") from exc


def _open(stack: ExitStack, target: str, stdout: IO[bytes]) -> _Sink:
    if target == "-":
        return _Sink(stdout, "the output")
    try:
        stream = Path(target).open("wb")  # noqa: SIM115 - closed by the stack
    except OSError as exc:
        raise RedriveUsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    # Flushed on the way out when the run finished; closed quietly when it did not (an error
    # already being reported).
    stack.callback(_close_quietly, stream)
    return _Sink(stream, target)


def _close_quietly(stream: IO[bytes]) -> None:
    with suppress(OSError):
        stream.close()


def _record(done: Redriven) -> bytes:
    return dumps(
        {"queue": done.queue, "headers": dict(done.headers), "body": done.body().decode("utf-8")}
    )


def run(
    args: argparse.Namespace, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: IO[str]
) -> int:
    """Run ``redrive`` with parsed ``args``; returns the exit status."""
    try:
        return _run(args, stdin, stdout, stderr)
    except RedriveUsageError as exc:
        stderr.write(f"envelopekit redrive: {exc}\n")
        return EXIT_USAGE


def _run(
    args: argparse.Namespace, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: IO[str]
) -> int:
    if args.bypass and not args.records:
        raise RedriveUsageError(
            "--bypass stamps a transport header, which bare bodies cannot carry: add --records"
        )
    if args.kept is None and not args.dry_run:
        raise RedriveUsageError(
            "--kept FILE is required: what is not redriven goes back to the dead-letter queue"
        )
    if args.max < 0:
        raise RedriveUsageError("--max must be 0 (no limit) or more")
    select = _Filter(
        frozenset(args.urn),
        frozenset(args.reason),
        _time(args.since, "--since"),
        _time(args.until, "--until"),
    )
    redriven = kept = invalid = planned = 0
    with ExitStack() as stack:
        out = None if args.dry_run else _open(stack, args.out, stdout)
        kept_out = None if args.kept is None else _open(stack, args.kept, stdout)
        for source, raw in _feed(args.feed, stdin):
            limited = bool(args.max) and redriven + planned >= args.max
            decision = redrive(
                raw,
                to_queue=args.to_queue,
                select=(lambda _env: False) if limited else select,
                bypass=args.bypass,
                dry_run=args.dry_run,
            )
            if isinstance(decision, Redriven):
                assert out is not None  # a dry run never redrives
                out.write((_record(decision) if args.records else decision.body()) + b"\n")
                redriven += 1
                stderr.write(f"redriven {source} {decision.envelope.job} -> {decision.queue}\n")
                continue
            kept += 1
            if kept_out is not None:
                kept_out.write(raw + b"\n")
            stderr.write(_kept_line(source, decision))
            invalid += decision.reason == "invalid"
            planned += decision.reason == "dry_run"
        for sink in (out, kept_out):
            if sink is not None:
                sink.flush()
    done = f"{planned} would be redriven" if args.dry_run else f"{redriven} redriven"
    total = redriven + kept
    stderr.write(
        f"{total} message{'' if total == 1 else 's'}: {done}, {kept} kept, "
        f"{invalid} not BabelQueue v1 envelopes\n"
    )
    return EXIT_INVALID if invalid else EXIT_DONE


def _kept_line(source: str, decision: Kept) -> str:
    if decision.reason == "dry_run":
        urn = decision.envelope.job if decision.envelope is not None else ""
        return f"would redrive {source} {urn} -> {decision.queue}\n"
    if decision.reason == "invalid":
        first = decision.violations[0] if decision.violations else None
        detail = f" {first.rule} {first.pointer or '(document)'}" if first else ""
        return f"kept {source} invalid{detail}\n"
    return f"kept {source} {decision.reason}\n"
