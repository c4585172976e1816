"""The ``envelopekit`` command line: ``validate`` messages and write the JSON ``schema`` files.

Inputs stream (``_cli_input``): a file, a stream (``-``, a FIFO, ``/dev/stdin``) or every
message file below a directory, each read as NDJSON or as one JSON document by its content,
gzip decompressed on the way. A block of NDJSON lines (256 KiB) and one message (the size limit
plus one byte) at most are held in memory, so a multi-gigabyte input runs flat. ``--jobs N``
(``_cli_jobs``) validates in N processes, the output byte for byte the one-process output. An
I/O error (a full disk under any command), a closed stream or Ctrl-C is a message and an exit
status (2, or 130 for Ctrl-C, after the summary so far), never a traceback; a reader that goes
away (``| head``) ends the run quietly with 141.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic
from typing import IO, Any, Final, cast

import orjson

from . import __version__, _cli_asyncapi, _cli_compat, _cli_redrive, rules
from ._check import SPECS, check
from ._cli_input import (
    READINGS,
    InputError,
    Message,
    Sink,
    UsageError,
    chunks,
    display,
    environment_settings,
    one_line,
    one_line_json,
    plan,
)
from ._violations import Verdict, Violation, violation

__all__ = ["main"]

EXIT_VALID: Final = 0
EXIT_INVALID: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as a shell reports it
# 128 + SIGPIPE, as a shell reports a command whose reader went away (`| head -1`): the run
# stopped before every message was judged, so neither 0 ("all valid") nor 1 is true.
EXIT_BROKEN_PIPE: Final = 141
# Every command's help ends with these, after its own statuses in its description.
SIGNAL_STATUSES: Final = (
    f"Exit status {EXIT_INTERRUPTED}: interrupted (Ctrl-C). Exit status {EXIT_BROKEN_PIPE}: "
    "the reader of the output went away (| head) before the command was done."
)

# Below this much input (a few thousand messages) a progress bar is noise.
PROGRESS_MIN_BYTES: Final = 1024 * 1024
# The bar moves in about this many steps over the input, each from 16 KiB to 1 MiB of it, and
# redraws this often a second (rich's default, 10, cost about 1% of a run).
PROGRESS_STEPS: Final = 256
PROGRESS_MIN_STEP: Final = 16 * 1024
PROGRESS_MAX_STEP: Final = 1024 * 1024
PROGRESS_REFRESH: Final = 4
# The bar shows once a run has lasted this long (``--progress-delay``): importing rich (about
# 40 ms) is then at most 2% of any run that draws it, and a run over sooner never needed a bar.
PROGRESS_DELAY: Final = 2.0
# The most ``--jobs`` accepts, or the cores the process may use where there are more.
MAX_JOBS: Final = 256


class OutputError(UsageError):
    """The output cannot be written (a full disk, a closed stream)."""


class _Messages:
    """Standard error for messages; one that cannot be written is dropped.

    Started with ``2>&-`` or ``2>/dev/full``, the exit status still tells: an error escaping
    here would make it 1, which ``validate`` uses for "invalid".
    """

    def __init__(self, stream: IO[str] | None) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError):  # ValueError: a stream already closed
                self._stream = None
                with suppress(OSError):
                    sys.stderr = None  # the interpreter's own flush at exit would fail again
        return len(text)

    def flush(self) -> None:
        """Messages are flushed as they are written."""

    def isatty(self) -> bool:
        if self._stream is None:
            return False
        try:
            return self._stream.isatty()
        except (OSError, ValueError):
            return False


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
        # Counted by item, not Counter.update (an ABC isinstance test and a Python loop per
        # call): the same counts, first seen first, at a third of the cost.
        found = verdict.violations
        if found:
            self.invalid += 1
            _count(self.rules, found)
        else:
            self.valid += 1
        if verdict.warnings:
            self.warned += 1
            _count(self.warnings, verdict.warnings)

    @property
    def total(self) -> int:
        """How many messages were checked."""
        return self.valid + self.invalid


def _count(counter: Counter[str], found: list[Violation]) -> None:
    """Add one to each rule of ``found``, once per rule."""
    if len(found) == 1:
        counter[found[0].rule] += 1
        return
    for rule in dict.fromkeys([v.rule for v in found]):
        counter[rule] += 1


# --- progress -------------------------------------------------------------------------------


class _Progress:
    """A rich progress bar on stderr: on a terminal, for large inputs, once a run has lasted.

    Attributes:
        enabled: whether a bar may be drawn (the caller starts its workers before the bar's
            thread, as forking a threaded process is unsafe).
    """

    def __init__(self, total: int, enabled: bool, delay: float = PROGRESS_DELAY) -> None:
        self._bar: Any = None
        self._task: Any = None
        self._total = total
        self._delay = delay
        self._since = 0.0
        # rich's advance() takes a lock and records a speed sample: called per message it cost
        # more than validating one (bench/run.py); bytes are handed over in steps instead.
        self._step = min(max(total // PROGRESS_STEPS, PROGRESS_MIN_STEP), PROGRESS_MAX_STEP)
        self._pending = 0
        self._done = 0  # bytes read before the bar was drawn
        self.enabled = enabled and total >= PROGRESS_MIN_BYTES

    @property
    def drawn(self) -> bool:
        """Whether the bar is drawn (so far)."""
        return self._bar is not None

    def __enter__(self) -> _Progress:
        self._since = monotonic()
        if self.enabled and self._delay <= 0:
            self._draw()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._flush()
            self._bar.__exit__(None, None, None)

    def advance(self, size: int) -> None:
        """Record ``size`` more bytes read."""
        if self.enabled:
            self._pending += size
            if self._pending >= self._step:
                self._flush()

    def _flush(self) -> None:
        if self._bar is None:
            # The clock is read a step at a time, not a message at a time.
            self._done += self._pending
            self._pending = 0
            if monotonic() - self._since < self._delay:
                return
            self._draw()
        elif self._pending:
            self._bar.advance(self._task, self._pending)
            self._pending = 0

    def above(self, output: IO[bytes], data: bytes) -> None:
        """Write whole lines ``data`` to ``output``, the terminal the bar is on too, above it.

        Written past rich, the lines would follow the bar's text on its line, where rich's next
        redraw, erasing only the line the cursor is on, leaves that text. So rich takes the bar
        off (it is transient) and draws it again below them, as it does for a print. Its live
        display, not the bar, is stopped: the bar's stop adds a line where the display is not
        drawn (TERM=dumb).
        """
        if self._bar is None:
            output.write(data)
            output.flush()  # no part of a line left to come after a bar drawn next
            return
        live = self._bar.live
        live.stop()
        try:
            output.write(data)
            output.flush()  # all of it on the terminal before the bar is drawn after it
        finally:
            live.start(refresh=True)

    def _draw(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
            refresh_per_second=PROGRESS_REFRESH,
        )
        self._task = bar.add_task("validating", total=self._total, completed=self._done)
        bar.__enter__()
        self._bar = bar


# --- output ---------------------------------------------------------------------------------


def text_of(message: Message, verdict: Verdict[Any]) -> str:
    """A verdict as the text output shows it: a line, and one per finding.

    What comes from the input (the source, a pointer, a message) has its control characters
    escaped (``one_line``): a member name holding a newline would otherwise print a line
    that reads as another verdict.
    """
    mark = "valid  " if verdict.ok else "INVALID"
    source = message.source
    if not source.isprintable():  # tested here: the clean line pays no call
        source = one_line(source)
    if not verdict.violations and not verdict.warnings:
        return f"{mark} {source} ({verdict.spec})\n"
    lines = [f"{mark} {source} ({verdict.spec})"]
    lines.extend(
        f"    {v.rule:<40} {one_line(v.pointer) or '(document)':<28} {one_line(v.message)}"
        for v in verdict.violations
    )
    lines.extend(
        f"  ! {w.rule:<40} {one_line(w.pointer) or '(document)':<28} {one_line(w.message)}"
        for w in verdict.warnings
    )
    return "\n".join(lines) + "\n"


def json_of(message: Message, verdict: Verdict[Any]) -> bytes:
    """A verdict as one line of ``--format json``."""
    if verdict.ok and not verdict.warnings:
        # The common line, without building and encoding a dict.
        return (
            b'{"source":' + one_line_json(orjson.dumps(message.source)) + CLEAN_LINES[verdict.spec]
        )
    return _json_full(message, verdict)


def _json_full(message: Message, verdict: Verdict[Any]) -> bytes:
    # orjson writes a dataclass as its fields in order: a Violation is its to_dict() as it is.
    line = orjson.dumps(
        {
            "source": message.source,
            "ok": not verdict.violations,
            "spec": verdict.spec,
            "violations": verdict.violations,
            "warnings": verdict.warnings,
        },
        option=orjson.OPT_APPEND_NEWLINE,
    )
    return one_line_json(line)


CLEAN_LINES: Final[dict[str, bytes]] = {
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
    settings = environment_settings()
    if args.duplicate_keys is not None:
        settings = settings.model_copy(update={"duplicate_keys": args.duplicate_keys})
    stdin = sys.stdin.buffer if sys.stdin is not None else None
    inputs = plan(args.paths, args.read, stdin_open=stdin is not None)
    limit = settings.max_message_bytes
    summary = Summary()
    as_json = args.format == "json"
    failure: UsageError | None = None
    interrupted = False
    total = sum(source.size for source in inputs)
    progress = _Progress(total, enabled=stderr.isatty(), delay=args.progress_delay)
    jobs_module = _cli_jobs()
    jobs = args.jobs if args.jobs is not None else jobs_module.default_jobs()
    pool = jobs_module.Pool(jobs, jobs_module.Judge(args.spec, settings, limit, as_json))
    if jobs > 1 and progress.enabled:
        pool.start()  # before the bar's thread: forking a threaded process is unsafe

    # Verdicts to the terminal the bar is drawn on go above it; to a pipe or a file, as they are.
    screen = progress.enabled and stdout.isatty()

    def emit(out: bytes, part: Summary) -> None:
        # One write per task (a few hundred messages): a write per message costs more than
        # validating it.
        if screen:
            progress.above(stdout, out)
        else:
            stdout.write(out)
        jobs_module.merge(summary, part)

    empty: list[str] = []
    with progress:
        try:
            # More than one job: regular files as spans, which the workers read themselves.
            # The bar advances by the bytes read of each file as stored, as its total counts them.
            advance = progress.advance if progress.enabled else None
            items = chunks(inputs, stdin, limit, spans=jobs > 1, empty=empty, advance=advance)
            jobs_module.run(items, pool, emit)
        except InputError as exc:
            failure = exc  # what was read before it stands: its verdicts and the summary
        except KeyboardInterrupt:
            interrupted = True
    if not summary.total and failure is None and not interrupted:
        raise UsageError(f"no messages in {', '.join(source.name for source in inputs)}")
    if empty and failure is None:
        # An empty input among others is said as it is alone (status 2), after their verdicts.
        failure = UsageError(f"no messages in {', '.join(empty)}")
    if as_json:
        stderr.write(_summary_text(summary))
    else:
        stdout.write(b"\n" + _summary_text(summary).encode("utf-8"))
    if interrupted:
        stderr.write("envelopekit: interrupted\n")
        return EXIT_INTERRUPTED
    if failure is not None:
        raise failure
    return EXIT_INVALID if summary.invalid else EXIT_VALID


def _cli_jobs() -> Any:
    # Imported when used: it imports this module (the worker formats verdicts with it).
    from . import _cli_jobs

    return _cli_jobs


def _jobs(text: str) -> int:
    # Past the cores, more processes only take turns on them; past this many, a number is a
    # typo (`--jobs 1000`) that would fork as many interpreters, not a plan.
    most = max(MAX_JOBS, _cli_jobs().default_jobs())
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= most:
        raise argparse.ArgumentTypeError(f"not a number of processes from 1 to {most}: {text!r}")
    return jobs


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of seconds, 0 or more: {text!r}")
    return seconds


def verdict_for(message: Message, spec: str, settings: Any, limit: int) -> Verdict[Any]:
    """The verdict on one message read by ``_cli_input``."""
    if message.size > limit:
        # Only the limit and one byte of it were read: the rest was skipped, never held.
        found = violation(rules.MESSAGE_TOO_LARGE, "", f"{message.size} bytes exceeds {limit}.")
        return Verdict(spec, None, [found])
    return check(message.raw, spec, settings=settings)


def _schema(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    from ._schema import SCHEMA_NAMES, json_schema, write_schemas

    specs = SPECS if args.spec == "all" else (args.spec,)
    if args.out == "":
        raise UsageError("--out: an empty path names no directory (use . for this one)")
    if args.out is not None:
        try:
            written = write_schemas(Path(args.out), specs, draft=args.draft)
        except OSError as exc:
            where = display(exc.filename) if exc.filename is not None else display(args.out)
            raise UsageError(f"cannot write {where}: {exc.strerror or exc}") from exc
        for path in written:
            stderr.write(f"wrote {display(path)}\n")
        return EXIT_VALID
    documents = {
        spec: {n: json_schema(spec, n, draft=args.draft) for n in SCHEMA_NAMES[spec]}
        for spec in specs
    }
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
        "--read",
        choices=READINGS,
        default="auto",
        help="json: each input is one document; ndjson: one message a line; auto (default): "
        "NDJSON when the first line is a whole JSON value and more lines follow, or the "
        "name ends .ndjson or .jsonl",
    )
    validate.add_argument(
        "--jobs",
        type=_jobs,
        metavar="N",
        help="validate in N processes, verdicts still in input order (default: the cores "
        f"this process may use; 1: in this process only; at most {MAX_JOBS} or the cores)",
    )
    validate.add_argument(
        "--progress-delay",
        type=_seconds,
        default=PROGRESS_DELAY,
        metavar="SECONDS",
        help="on a terminal, show a progress bar for inputs of 1 MiB or more once the run has "
        f"lasted SECONDS (default: {PROGRESS_DELAY:g}; 0: at once)",
    )
    validate.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="JSON or NDJSON files (gzip too), directories of them, FIFOs, or - for stdin "
        "(default)",
    )
    schema = commands.add_parser(
        "schema",
        help="print or write the generated JSON Schemas",
        description="Print the generated JSON Schemas as one JSON object, <spec> -> <name> -> "
        "schema, or write each to a file with --out. Exit status: 0 done, 2 usage or I/O error.",
    )
    schema.add_argument(
        "--spec", choices=("all", *SPECS), default="all", help="the spec (default: all three)"
    )
    schema.add_argument("--out", metavar="DIR", help="write <DIR>/<spec>/<name>.schema.json")
    schema.add_argument(
        "--draft",
        choices=("2020-12", "07"),
        default="2020-12",
        help="the JSON Schema draft (default: 2020-12; 07 for AsyncAPI and older registries)",
    )
    _cli_redrive.add_parser(commands)
    _cli_compat.add_parser(commands)
    _cli_asyncapi.add_parser(commands)
    # `main` ends any command so, not only the two that print a summary so far first.
    for command in commands.choices.values():
        command.epilog = SIGNAL_STATUSES
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    # Started with `2>&-` or `2>/dev/full` too: messages go nowhere, the exit status still tells.
    messages = _Messages(sys.stderr)
    stderr = cast(IO[str], messages)  # write and isatty are all the commands use
    try:
        args = _parser().parse_args(argv)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    if sys.stdout is None:  # started with `>&-`
        stderr.write("envelopekit: standard output is closed\n")
        return EXIT_USAGE
    # write and flush are all the commands use
    stdout = cast(IO[bytes], Sink(sys.stdout.buffer, "the output", OutputError))
    try:
        try:
            if args.command == "validate":
                return _validate(args, stdout, stderr)
            if args.command == "redrive":
                stdin = sys.stdin.buffer if sys.stdin is not None else None
                return _cli_redrive.run(args, stdin, stdout, stderr)
            if args.command == "compat":
                return _cli_compat.run(args, stdout, stderr)
            if args.command == "asyncapi":
                return _cli_asyncapi.run(args, stdout, stderr)
            return _schema(args, stdout, stderr)
        finally:
            stdout.flush()
    except UsageError as exc:
        stderr.write(f"envelopekit: {one_line(str(exc))}\n")  # it may name an input
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`| head`): nothing to say to it, but the run did not finish.
        with suppress(OSError):
            sys.stdout = None  # the interpreter's own flush at exit would fail again
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        stderr.write("envelopekit: interrupted\n")
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
