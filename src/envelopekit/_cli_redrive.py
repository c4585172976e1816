"""``envelopekit redrive``: a dead-letter feed in, redriven messages and kept messages out.

The feed is NDJSON (a file, a directory of them, or ``-`` for standard input; gzip is
decompressed; a ``.json`` file is one message), read as ``validate`` reads it (``_cli_input``):
a message is held up to the size limit plus one byte. Redriven bodies go to ``--out``
(standard output by default), one a line, byte for byte what the official Python redrive
publishes; every other line goes to ``--kept`` exactly as read, so nothing is ever lost (a
``.json`` document on one line, its line feeds as tabs: :func:`_one_line`). A
message over the limit (``message.too_large``) is kept too: its bytes are copied to ``--kept``
in fixed chunks as they are read, never held whole, so a 2 GiB line or ``/dev/zero`` runs in
flat memory. A line per message on standard error says what happened to it; Ctrl-C ends the run
with the summary so far (status 130).
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Final

from . import rules
from ._cli_input import (
    Input,
    InputError,
    Message,
    Sink,
    UsageError,
    display,
    environment_settings,
    messages,
    one_line,
    one_line_json,
    plan,
)
from ._json import dumps
from ._violations import violation
from .babelqueue._dead_letter import DeadLetter
from .babelqueue._envelope import BabelEnvelope
from .babelqueue._redrive import Kept, Redriven, redrive
from .babelqueue._urn import routed_urn

__all__ = ["add_parser", "run"]

EXIT_DONE: Final = 0
EXIT_INVALID: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as validate and a shell report it
# A feed is NDJSON whatever its name, but a `.json` file is one message.
DOCUMENTS: Final = frozenset({".json"})


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
        "feed",
        nargs="?",
        default="-",
        metavar="FEED",
        help="NDJSON file (gzip too; a .json file is one message), a directory of them, or - "
        "(default)",
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
    parser.add_argument(
        "--max", type=int, default=0, metavar="N", help="redrive at most N (0: no limit)"
    )
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
        # As the Router looks a job up: without surrounding ASCII whitespace on either side.
        if self.urns and routed_urn(envelope.job) not in self.urns:
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


def _inputs(entry: str, stdin: IO[bytes] | None) -> list[Input]:
    try:
        return plan([entry], "ndjson", stdin_open=stdin is not None, documents=DOCUMENTS)
    except UsageError as exc:
        raise RedriveUsageError(str(exc)) from exc


class _KeptGone(Exception):
    """``--kept`` is a pipe whose reader went away while a message was copied to it.

    Raised in place of the ``BrokenPipeError`` so that the reading does not take it for a
    failure of its input (an ``OSError``); :func:`_run` raises the ``BrokenPipeError`` again.
    """


class _Copy:
    """Copies the bytes of each message too large to check into ``--kept`` as they are read."""

    def __init__(self, kept: Sink | None) -> None:
        self._kept = kept
        self.open = False  # a message's bytes are being copied: its line is not finished

    def __call__(self, data: bytes) -> None:
        self.open = True
        if self._kept is not None:
            try:
                self._kept.write(_one_line(data))
            except BrokenPipeError as exc:
                raise _KeptGone from exc

    def finish(self) -> None:
        """End the copied message's line."""
        self.open = False
        if self._kept is not None:
            self._kept.write(b"\n")


def _one_line(data: bytes) -> bytes:
    """``data`` (a kept message, or part of one) with its line feeds as tabs: one NDJSON line.

    Only a ``.json`` document holds line feeds (a line is read without its own). Outside its
    strings a tab is JSON whitespace as a line feed is, and inside one, where a raw line feed is
    invalid, a raw tab is invalid too: the line is JSON exactly when the document was, with the
    same value. Carriage returns stay: NDJSON lines end at a line feed.
    """
    return data.replace(b"\n", b"\t")


def _limit() -> int:
    try:
        return environment_settings().max_message_bytes
    except UsageError as exc:
        raise RedriveUsageError(str(exc)) from exc


def _apart(inputs: list[Input], targets: dict[str, str | None]) -> None:
    """Refuse an output file that is an input, or the other output.

    Opening it for writing would empty the input before it is read, and two handles on one
    file overwrite each other's lines: either loses messages, which ``--kept`` is there to
    keep.

    Raises:
        RedriveUsageError: naming the option and the file.
    """
    seen: dict[tuple[int, int] | Path, str] = {}
    for entry in inputs:
        if entry.path is not None:
            with suppress(OSError):
                seen.setdefault(_identity(entry.path), f"the input {entry.name}")
    for option, target in targets.items():
        if target is None or target == "-":
            continue
        if not target:
            raise RedriveUsageError(f"{option}: an empty path names no file")
        path = Path(target)
        try:
            identity: tuple[int, int] | Path = _identity(path)
        except OSError:
            identity = path.resolve()  # not there yet: only the other output can name it
        other = seen.setdefault(identity, option)
        if other != option:
            raise RedriveUsageError(
                f"{option} {display(path)} is {other}: writing it would lose messages"
            )


def _identity(path: Path) -> tuple[int, int]:
    status = path.stat()
    return (status.st_dev, status.st_ino)


def _open(stack: ExitStack, target: str, stdout: IO[bytes]) -> Sink:
    if target == "-":
        return Sink(stdout, "the output", RedriveUsageError)
    try:
        stream = Path(target).open("wb")  # noqa: SIM115 - closed by the stack
    except OSError as exc:
        raise RedriveUsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    # Flushed on the way out when the run finished; closed quietly when it did not (an error
    # already being reported).
    stack.callback(_close_quietly, stream)
    return Sink(stream, target, RedriveUsageError)


def _close_quietly(stream: IO[bytes]) -> None:
    with suppress(OSError):
        stream.close()


def _record(done: Redriven) -> bytes:
    # The body is the message byte for byte; its line, as JSON, escapes what ends a line.
    body = done.body().decode("utf-8")
    return one_line_json(dumps({"queue": done.queue, "headers": dict(done.headers), "body": body}))


def run(
    args: argparse.Namespace, stdin: IO[bytes] | None, stdout: IO[bytes], stderr: IO[str]
) -> int:
    """Run ``redrive`` with parsed ``args``; returns the exit status."""
    try:
        return _run(args, stdin, stdout, stderr)
    except RedriveUsageError as exc:
        stderr.write(f"envelopekit redrive: {one_line(str(exc))}\n")  # it may name an input
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
    if args.to_queue == "":
        # An unset variable, most likely: each message would go to its own queue instead.
        raise RedriveUsageError("--to-queue: an empty name names no queue")
    select = _Filter(
        frozenset(routed_urn(urn) for urn in args.urn),
        frozenset(args.reason),
        _time(args.since, "--since"),
        _time(args.until, "--until"),
    )
    inputs = _inputs(args.feed, stdin)
    targets = {"--kept": args.kept} if args.dry_run else {"--out": args.out, "--kept": args.kept}
    _apart(inputs, targets)
    # The limit `redrive` checks each message under: a message over it is never held whole.
    limit = _limit()
    redriven = kept = invalid = planned = 0
    failure: InputError | None = None
    interrupted = False
    with ExitStack() as stack:
        out = None if args.dry_run else _open(stack, args.out, stdout)
        kept_out = None if args.kept is None else _open(stack, args.kept, stdout)
        copy = _Copy(kept_out)
        try:
            for message in messages(inputs, stdin, limit, verbatim=True, spill=copy):
                if message.size > limit:
                    # Its bytes are in --kept already, copied as they were read.
                    copy.finish()
                    kept += 1
                    invalid += 1
                    said = _too_large_line(message, limit, kept_out is not None)
                    stderr.write(one_line(said) + "\n")
                    continue
                limited = bool(args.max) and redriven + planned >= args.max
                decision = redrive(
                    message.raw,
                    to_queue=args.to_queue,
                    select=(lambda _env: False) if limited else select,
                    bypass=args.bypass,
                    dry_run=args.dry_run,
                )
                source = message.source
                if isinstance(decision, Redriven):
                    assert out is not None  # a dry run never redrives
                    out.write((_record(decision) if args.records else decision.body()) + b"\n")
                    redriven += 1
                    said = f"redriven {source} {decision.envelope.job} -> {decision.queue}"
                    stderr.write(one_line(said) + "\n")
                    continue
                kept += 1
                if kept_out is not None:
                    kept_out.write(_one_line(message.raw) + b"\n")
                stderr.write(one_line(_kept_line(source, decision)) + "\n")
                invalid += decision.reason == "invalid"
                planned += decision.reason == "dry_run"
        except _KeptGone as exc:
            raise BrokenPipeError from exc.__cause__
        except InputError as exc:
            failure = exc  # what was read before it stands: written out, and the summary
        except KeyboardInterrupt:
            interrupted = True
        for sink in (out, kept_out):
            if sink is not None:
                sink.flush()
    done = f"{planned} would be redriven" if args.dry_run else f"{redriven} redriven"
    total = redriven + kept
    stderr.write(
        f"{total} message{'' if total == 1 else 's'}: {done}, {kept} kept, "
        f"{invalid} not BabelQueue v1 envelopes\n"
    )
    if interrupted:
        if copy.open and kept_out is not None:
            stderr.write(
                "envelopekit redrive: interrupted while a message too large to check was "
                f"copied to {args.kept}: its last line there is incomplete\n"
            )
        else:
            stderr.write("envelopekit redrive: interrupted\n")
        return EXIT_INTERRUPTED
    if failure is not None:
        raise RedriveUsageError(str(failure))
    return EXIT_INVALID if invalid else EXIT_DONE


def _too_large_line(message: Message, limit: int, copied: bool) -> str:
    said = f"{message.size} bytes exceeds {limit}."
    found = violation(rules.MESSAGE_TOO_LARGE, "", said)
    kept = Kept(b"", "invalid", violations=[found])
    end = " (copied)" if copied else ""  # a dry run without --kept copies nothing
    return _kept_line(message.source, kept) + f": {said}{end}"


def _kept_line(source: str, decision: Kept) -> str:
    # A line without its end, for `one_line` to escape what came from the input in it.
    if decision.reason == "dry_run":
        urn = decision.envelope.job if decision.envelope is not None else ""
        return f"would redrive {source} {urn} -> {decision.queue}"
    if decision.reason == "invalid":
        first = decision.violations[0] if decision.violations else None
        detail = f" {first.rule} {first.pointer or '(document)'}" if first else ""
        return f"kept {source} invalid{detail}"
    return f"kept {source} {decision.reason}"
