r"""What ``envelopekit validate`` reads: inputs checked up front, messages read in bounded memory.

* Every path is resolved before the first message is validated: a missing or unreadable file,
  and an unreadable directory anywhere below a given one, is a usage error then, not after the
  good inputs were validated (nor skipped silently). Below a directory, so is a message file
  that is a broken link, a loop of links or not a regular file; links to directories are
  followed, each directory read once.
* A path that is neither a file nor a directory (``/dev/stdin``, ``<(cat f)``, a FIFO) is read as
  a stream, like ``-``.
* A message is read up to the size limit plus one byte; the rest of an oversized message is
  skipped in fixed chunks and the message reported as ``message.too_large``, so a 2 GiB line or
  ``/dev/zero`` runs in flat memory. A reader that must keep such a message (``redrive`` copies it
  to ``--kept``) passes ``spill``: it is handed every byte of each oversized message, a fixed
  chunk at a time, just before the message comes and after everything before it.
* NDJSON is recognised by content, whatever the name: when the first non-blank line is a
  complete JSON value (after a UTF-8 byte order mark, if any) and another non-blank line
  follows, every line is a message; otherwise the input is one JSON document. ``--read json``
  or ``--read ndjson`` forces either reading, and ``.ndjson``/``.jsonl`` files are read as
  lines. gzip input is decompressed as a stream.
* A line is stripped of JSON whitespace only (space, tab, CR, LF), as ``check`` reads it: a line
  ending in ``\x0b`` or ``\x0c`` is ``json.invalid`` in both.
* Past the lines read to recognise it, NDJSON is read in blocks of whole lines (``chunks``), at
  most ``BLOCK`` bytes and the limit plus two more; a block is split into messages where it is
  validated, so ``validate --jobs N`` hands raw blocks to its processes, not a message at a time.
  From a regular file (not gzip) ``chunks(..., spans=True)`` gives each block as a ``Span``
  instead, where it lies in the file: the process that validates it reads it there itself, so
  the reading process only finds the line ends and counts them (into one reused buffer).
* A progress bar's measure (``chunks(..., advance=...)``) is how far each regular file was read
  as stored, a gzip file's compressed bytes: the unit of ``Input.size``, which totals it.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal, NamedTuple, cast

from pydantic import ValidationError
from pydantic_core import from_json

from ._json import without_long_integers
from ._settings import Settings, get_settings

__all__ = [
    "BLOCK",
    "READINGS",
    "Block",
    "Input",
    "InputChanged",
    "InputError",
    "Message",
    "Reading",
    "Sink",
    "Span",
    "Spill",
    "UsageError",
    "chunks",
    "display",
    "environment_settings",
    "messages",
    "one_line",
    "one_line_json",
    "plan",
]

Reading = Literal["auto", "json", "ndjson"]
READINGS: Final[tuple[Reading, ...]] = ("auto", "json", "ndjson")

Spill = Callable[[bytes], object]
"""Takes the bytes of an oversized message, in order, as they are read (``chunks``)."""

LINE_SUFFIXES: Final = frozenset({".ndjson", ".jsonl"})
MESSAGE_SUFFIXES: Final = frozenset({".json"}) | LINE_SUFFIXES
JSON_WHITESPACE: Final = b" \t\r\n"
SKIP_CHUNK: Final = 1 << 16
GZIP_MAGIC: Final = b"\x1f\x8b"
UTF8_BOM: Final = b"\xef\xbb\xbf"
# NDJSON is read this much at a time (plus the rest of its last line): a few hundred messages,
# so splitting lines costs a few C calls per block instead of a readline per message.
BLOCK: Final = 256 * 1024


class UsageError(Exception):
    """A path that cannot be read, or arguments that make no sense (exit status 2)."""


def why(exc: BaseException) -> str:
    """An exception as one line: its type and its text, lines joined (pydantic's run over)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def imported(module_name: str, name: str) -> Any:
    """The attribute ``name`` (dotted) of the module ``module_name``, imported for the user.

    As ``python -m`` and uvicorn import: the project in the working directory imports. What the
    module prints while it is imported goes to stderr: the command's stdout is its output
    (``compat --format json``, a document), which a line printed there would corrupt.

    Raises:
        UsageError: whatever the module raised while importing (``sys.exit`` too), or the
            attribute it lacks: the user's to see as a usage error, since a traceback would
            exit 1, which says "invalid" or "breaking".
    """
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        with contextlib.redirect_stdout(sys.stderr):
            found: Any = importlib.import_module(module_name)
        for part in name.split("."):
            found = getattr(found, part)
    except (Exception, SystemExit) as exc:
        raise UsageError(f"cannot import {module_name}:{name}: {why(exc)}") from exc
    return found


def environment_settings() -> Settings:
    """The environment's settings (``get_settings``), a bad ``ENVELOPEKIT_*`` a usage error.

    Raises:
        UsageError: naming each variable whose value the settings refuse, and why.
    """
    try:
        return get_settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"ENVELOPEKIT_{str(error['loc'][0]).upper()}={error['input']!r}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise UsageError(f"bad setting in the environment: {problems}") from None


class InputError(UsageError):
    """An input failed part-way: what was read before it stands."""


class Sink:
    """An output of a command, whose failures are said, not raised as they come.

    A write or flush that fails (a full disk, ``>/dev/full``) is ``error("cannot write NAME:
    why")``, a message and exit status 2; a reader that went away stays a ``BrokenPipeError``.
    """

    def __init__(
        self, stream: IO[bytes], name: str, error: Callable[[str], Exception] = UsageError
    ) -> None:
        self._stream = stream
        self._name = name
        self._error = error

    def write(self, data: bytes) -> int:
        try:
            return self._stream.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from exc

    def flush(self) -> None:
        """Write what is buffered: a file's last lines fail here, not at its close."""
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from exc

    def isatty(self) -> bool:
        """Whether the output is a terminal (a stream that cannot tell is not)."""
        try:
            return self._stream.isatty()
        except (OSError, ValueError):
            return False

    def _failed(self, exc: OSError) -> Exception:
        return self._error(f"cannot write {self._name}: {exc.strerror or exc}")


class InputChanged(InputError):
    """A regular file changed while it was read: nothing after it is validated."""


class Message(NamedTuple):
    """One message and where it came from (``file`` or ``file:line``).

    ``raw`` is a line stripped of JSON whitespace (as read, without its newline, when read
    ``verbatim``), or a document as read. ``size`` is the message's length; when it exceeds the
    limit, ``raw`` holds only the first limit plus one byte of it, as read.
    """

    source: str
    raw: bytes
    size: int


class Block(NamedTuple):
    """Whole NDJSON lines of input ``name``, the first of them line ``number``.

    A line over the limit inside a block is there in full (a block is bounded, so that is at
    most ``BLOCK`` bytes); one that runs past the block is read no further than the limit plus
    two bytes and comes as a ``Message`` of its own instead.
    """

    name: str
    number: int
    data: bytes

    def messages(
        self, limit: int, *, verbatim: bool = False, spill: Spill | None = None
    ) -> Iterator[Message]:
        """The block's messages, as ``messages`` reads them line by line."""
        lines = self.data.split(b"\n")
        if not lines[-1]:
            lines.pop()  # the block ends with a newline: no line after it
        name, number = self.name, self.number
        for line in lines:
            size = len(line)
            if size > limit:
                if spill is not None:
                    spill(line)
                yield Message(f"{name}:{number}", line[: limit + 1], size)
            elif body := line.strip(JSON_WHITESPACE):
                yield Message(f"{name}:{number}", line if verbatim else body, size)
            number += 1


class Span(NamedTuple):
    """A ``Block`` by where it lies in a regular file: ``length`` bytes at ``offset``.

    ``identity`` is the file's ``(st_dev, st_ino)`` as the reading process opened it, so that
    the path read again names the same file.
    """

    name: str
    number: int
    path: Path
    offset: int
    length: int
    identity: tuple[int, int]

    def block(self) -> Block:
        """The span's bytes, read from the file.

        Raises:
            InputChanged: when the path now names another file, or holds fewer bytes.
        """
        try:
            with self.path.open("rb", buffering=0) as stream:
                status = os.fstat(stream.fileno())
                if (status.st_dev, status.st_ino) == self.identity:
                    stream.seek(self.offset)
                    data = _read_exactly(stream, self.length)
                else:
                    data = b""
        except OSError as exc:
            raise InputChanged(f"cannot read {self.name}: {_reason(exc)}") from exc
        if len(data) != self.length:
            raise InputChanged(f"cannot read {self.name}: it changed while it was read")
        return Block(self.name, self.number, data)


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) == size or not data:
        return data
    parts = [data]
    size -= len(data)
    while size and (more := stream.read(size)):  # a raw read may return less than asked
        parts.append(more)
        size -= len(more)
    return b"".join(parts)


@dataclass(frozen=True)
class Input:
    """One input, resolved: a file, a stream (``path`` ``None`` for stdin), a directory's file."""

    name: str
    path: Path | None
    lines: bool | None  # True: NDJSON; False: one document; None: by content

    @property
    def size(self) -> int:
        """Bytes on disk for a regular file, else 0 (a stream's size is not known)."""
        if self.path is None:
            return 0
        try:
            status = self.path.stat()
        except OSError:
            return 0
        return status.st_size if stat.S_ISREG(status.st_mode) else 0


def display(path: Path | str) -> str:
    r"""A path as text that always encodes: bytes that are not UTF-8 as ``\xNN`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


# C0, DEL, C1 and the Unicode line and paragraph separators: what ends a line or starts a
# terminal's escape sequence. Each as repr writes it: \n, \x1b, \x85, \u2028.
_ESCAPES: Final = {
    code: repr(chr(code))[1:-1] for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}


def one_line(text: str) -> str:
    r"""``text`` with control characters escaped as ``repr`` escapes them (``\n``, ``\x1b``).

    Text from the input (a file name, a member name in a pointer) printed raw could end a line
    and forge the next, or drive the terminal. ``str.isprintable`` is False for each of them,
    so a clean text costs one C-level scan.
    """
    return text if text.isprintable() else text.translate(_ESCAPES)


# What `one_line` escapes that a JSON encoder writes raw in a string (it escapes C0 itself):
# DEL, C1 (U+0085 ends a line for str.splitlines) and U+2028/9. In UTF-8 a C2 or E2 byte only
# leads a character, so these bytes are these characters wherever they are.
_JSON_RAW: Final = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")
# Each as its UTF-8 bytes and its JSON escape; the C1 ones all lead with C2.
_JSON_ESCAPES: Final = tuple(
    (chr(code).encode(), b"\\u%04x" % code) for code in (0x7F, 0x2028, 0x2029)
)
_C1_ESCAPES: Final = tuple((chr(code).encode(), b"\\u%04x" % code) for code in range(0x80, 0xA0))


def one_line_json(text: bytes) -> bytes:
    r"""JSON text with what :func:`one_line` escapes escaped as JSON escapes (``\u2028``).

    A JSON line printed with them raw is still one NDJSON line, but not one line to a reader
    splitting text at every line break (``str.splitlines``), nor safe on a terminal. The
    value is the same once parsed. A text of ASCII without DEL costs two C-level scans, one
    with none of them three; each character found is replaced by C passes, one a character
    (a Python callback each took 154 ms for a MiB of U+2028).
    """
    if text.isascii() and text.find(b"\x7f") == -1:
        return text
    if _JSON_RAW.search(text) is None:
        return text
    for raw, escaped in _C1_ESCAPES if text.find(b"\xc2") != -1 else ():
        if text.find(raw) != -1:
            text = text.replace(raw, escaped)
    for raw, escaped in _JSON_ESCAPES:
        if text.find(raw) != -1:
            text = text.replace(raw, escaped)
    return text


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def plan(
    paths: Sequence[str],
    reading: Reading,
    stdin_open: bool,
    *,
    documents: Collection[str] = (),
) -> list[Input]:
    """Resolve every path before anything is validated.

    A file whose suffix is in ``documents`` (``redrive``'s ``.json``) is one document whatever
    ``reading`` says.

    Raises:
        UsageError: for a path that does not exist or cannot be read, a directory (or one below
            it) that cannot be listed, a directory holding no message file, or ``-`` when
            standard input is closed.
    """
    forced = None if reading == "auto" else reading == "ndjson"
    found: list[Input] = []
    for entry in paths or ["-"]:
        if entry == "-":
            if not stdin_open:
                raise UsageError("standard input is closed")
            found.append(Input("<stdin>", None, forced))
            continue
        if not entry:
            # Path("") is the working directory: an unset variable (`"$FEED"`) is no path.
            raise UsageError("an empty path names no file (use . for this directory)")
        path = Path(entry)
        try:
            status = path.stat()
        except FileNotFoundError:
            raise UsageError(f"no such file or directory: {display(path)}") from None
        except OSError as exc:
            raise UsageError(f"cannot read {display(path)}: {_reason(exc)}") from exc
        if stat.S_ISDIR(status.st_mode):
            found.extend(_directory(path, forced, documents))
        else:
            _readable(path)
            found.append(Input(display(path), path, _lines_by_name(path, forced, documents)))
    return found


def _lines_by_name(path: Path, forced: bool | None, documents: Collection[str]) -> bool | None:
    if documents and _suffix(path) in documents:
        return False
    if forced is not None:
        return forced
    return True if _suffix(path) in LINE_SUFFIXES else None


def _suffix(path: Path) -> str:
    """The message suffix, through a ``.gz``: ``feed.ndjson.gz`` is ``.ndjson``."""
    return Path(path.stem).suffix if path.suffix == ".gz" else path.suffix


def _readable(path: Path) -> None:
    if not os.access(path, os.R_OK):
        raise UsageError(f"cannot read {display(path)}: Permission denied")


def _directory(root: Path, forced: bool | None, documents: Collection[str]) -> list[Input]:
    files: list[Path] = []

    def refuse(exc: OSError) -> None:
        where = exc.filename if exc.filename is not None else root
        raise UsageError(f"cannot read directory {display(where)}: {_reason(exc)}")

    # A link to a directory is followed, as a link to a file is: its messages are inputs too.
    # Each directory is read once, by the first name the walk meets it under, so a link back
    # up the tree (a loop) or a second link to the same place lists nothing twice.
    walked: set[tuple[int, int]] = set()
    _first_time(root, walked)
    for folder, folders, names in os.walk(root, onerror=refuse, followlinks=True):
        # In order, so that the name a directory is read under is the same on every run; one
        # already met (above, or beside under another name) is not entered again.
        folders[:] = [n for n in sorted(folders) if _first_time(Path(folder) / n, walked)]
        for name in names:
            path = Path(folder) / name
            if _suffix(path) in MESSAGE_SUFFIXES:
                _message_file(path)
                files.append(path)
    if not files:
        # "0 messages, all valid" would read as a pass for a path that holds nothing.
        raise UsageError(f"no messages in {display(root)}")
    return [Input(display(p), p, _lines_by_name(p, forced, documents)) for p in sorted(files)]


def _first_time(path: Path, walked: set[tuple[int, int]]) -> bool:
    """Whether the directory ``path`` is met for the first time (it is then counted as met)."""
    try:
        status = path.stat()
    except OSError:
        return True  # os.walk reports it when it tries to list it
    identity = (status.st_dev, status.st_ino)
    if identity in walked:
        return False
    walked.add(identity)
    return True


def _message_file(path: Path) -> None:
    """Refuse a message file found in a directory that cannot be read as one."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise UsageError(f"no such file: {display(path)} (a broken symbolic link)") from None
    except OSError as exc:  # a loop of links, a folder that cannot be searched
        raise UsageError(f"cannot read {display(path)}: {_reason(exc)}") from exc
    if not stat.S_ISREG(status.st_mode):
        # A FIFO or a device below a directory could block the run for ever: read it as a
        # stream only when it is named on its own.
        raise UsageError(
            f"cannot read {display(path)}: not a regular file (a FIFO or a device is read "
            "only when named on its own)"
        )
    _readable(path)


# --- reading ------------------------------------------------------------------------------------


def messages(
    inputs: Iterable[Input],
    stdin: IO[bytes] | None,
    limit: int,
    *,
    verbatim: bool = False,
    spill: Spill | None = None,
) -> Iterator[Message]:
    """Every message of ``inputs``, in order, each read up to ``limit`` + 1 bytes.

    With ``verbatim``, a line is the message as read (without its newline), not stripped of
    JSON whitespace. ``spill`` is handed the bytes of each oversized message (``chunks``).

    Raises:
        InputError: when an input cannot be opened or read part-way.
    """
    for item in chunks(inputs, stdin, limit, verbatim=verbatim, spill=spill):
        if isinstance(item, Message):
            yield item
        else:
            block = item if isinstance(item, Block) else item.block()
            yield from block.messages(limit, verbatim=verbatim, spill=spill)


def chunks(
    inputs: Iterable[Input],
    stdin: IO[bytes] | None,
    limit: int,
    *,
    spans: bool = False,
    empty: list[str] | None = None,
    verbatim: bool = False,
    spill: Spill | None = None,
    advance: Callable[[int], object] | None = None,
) -> Iterator[Message | Block | Span]:
    """What ``messages`` reads, NDJSON still in blocks of lines (``Block.messages`` splits one).

    With ``spans``, the blocks of a regular file that is not gzip come as spans (``Span``): where
    they lie, not their bytes (``Span.block`` reads them). The name of each input read to its
    end without a message (empty, or blank lines only) is added to ``empty``. With ``verbatim``,
    a line that comes as a ``Message`` is as read (``messages``).

    The part of an oversized message that is not held (past the limit plus one or two bytes) is
    read and dropped in fixed chunks; with ``spill``, every byte of the message (its newline
    left out) is handed to ``spill`` instead, in order, once everything before it has come: a
    block with an oversized line hands the line on when ``Block.messages`` reaches it. What
    ``spill`` raises ends the reading (an ``OSError`` reads as the input's own failure: wrap it).

    ``advance``, if any, is handed the bytes of each regular file read so far as each item comes
    (and the rest at its end): bytes as stored, a gzip file's compressed ones, so that they add
    up to the inputs' ``Input.size``. A stream's bytes are not counted, as its size is not.

    Raises:
        InputError: when an input cannot be opened or read part-way.
    """
    # No bytes object is longer than sys.maxsize: a larger limit (a setting of "no limit")
    # holds as much, and keeps the reads' sizes, the limit plus two, within an index.
    limit = min(limit, sys.maxsize - 2)
    for source in inputs:
        found = _Found()
        yield from _input_chunks(source, stdin, limit, spans, found, (verbatim, spill), advance)
        if not found.content and empty is not None:
            empty.append(source.name)


@dataclass
class _Found:
    """Whether an input held anything but JSON whitespace (a message, or a block with one)."""

    content: bool = False


# Anything but the JSON whitespace a line is stripped of: a block that has it has a message.
_CONTENT: Final = re.compile(rb"[^ \t\r\n]")


def _input_chunks(
    source: Input,
    stdin: IO[bytes] | None,
    limit: int,
    spans: bool,
    found: _Found,
    how: tuple[bool, Spill | None],
    advance: Callable[[int], object] | None,
) -> Iterator[Message | Block | Span]:
    try:
        if source.path is not None:
            with source.path.open("rb") as stream:
                items = _read(source, stream, limit, spans, found, how)
                if advance is not None and _regular(stream) is not None:
                    items = _measured(items, stream, advance)
                yield from items
        elif stdin is not None:
            yield from _read(source, stdin, limit, False, found, how)
        else:
            raise InputError("standard input is closed")
    except (OSError, EOFError, zlib.error) as exc:
        reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
        raise InputError(f"cannot read {source.name}: {reason}") from exc


def _measured(
    items: Iterator[Message | Block | Span], stream: IO[bytes], advance: Callable[[int], object]
) -> Iterator[Message | Block | Span]:
    """``items``, ``advance`` handed how much further ``stream`` was read as each comes.

    ``stream`` is the file as stored: under gzip it is read as far as the compressed bytes of
    the items so far (a read ahead of them at most), where their own lengths would count the
    decompressed bytes against the compressed file's size.
    """
    done = 0
    for item in items:
        at = stream.tell()
        advance(at - done)
        done = at
        yield item
    advance(stream.tell() - done)  # what followed the last item: blank lines, a gzip trailer


class _Line(NamedTuple):
    number: int
    body: bytes  # without JSON whitespace; the first limit + 1 bytes of an oversized line
    size: int  # without the newline (so far, for a line whose rest was left in the stream)
    raw: bytes  # as read (at most limit + 2 bytes)
    whole: bool = True  # False: the rest of this oversized line is still to be read

    @property
    def text(self) -> bytes:
        """The line as read, without its newline."""
        return self.raw[:-1] if self.raw.endswith(b"\n") else self.raw


def _read(
    source: Input,
    raw_stream: IO[bytes],
    limit: int,
    spans: bool,
    found: _Found,
    how: tuple[bool, Spill | None],
) -> Iterator[Message | Block | Span]:
    verbatim, spill = how
    stream = _decompressed(raw_stream)
    lines = source.lines
    seen: list[_Line] = []
    if lines is None:
        lines, seen = _sniff(stream, limit)
    if lines:
        for line in seen:
            where = f"{source.name}:{line.number}"
            if line.size > limit:
                found.content = True
                # Only the last line read to decide can be cut short: the rest follows now.
                rest = 0 if line.whole else None
                yield _oversized(where, line.text, stream, limit, spill, rest)
            elif line.body:
                found.content = True
                yield Message(where, line.text if verbatim else line.body, line.size)
        start = len(seen) + 1
        identity = _regular(stream) if spans and source.path is not None else None
        if identity is not None and source.path is not None:
            reader = cast(io.BufferedReader, stream)
            yield from _spans(
                reader, source.name, source.path, identity, limit, start, found, spill
            )
        else:
            yield from _blocks(stream, source.name, limit, start, found, spill)
        return
    # One document: the lines read to decide, byte for byte, then the rest up to the limit.
    head = b"".join(line.raw for line in seen)
    body = head + _read_at_most(stream, limit + 1 - len(head))
    if len(body) > limit:
        found.content = True
        yield _oversized(source.name, body, stream, limit, spill, None, whole_input=True)
    elif body.strip(JSON_WHITESPACE):
        found.content = True
        yield Message(source.name, body, len(body))


def _read_at_most(stream: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes of ``stream``, read in fixed chunks.

    ``read(size)`` sets aside ``size`` bytes before it reads one, which a large limit turns into
    a ``MemoryError`` for a small file.
    """
    parts = []
    while size > 0 and (chunk := stream.read(min(size, SKIP_CHUNK))):
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _oversized(
    source: str,
    head: bytes,
    stream: IO[bytes],
    limit: int,
    spill: Spill | None,
    rest: int | None,
    *,
    whole_input: bool = False,
) -> Message:
    """The too-large message that starts with ``head``, its rest read from ``stream``.

    ``rest`` is ``0`` when ``head`` is the whole message; ``None`` when the rest of the line
    (of the input, with ``whole_input``) is still in ``stream``: it is dropped in fixed chunks,
    or handed to ``spill`` after ``head``.
    """
    if spill is not None:
        spill(head)
    if rest is None:
        rest = _skip(stream, spill) if whole_input else _skip_line(stream, spill)
    return Message(source, head[: limit + 1], len(head) + rest)


def _decompressed(stream: IO[bytes]) -> IO[bytes]:
    peek = getattr(stream, "peek", None)
    if peek is None:  # not buffered: peeking needs a buffer
        buffered = io.BufferedReader(cast(Any, stream))
        stream, peek = cast(IO[bytes], buffered), buffered.peek
    if peek(2)[:2] == GZIP_MAGIC:
        return cast(IO[bytes], gzip.GzipFile(fileobj=stream, mode="rb"))
    return stream


def _sniff(stream: IO[bytes], limit: int) -> tuple[bool, list[_Line]]:
    """Whether the input is NDJSON, and the lines read to decide.

    NDJSON when the first non-blank line is a complete JSON value and a non-blank line follows.
    An oversized line ends the lines read, its rest still in ``stream`` (``_Line.whole``).
    """
    seen: list[_Line] = []
    content: list[_Line] = []
    while len(content) < 2:
        line = _line(stream, limit, len(seen) + 1, rest=False)
        if line is None:
            break
        seen.append(line)
        if line.body:
            content.append(line)
        if line.size > limit:
            # An oversized line: read as lines, it is one too-large message, not a whole input.
            return True, seen
    # A UTF-8 byte order mark (Windows tools write one) does not make NDJSON one document: the
    # lines are still told apart, and the first is json.invalid, as check reads it.
    return len(content) == 2 and _whole_value(content[0].body.removeprefix(UTF8_BOM)), seen


def _whole_value(text: bytes) -> bool:
    """Whether ``text`` is one whole JSON value as ``check`` reads it.

    pydantic's parser, as ``check``'s: a line with NaN or ``1e400``, which ``check`` refuses
    at their members, is a whole value, and so is one with an integer past the parser's
    4,300 digits, tried again with 2^64 in its place (:func:`without_long_integers`).
    """
    try:
        from_json(text, allow_inf_nan=True)
    except ValueError as exc:
        said = str(exc)
        if "number out of range" not in said:
            return False
        stand_in = without_long_integers(text, said)
        return stand_in is not None and _whole_value(stand_in)
    return True


def _blocks(
    stream: IO[bytes], name: str, limit: int, start: int, found: _Found, spill: Spill | None
) -> Iterator[Message | Block]:
    """The rest of an NDJSON input as blocks of whole lines.

    A block is what one read returns (at most ``BLOCK`` bytes; a stream's read returns what has
    arrived, so a slow producer's lines are validated as they come) and the rest of its last
    line, read up to the limit plus two bytes: a longer line comes after the block as a
    too-large ``Message`` with its size, its rest skipped in fixed chunks (or spilled) then.
    """
    read = getattr(stream, "read1", stream.read)
    number = start
    while block := read(BLOCK):
        head = b""  # the start of a last line that runs past the limit
        if not block.endswith(b"\n"):
            cut = block.rfind(b"\n") + 1
            need = limit + 2 - (len(block) - cut)
            tail = stream.readline(need) if need > 0 else b""
            if tail.endswith(b"\n") or len(tail) < need:
                block += tail  # the last line whole (or the input's end)
            else:
                head = block[cut:] + tail
                block = block[:cut]
        if block:
            if not found.content:  # one C search, until the input's first message
                found.content = _CONTENT.search(block) is not None
            yield Block(name, number, block)
            number += block.count(b"\n")  # a block ends with a newline unless the input ends
        if head:
            found.content = True
            yield _oversized(f"{name}:{number}", head, stream, limit, spill, None)
            number += 1


def _regular(stream: IO[bytes]) -> tuple[int, int] | None:
    """A plain regular file's ``(st_dev, st_ino)``; ``None`` for gzip, a FIFO, a device."""
    if not isinstance(stream, io.BufferedReader):  # gzip, or a stream of the caller's
        return None
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def _spans(
    stream: io.BufferedReader,
    name: str,
    path: Path,
    identity: tuple[int, int],
    limit: int,
    start: int,
    found: _Found,
    spill: Spill | None = None,
) -> Iterator[Message | Span]:
    """``_blocks`` of a regular file, as spans (``Span``): the same lines in the same blocks.

    Each block is read into one buffer, reused, only to find its last line's end and count its
    lines: no bytes object per block, and nothing of it to hand on.
    """
    buffer = bytearray(BLOCK)
    view = memoryview(buffer)
    number = start
    offset = stream.tell()
    while size := stream.readinto(view):
        head = b""  # the start of a last line that runs past the limit
        length, lines = size, buffer.count(b"\n", 0, size)
        tail = b""
        if buffer[size - 1] != 0x0A:
            cut = buffer.rfind(b"\n", 0, size) + 1
            need = limit + 2 - (size - cut)
            tail = stream.readline(need) if need > 0 else b""
            if tail.endswith(b"\n") or len(tail) < need:
                length += len(tail)  # the last line whole (or the input's end)
                lines += tail.endswith(b"\n")
            else:
                head = bytes(view[cut:size]) + tail
                length = cut
        if length:
            if not found.content:  # the span's bytes, searched in place until a message
                found.content = bool(
                    _CONTENT.search(buffer, 0, min(length, size))
                    or (length > size and _CONTENT.search(tail))
                )
            yield Span(name, number, path, offset, length, identity)
            number += lines
        if head:
            found.content = True
            yield _oversized(f"{name}:{number}", head, stream, limit, spill, None)
            number += 1
        offset = stream.tell()


def _skip_line(stream: IO[bytes], spill: Spill | None = None) -> int:
    """Read the rest of a line in fixed chunks; its length without the newline.

    ``spill``, if any, is handed the chunks (the newline left out).
    """
    size = 0
    while more := stream.readline(SKIP_CHUNK):
        ends = more.endswith(b"\n")
        if ends:
            more = more[:-1]
        size += len(more)
        if spill is not None and more:
            spill(more)
        if ends:
            break
    return size


def _line(stream: IO[bytes], limit: int, number: int, *, rest: bool = True) -> _Line | None:
    """The next line, or ``None`` at the end.

    At most ``limit`` + 2 bytes are held (the message, one byte over, the newline); the rest of a
    longer line is read and dropped in fixed chunks, or with ``rest`` false left in ``stream``
    (the line is not ``whole``).
    """
    raw = stream.readline(limit + 2)
    if not raw:
        return None
    size = len(raw)
    if raw.endswith(b"\n"):
        return _Line(number, raw.strip(JSON_WHITESPACE), size - 1, raw)
    if size < limit + 2:
        return _Line(number, raw.strip(JSON_WHITESPACE), size, raw)
    if not rest:
        return _Line(number, raw[: limit + 1], size, raw, whole=False)
    return _Line(number, raw[: limit + 1], size + _skip_line(stream), raw)


def _skip(stream: IO[bytes], spill: Spill | None = None) -> int:
    """Read the rest of ``stream`` in fixed chunks (to ``spill``, if any); its length."""
    skipped = 0
    while chunk := stream.read(SKIP_CHUNK):
        skipped += len(chunk)
        if spill is not None:
            spill(chunk)
    return skipped
