"""Objects that repeat a member name (``json.duplicate_key``), found at a cost linear in the text.

:func:`duplicate_keys` first asks of a text up to :data:`PRETEST_BYTES` (a message, as the command
line reads them) a cheap exact question, whether it repeats a name at all (:func:`may_repeat`: one
orjson parse, one write back, two byte counts). Only a text that does, that orjson does not read,
or a larger one, is scanned in full. orjson, pydantic and most parsers keep one value per name (the
last), so the names must be read from the text; the standard library's pairs parse does that, at
three to six times orjson's cost when every object is parsed into pairs (issue 12). The scan parses
in pairs only what needs it:

1. Innermost objects (no bracket inside them outside strings) are cut out of the text, each
   becoming ``{}`` with its own text kept, or ``0`` when it has at most one member (it cannot
   repeat a name); in a dense text (many small objects) these are nearly all the objects. Where
   objects follow one another in an array (``},{``, the shape of a dense text), the text is cut
   at each ``},{`` and each piece's outline (the colons and commas outside its strings) says
   whether it is an innermost object and how many members it has: a few C passes over the text,
   no Python object but a piece an object. Where those pieces are written alike (a dense text
   repeats a few), each distinct piece's own outline is read instead of the whole text's (its
   strings, escapes and brackets in strings read once a distinct piece). Where objects are the
   values of members one after another (``},"``), the longest stretch of them is read the same
   way, a name and a text a member; of the members of one name only the first (its value
   ``0``) and the last (alive) are kept. The rest (and a text with no such run) is cut by
   regular expressions, the brackets inside strings hidden first when there are any; innermost
   arrays become ``0`` too.
2. What is left, the reduced text, is parsed in pairs (``object_pairs_hook=tuple``); a ``{}`` in it
   parses as the empty tuple, the placeholder of the next innermost object in document order.
3. The reduced tree is walked once, a Python step per container and C passes over members, in
   document order. An object that repeats a name keeps only the last value of each name (the
   value every last-wins parser sees): earlier values are only counted past, never reported, as
   before. The walk notes each repeating object's names and each run of placeholders still alive.
4. The innermost objects alive are read in bulk, a chunk at a time: orjson's parse of them,
   joined, gives each one's distinct names; a member count above the distinct count is a
   repeat. Objects written alike are read a distinct text at a time (parsed, counted, and their
   repeats found by a set's lookup an object). An object with one extra member, or of one
   distinct name, repeats one name; the names of the others (two extra members or more) are
   counted together, each distinct object text once (a dense text repeats a few), found by one
   split (where every string is a name) or one regular expression. Objects each distinct (a
   counter in each) of at most 16 members are counted by places: each pair of places compared
   across all of them in one C pass; where they are records (the same names in the same
   places, values aside), one pass a place proves it, and the first object's names alone are
   read and counted. After a chunk in which most objects (every one, after a chunk so read)
   repeated two names or more, the next is read by its names first: the places say which
   objects repeat as well as how many names, and the chunk is not parsed.

Findings come in document order (an object's own names in the order they first appear, then what
its members hold), and at most ``limit`` are built: the rest are counted exactly, by C passes, and
reported as one ``violations.truncated``.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate, chain, compress, count, islice, repeat
from operator import and_, countOf, eq, is_, itemgetter, lt, ne, truth
from typing import Any, Final, cast

import orjson

from . import rules
from ._collector import CollectorPaused
from ._json import OUTLINE_ONLY, neutral, outside, outside_strings, segment, unquoted
from ._violations import Violation, shown, truncated, violation

__all__ = ["PRETEST_BYTES", "duplicate_keys", "may_repeat"]


def duplicate_keys(raw: bytes | str, limit: int | None = None) -> list[Violation]:
    """``json.duplicate_key`` for every member name an object repeats, pointing at the member.

    Text the scan finds is not JSON yields nothing; it does not parse every object it sets
    apart, so a text that is not JSON may still yield findings, which ``check`` drops when
    validation reports ``json.invalid``.

    Args:
        raw: the JSON text (a str may hold lone surrogates, as ``json.loads`` reads them).
        limit: build at most this many findings; past it, one ``violations.truncated`` counts
            the rest exactly (none are built for it).
    """
    # A large text goes straight to the scan: orjson's tree of it costs as much memory as the
    # scan, and as much time again when the text does repeat names.
    if len(raw) <= PRETEST_BYTES and not may_repeat(raw):
        return []
    # The scan allocates containers (a piece an object, orjson's dicts, pairs) and frees none
    # until it ends: the cyclic collector would only walk them, and the caller's heap, again and
    # again (a third of orjson's own parse of a dense text).
    with CollectorPaused():
        return _Scan(raw).findings(limit)


PRETEST_BYTES: Final = 65_536
"""Up to this size :func:`duplicate_keys` asks :func:`may_repeat` before scanning."""


def may_repeat(raw: bytes | str) -> bool:
    r"""Whether some object in ``raw`` may repeat a member name (a fast test, exact when no).

    A JSON text has one ``:`` outside strings per member, and orjson's parse keeps one member per
    distinct name; writing the parse back gives one ``:`` per member kept, and the strings' own
    colons unchanged, unless a colon in a string was written as an escape (``\\u003a``). So a
    text repeats a name exactly when it has more colons than its parse written back. A text
    with such an escape counts its colons outside strings instead; one orjson does not read
    (NaN, integers beyond 64 bits, lone surrogates, not JSON) takes the full scan.
    """
    encoded = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    try:
        document = orjson.loads(encoded)
    except orjson.JSONDecodeError:
        return True
    written = orjson.dumps(document)
    if encoded.find(b"u003") == -1 or (
        encoded.find(b"u003a") == -1 and encoded.find(b"u003A") == -1
    ):
        return encoded.count(b":") != written.count(b":")
    return _members(encoded) != _members(written)


def _members(text: bytes) -> int:
    """The colons of ``text`` outside its strings: one per member."""
    return outside(text, _NOT_COLON_OR_QUOTE).count(b":")


_NOT_COLON_OR_QUOTE: Final = bytes(range(256)).translate(None, b'":')
_NOT_OBJECT_SKELETON: Final = bytes(range(256)).translate(None, b'":{')
_NOT_SPACE: Final = bytes(range(256)).translate(None, b" \t\n\r")
_SPACED: Final = b":, \t\n\r"  # what an innermost object's outline holds
# An object's outline length (2m - 1 for m members) to m, and to whether it may repeat a name.
_HALVES: Final = bytes((n + 1) // 2 for n in range(256))
_MANY: Final = bytes(n > 1 for n in range(256))
_VALUES: Final = (b'":0', b'":{}')  # a member kept in a run: its value shadowed, or alive
_RUN: Final = 64  # objects one after the other that make a text worth reading as a run
# Innermost containers, with no bracket inside (a string's brackets are hidden first). An array,
# or an object without a comma (at most one member), cannot repeat a name: each becomes `0`.
_NO_REPEAT: Final = re.compile(rb"\[[^\[\]{}]*\]|\{[^\[\]{},]*\}")
_INNERMOST_OBJECT: Final = re.compile(rb"\{([^\[\]{}]*)\}")
# Brackets inside strings become bytes that UTF-8 never holds, and back.
_HIDE: Final = bytes.maketrans(b"[]{}", b"\xf8\xf9\xfa\xfb")
_SHOW: Final = bytes.maketrans(b"\xf8\xf9\xfa\xfb", b"[]{}")
_BRACKETS: Final = (b"[", b"]", b"{", b"}")
# What `{}` parses to with object_pairs_hook=tuple: `tuple([])`, which CPython (the only Python
# orjson runs on) returns as the one empty tuple, so that `is` finds the placeholders.
_PLACEHOLDER: Final[tuple[()]] = ()
_CONTAINERS: Final = frozenset({tuple, list})
_NAME: Final = itemgetter(0)
_VALUE: Final = itemgetter(1)
_CHUNK: Final = 4096  # innermost objects read per orjson parse (bounds the dicts alive at once)
# A text whose first chunk of innermost objects holds at most one distinct text in this many
# is read a distinct text at a time (_Scan._alike): a dense text repeats a few objects.
_ALIKE: Final = 4
# Objects of at most this many members have their repeats counted by places (C passes a pair
# of places; a Counter's pair a member past it).
_PLACES: Final = 16
_FEW: Final = 4  # distinct texts counted one at a time (list.count), not by one Counter
_MESSAGE: Final = "The member {} appears more than once; JSON parsers disagree on which value wins."


class _NotJson(Exception):
    """The text is not JSON to the standard library: no finding (validation says json.invalid)."""


class _Scan:
    """One text's full scan: the reduced tree's walk, then the innermost objects it left alive.

    Attributes:
        events: in document order, ``(pointer, names)`` for an object of the reduced tree that
            repeats names, and ``(pointer, node, positions, first)`` for a run of alive innermost
            objects: the values at ``positions`` of ``node`` (a pairs tuple or a list; ``None``
            for the root), which are ``alive[first:first + len(positions)]``.
        alive: the document-order numbers of the innermost objects that are not inside an
            earlier value of a repeated name.
    """

    def __init__(self, raw: bytes | str) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.alive: list[int] = []
        self.seen = 0  # innermost objects passed so far, alive or not
        if isinstance(raw, str):
            self.errors = "surrogatepass"
            encoded = raw.encode("utf-8", "surrogatepass")
        else:
            self.errors = "strict"
            encoded = raw
        self.encoded = encoded
        self.objects: list[bytes] = []  # each innermost object's text between its braces
        self.members: list[int | None] = []  # and its members, where a run gave them
        self.distinct: dict[int, Any] = {}  # orjson's parse of the first objects that repeat
        self.named = 0  # the names the reduced tree's objects repeat

    def findings(self, limit: int | None) -> list[Violation]:
        """The findings in document order, at most ``limit`` built; none for text not JSON."""
        try:
            root = self._reduced_tree()
            self._walk(root)
            repeating, repeated = self._innermost(self.alive, limit)
            return self._report(repeating, repeated, limit)
        except _NotJson:
            return []

    def _reduced_tree(self) -> Any:
        """Steps 1 and 2: the innermost objects' texts kept, the rest parsed in pairs."""
        text = self.encoded
        if self.errors == "strict":
            try:
                text.decode("utf-8")
            except UnicodeDecodeError:
                raise _NotJson from None
        reduced = None
        # Enough members and objects for a run (counted by memchr, before any outline).
        members = _at_least(text, b":", _RUN) and _at_least(text, b"}", _RUN)
        if members:
            reduced = self._alike_run(text)
        if reduced is None and members:  # the outline read once for both kinds of run
            outline = outside(text, OUTLINE_ONLY)
            reduced = self._runs(text, outline)
            if reduced is None:
                reduced = self._members_run(text, outline)
        if reduced is None:
            reduced = self._cut(text)
        try:
            return json.loads(reduced.decode("utf-8", self.errors), object_pairs_hook=tuple)
        except (ValueError, RecursionError):
            raise _NotJson from None

    def _runs(self, text: bytes, outline: bytes) -> bytes | None:
        """Step 1 for a text made of objects one after the other (``},{``), else ``None``.

        Between two ``},{`` outside strings is a whole object, innermost when its outline (the
        brackets, colons, commas and spaces outside strings) is colons and commas only: then
        the piece is its text and the outline gives its members, with no regular expression.
        The ends of the text, and the few pieces that are more than one such object, are cut
        by :meth:`_cut`. ``outline`` is the text's names and scalars dropped, spaces and commas
        kept: it holds a ``},{`` exactly where the text holds one outside strings.
        """
        # Objects one after another (counted in the outline, shorter than the text).
        found = outline.count(b"},{")
        if found < _RUN and outline.find(b"}, {") != -1:
            found += outline.count(b"}, {")
        if found < _RUN:
            return None
        for empty in (b"{}", b"[]"):  # none can repeat a name: `0`, unless one is in a string
            found = outline.count(empty)
            if found and text.count(empty) == found:
                text, outline = text.replace(empty, b"0"), outline.replace(empty, b"")
        found = outline.count(b"}, {")  # as the standard library writes by default
        if found and text.count(b"}, {") == found:
            text, outline = text.replace(b"}, {", b"},{"), outline.replace(b"}, {", b"},{")
        pieces, outlines = text.split(b"},{"), outline.split(b"},{")
        if len(pieces) < _RUN or len(outlines) != len(pieces):
            return None  # a `},{` in a string
        texts, shapes = pieces[1:-1], outlines[1:-1]
        # The pieces that are not an object's text alone (a bracket in the outline: an object
        # one level down, a scalar or an empty one between) are cut by _cut.
        joined = b"\x00".join(shapes)
        marks = joined.translate(None, _SPACED)
        others = list(compress(count(), marks.split(b"\x00"))) if marks.strip(b"\x00") else []
        if joined.translate(None, _NOT_SPACE):  # spaces between members: not counted
            shapes = joined.translate(None, b" \t\n\r").split(b"\x00")
        if len(others) > len(texts) // 8:
            return None
        return self._assembled(pieces, list(map(len, shapes)), others)

    def _alike_run(self, text: bytes) -> bytes | None:
        """Step 1 for a run of objects (``},{``) written alike, a distinct piece read once.

        A piece between two cuts that starts outside strings, and whose quotes are even (the
        escaped ones neutralised), ends outside strings: then the next cut is outside strings
        too, and the piece's own outline says whether it is an innermost object and how many
        members it has. So, from a head that ends outside strings, the distinct pieces alone
        are read, not the whole text's outline (its strings, escapes, brackets in strings).
        Returns ``None`` when the pieces are not written alike, or one is not read so.
        """
        # The first chunk's pieces first: a text of distinct objects is split no further.
        pieces = text.split(b"},{", _CHUNK + 1)
        texts = pieces[1:-1]
        if len(texts) < _RUN or len(set(texts)) * _ALIKE > len(texts):
            return None
        if len(pieces) == _CHUNK + 2:
            pieces[-1:] = pieces[-1].split(b"},{")
            texts = pieces[1:-1]
        distinct = dict.fromkeys(texts)
        if len(distinct) * _ALIKE > len(texts) or neutral(pieces[0]).count(b'"') % 2:
            return None
        # Each distinct piece's outline (its spaces dropped) is `:` and `,:` again when it is
        # an object's text alone; a bracket marks another piece (cut by _cut).
        lengths: dict[bytes, int] = {}
        others: set[bytes] = set()
        for piece in distinct:
            plain = neutral(piece)
            if plain.count(b'"') % 2:
                return None  # a cut inside a string
            shape = unquoted(plain.translate(None, OUTLINE_ONLY)).translate(None, b" \t\n\r")
            if shape.translate(None, b":,"):
                others.add(piece)
            lengths[piece] = len(shape)
        found = list(compress(count(), map(others.__contains__, texts))) if others else []
        if len(found) > len(texts) // 8:
            return None
        if len(lengths) == 1:  # one text, again and again (no lookup an object)
            return self._assembled(pieces, [*lengths.values()] * len(texts), found)
        return self._assembled(pieces, list(map(lengths.__getitem__, texts)), found)

    def _assembled(self, pieces: list[bytes], lengths: list[int], others: list[int]) -> bytes:
        """The reduced text of a run cut at each ``},{`` into ``pieces``.

        ``pieces[1:-1]`` are objects of outlines ``lengths`` long, but at ``others``; those and
        the two ends are cut by :meth:`_cut`.
        """
        texts = pieces[1:-1]
        parts = [self._cut(pieces[0] + b"}")]
        start = 0
        for end in [*others, len(texts)]:
            if end > start:
                many = self._add(texts[start:end], lengths[start:end])
                if many is None:
                    parts.append(b",{}" * (end - start))
                else:
                    parts.append(many.replace(b"\x00", b",0").replace(b"\x01", b",{}"))
            if end < len(texts):
                parts.append(b"," + self._cut(b"{" + texts[end] + b"}"))
            start = end + 1
        parts.append(b"," + self._cut(b"{" + pieces[-1]))
        return b"".join(parts)

    def _members_run(self, text: bytes, outline: bytes) -> bytes | None:
        """Step 1 for an object of members whose values are objects (``},"``), else ``None``.

        Between two ``},"`` outside strings is a member (``name":{...``), whose value is an
        innermost object when the outline between is ``{`` then colons and commas (the name's
        colon is the cut's): its name is before the piece's ``":{``. The longest stretch of
        such members is read by C passes over the text and its outline, no Python object but a
        name and a text a member; the rest of the text is cut by :meth:`_cut`. ``outline`` is
        as :meth:`_runs` reads it.
        """
        cuts = outline.count(b"},:")
        if cuts < _RUN or text.count(b'},"') != cuts or text.find(b"\x00") != -1:
            return None  # a `},"` in a string, or a string after an object in an array
        # Each cut before an object becomes `\x00`, any other `\x01`: with colons and commas
        # dropped, a member of an innermost object is a `\x00` followed by the next cut.
        marks = outline.replace(b"},:{", b"\x00").replace(b"},:", b"\x01").translate(None, b":,")
        start = marks.find(b"\x00\x00")
        if start == -1:
            return None
        rest = marks[start:]
        members = len(rest) - len(rest.lstrip(b"\x00")) - 1  # the last one's piece goes on
        before = marks.count(b"\x00", 0, start) + marks.count(b"\x01", 0, start)
        after = cuts - before - members
        if members < _RUN or before + after > _RUN:
            return None
        # The text's cuts around the stretch, found one by one from each end.
        first = -1
        for _ in range(before + 1):
            first = text.find(b'},"', first + 1)
        last = len(text)
        for _ in range(after):
            last = text.rfind(b'},"', 0, last)
        known = len(self.objects)
        head = self._cut(text[: first + 1])
        run = self._members(text[first + 3 : last])
        if run is None:  # the objects the head's cut kept are kept again by the whole text's
            del self.objects[known:], self.members[known:]
            return None
        return head + run + b"," + self._cut(text[last + 2 :])

    def _members(self, stretch: bytes) -> bytes | None:
        """Members ``name":{...}," ... name":{...`` of innermost objects: their reduced text.

        Of the members of one name, only the last one's value is alive (a last-wins parser
        keeps it), and the first one says where the name first appears: the reduced text keeps
        those two, the first with the value ``0``, the last with ``{}`` (the next placeholder)
        when its object may repeat a name, else ``0``. A run of many members of a few names is
        then parsed in pairs as a few.
        """
        parts = stretch.replace(b'},"', b"\x00").replace(b'":{', b"\x00").split(b"\x00")
        if len(parts) % 2 or stretch.count(b'":{') * 2 != len(parts):
            return None  # a `":{` in a string
        written: list[bytes] = parts[0::2]
        bodies = parts[1::2]
        del parts  # its pieces live on in the two lists (the peak, at 1 MiB of members)
        names: list[Any] = written
        if b"".join(written).find(b"\\") != -1:  # escapes: names as the parser reads them
            try:
                names = json.loads(b'["' + b'","'.join(written) + b'"]')
            except (ValueError, RecursionError):
                return None
        last = dict(zip(names, count(), strict=False))
        kept: Any = range(len(names))
        ends: Any = None
        if len(last) < len(names):  # each name's first member and its last
            first = dict(zip(reversed(names), range(len(names) - 1, -1, -1), strict=False))
            kept = sorted({*first.values(), *last.values()})
            ends = set(last.values())
            written = list(map(written.__getitem__, kept))
            bodies = list(map(bodies.__getitem__, kept))
            del first
        del last, names
        distinct = dict.fromkeys(bodies)
        if len(distinct) * _ALIKE <= len(bodies):  # objects written alike: each counted once
            counted = dict(zip(distinct, _member_counts(list(distinct)), strict=True))
            sizes = list(map(counted.__getitem__, bodies))
        else:
            sizes = _member_counts(bodies)
        del distinct
        alive = bytes(map(lt, repeat(1), sizes))  # an object of one member cannot repeat
        if ends is not None:
            alive = bytes(map(and_, map(ends.__contains__, kept), alive))
        self.objects += compress(bodies, alive)
        self.members += compress(sizes, alive)
        if alive.find(0) == -1:  # each one the next placeholder
            return b',"' + b'":{},"'.join(written) + b'":{}'
        values = map(_VALUES.__getitem__, alive)
        return b"".join(chain.from_iterable(zip(repeat(b',"'), written, values, strict=False)))

    def _add(self, texts: list[bytes], lengths: Any) -> bytes | None:
        """The innermost objects ``texts`` of outlines (``:`` and ``,:`` again) ``lengths`` long.

        An outline of length 2m - 1 is m members. An object of a member or none cannot repeat
        a name: it becomes ``0``, as in :meth:`_cut`; the others are the next placeholders.
        Returns ``None`` when every one may repeat, else which may (a byte each).
        """
        try:  # a byte a length, while they fit (an object of 128 members or more is rare)
            lengths = bytes(lengths)
            many: bytes = lengths.translate(_MANY)
            sizes: Any = lengths.translate(_HALVES)
        except ValueError:
            many = bytes(map(lt, repeat(1), lengths))
            sizes = map((1).__add__, map((2).__rfloordiv__, lengths))
        if many.find(0) == -1:
            self.objects += texts
            self.members += sizes
            return None
        self.objects += compress(texts, many)
        self.members += compress(sizes, many)
        return many

    def _cut(self, text: bytes) -> bytes:
        """Step 1 by regular expressions: ``text`` with its innermost objects cut out."""
        brackets = sum(map(text.count, _BRACKETS))
        hidden = bool(brackets) and len(outside_strings(text)) != brackets
        if hidden:
            text = _strings_hidden(text)
        # Empty ones first, by plain replaces (no bracket is left inside a string).
        flat = text.replace(b"{}", b"0").replace(b"[]", b"0")
        flat = _NO_REPEAT.sub(b"0", flat)
        parts = _INNERMOST_OBJECT.split(flat)
        objects = parts[1::2]
        reduced = b"{}".join(parts[0::2])
        if hidden:
            objects = list(map(bytes.translate, objects, repeat(_SHOW)))
            reduced = reduced.translate(_SHOW)
        if objects:
            self.objects += objects
            self.members += repeat(None, len(objects))  # counted when read, if alive
        return reduced

    def _walk(self, root: Any) -> None:
        """Step 3: the reduced tree in document order, a Python step per container."""
        if root is _PLACEHOLDER:  # the text is one innermost object
            self.events.append(("", None, [None], 0))
            self.alive.append(0)
            return
        if type(root) not in _CONTAINERS or not root:
            return
        # Entries: (node, pointer, alive) for a container, (node, values, a, b, pointer, mask)
        # for the values a..b of an alive container between its container members.
        stack: list[tuple[Any, ...]] = [(root, "", True)]
        while stack:
            entry = stack.pop()
            if len(entry) == 6:
                self._run(*entry)
                continue
            node, at, live = entry
            if not live:
                self._pass(node, stack)
                continue
            if len(node) == 1:  # one member: no repeat, and at most one thing below
                value = node[0][1] if type(node) is tuple else node[0]
                if value is _PLACEHOLDER:
                    self.events.append((at, node, (0,), len(self.alive)))
                    self.alive.append(self.seen)
                    self.seen += 1
                elif value and type(value) in _CONTAINERS:
                    stack.append(
                        (value, at + segment(node[0][0] if type(node) is tuple else 0), True)
                    )
                continue
            last: dict[str, int] | None = None
            names: list[str] | None = None
            values: Any = node
            if type(node) is tuple:
                names = list(map(_NAME, node))
                values = list(map(_VALUE, node))
                # Each name's last member: the one a last-wins parser keeps.
                last = dict(zip(names, count(), strict=False))
                if len(last) == len(node):
                    last = None
                else:
                    repeated = [names[0]]  # one name, every member
                    if len(last) > 1:
                        counts = Counter(names)
                        repeated = list(compress(counts, map((1).__lt__, counts.values())))
                    self.events.append((at, repeated))
                    self.named += len(repeated)
            kinds = set(map(type, values))
            placeholders = countOf(values, _PLACEHOLDER) if tuple in kinds else 0
            if list not in kinds and (
                tuple not in kinds or countOf(map(type, values), tuple) == placeholders
            ):  # no container below but placeholders: one run
                if placeholders:
                    self._placeholders(node, values, at, last, placeholders)
                continue
            mask = None
            if last is not None and names is not None:
                mask = list(map(eq, map(last.__getitem__, names), count()))
            # Containers to walk: tuples and lists, but for the placeholders (empty tuples).
            inner = list(compress(count(), map(_CONTAINERS.__contains__, map(type, values))))
            if placeholders:
                inner = list(compress(inner, map(truth, map(values.__getitem__, inner))))
            ends = [*inner, len(values)]
            starts = [0, *map((1).__add__, inner)]
            # Pushed in reverse, so that they are taken in document order.
            for i in reversed(range(len(ends))):
                a, b = starts[i], ends[i]
                if b > a:
                    stack.append((node, values, a, b, at, mask))
                if i:
                    j = inner[i - 1]
                    key = names[j] if names is not None else j
                    stack.append((values[j], at + segment(key), mask is None or mask[j]))

    def _run(
        self, node: Any, values: Any, a: int, b: int, at: str, mask: list[bool] | None
    ) -> None:
        """The placeholders among ``values[a:b]`` of an alive container, in document order."""
        part = values[a:b]
        found = countOf(part, _PLACEHOLDER)
        if not found:
            return
        is_placeholder = list(map(is_, part, repeat(_PLACEHOLDER)))
        if mask is None:
            positions = list(compress(range(a, b), is_placeholder))
            self.alive.extend(range(self.seen, self.seen + found))
        else:
            live = mask[a:b]
            positions = list(compress(range(a, b), map(bool.__and__, is_placeholder, live)))
            self.alive.extend(compress(count(self.seen), compress(live, is_placeholder)))
        if positions:
            self.events.append((at, node, positions, len(self.alive) - len(positions)))
        self.seen += found

    def _placeholders(
        self, node: Any, values: list[Any], at: str, last: dict[str, int] | None, found: int
    ) -> None:
        """A container whose only containers are placeholders: its run, in C passes.

        ``last`` is each name's last member when the object repeats a name: only those are
        alive, found among the distinct names instead of every member.
        """
        every = found == len(values)
        if last is None:
            positions: Any = (
                range(found)
                if every
                else list(compress(count(), map(is_, values, repeat(_PLACEHOLDER))))
            )
            self.alive.extend(range(self.seen, self.seen + found))
        else:
            kept = sorted(last.values())
            positions = list(
                compress(kept, map(is_, map(values.__getitem__, kept), repeat(_PLACEHOLDER)))
            )
            if every:
                self.alive.extend(map(self.seen.__add__, positions))
            else:  # a placeholder's number: how many come before it
                every_one = compress(count(), map(is_, values, repeat(_PLACEHOLDER)))
                number = dict(zip(every_one, count(self.seen), strict=False))
                self.alive.extend(map(number.__getitem__, positions))
        if positions:
            self.events.append((at, node, positions, len(self.alive) - len(positions)))
        self.seen += found

    def _pass(self, node: Any, stack: list[tuple[Any, ...]]) -> None:
        """A container inside an earlier value of a repeated name: its placeholders counted past."""
        values: Any = list(map(_VALUE, node)) if type(node) is tuple else node
        self.seen += countOf(values, _PLACEHOLDER)
        inner = filter(None, compress(values, map(_CONTAINERS.__contains__, map(type, values))))
        stack.extend(zip(inner, repeat(""), repeat(False)))

    def _innermost(self, alive: list[int], limit: int | None) -> tuple[list[int], int]:
        """Step 4: which alive innermost objects repeat a name, and how many names in all.

        In C passes, a chunk of objects at a time: orjson's parse gives each one's distinct
        names, to set against its members (after a chunk of objects most of which repeat two
        names or more, their names read by places instead: :meth:`_by_names`). Returns the
        places in ``alive`` (ascending) of those that repeat (the first ``limit`` at least), and
        the total.
        """
        objects, members = self.objects, self.members
        every = len(alive) == len(objects)  # nothing shadowed: alive[i] is i
        if len(alive) >= _RUN:
            texts = objects if every else list(map(objects.__getitem__, alive))
            first = texts[:_CHUNK]
            if len(set(first)) * _ALIKE <= len(first):
                return self._alike(texts, limit)
        repeating: list[int] = []
        total = 0
        by_names = False  # most of the last chunk's objects repeated two names or more
        for start in range(0, len(alive), _CHUNK):
            end = min(start + _CHUNK, len(alive))
            if every:
                texts, known = objects[start:end], members[start:end]
            else:
                texts = list(map(objects.__getitem__, alive[start:end]))
                known = list(map(members.__getitem__, alive[start:end]))
            # Those cut by _cut are counted now (a run counted its own), and kept.
            sizes = self._sizes(texts, known, alive, start)
            joined = b"[{" + b"},{".join(texts) + b"}]"
            if by_names and max(sizes) <= _PLACES:
                # Their names would be read anyway: read first, they say which objects repeat
                # and how many names, and orjson's parse of the chunk is spared.
                found, marks = self._by_names(joined, sizes)
                total += found
                by_names = marks.find(0) == -1
                if limit is None or len(repeating) < limit:  # kept for the findings
                    repeating += compress(range(start, end), marks)
                continue
            parsed = _parsed(joined, self.errors)
            distinct = list(map(len, parsed))
            extra = sum(sizes) - sum(distinct)
            if not extra:  # no object of the chunk repeats a name
                continue
            # The objects that repeat a name: one name each when they have one extra member
            # each, else counted from their names.
            repeats = list(map(ne, sizes, distinct))
            found = countOf(repeats, True)
            total += found
            if extra > found:
                # Two extra members or more, and two distinct names or more: counted from the
                # names (one extra member, or one distinct name, is one name repeated).
                several = list(
                    map(and_, map(lt, map((1).__add__, distinct), sizes), map((1).__lt__, distinct))
                )
                if False in several:
                    counted = countOf(several, True)
                    chosen = list(compress(texts, several)), list(compress(sizes, several))
                    total += _repeated_total(*chosen, self.errors) - counted
                    # Most of them (a run of records but the envelope's own object before it):
                    # the next chunk is read by its names too.
                    by_names = 2 * counted >= len(several)
                else:  # every object of the chunk: its text already joined
                    total += _repeated_total(texts, sizes, self.errors, joined) - len(several)
                    by_names = True
            if limit is None or len(repeating) < limit:  # kept for the findings
                places = list(compress(range(start, end), repeats))
                repeating += places
                numbers = list(map(alive.__getitem__, places))
                self.distinct.update(zip(numbers, compress(parsed, repeats), strict=True))
        return repeating, total

    def _sizes(
        self, texts: list[bytes], known: list[int | None], alive: list[int], start: int
    ) -> list[int]:
        """The members of innermost objects ``texts`` (``alive[start:]``), ``known`` or counted.

        Only those ``known`` does not give are counted: a run knows its own, and only the
        objects cut by regular expressions (the ends of a run, an object between) are not.
        What is counted is kept (:attr:`members`), for the findings' names.
        """
        if None not in known:
            return cast("list[int]", known)
        unknown = list(compress(count(), map(is_, known, repeat(None))))
        sizes = list(known)
        counted = _member_counts(list(map(texts.__getitem__, unknown)))
        for place, size in zip(unknown, counted, strict=True):
            sizes[place] = size
            self.members[alive[start + place]] = size
        return cast("list[int]", sizes)

    def _by_names(self, joined: bytes, sizes: list[int]) -> tuple[int, bytes]:
        """The names ``joined`` objects (of ``sizes`` members) repeat, and which objects repeat.

        Read from their names by places (:func:`_repeats_by_place`), with no parse of the
        objects: the count, and a byte an object, 1 where it repeats a name.
        """
        try:
            found, repeating = _repeats(joined, sizes, self.errors)
        except (ValueError, RecursionError):
            raise _NotJson from None
        return found, repeating.to_bytes(len(sizes), "little")

    def _alike(self, texts: list[bytes], limit: int | None) -> tuple[list[int], int]:
        """Step 4 for objects written alike (a dense text repeats a few): each text read once.

        The distinct texts are parsed (orjson, a chunk at a time) and their members counted;
        the objects that repeat a name are those of the texts that do, found by a set's
        lookup each (in C). Returns what :meth:`_innermost` returns.
        """
        distinct = list(dict.fromkeys(texts))
        sizes = _member_counts(distinct)
        kept: list[int] = []  # each distinct text's names, as orjson keeps one a name
        for start in range(0, len(distinct), _CHUNK):
            joined = b"[{" + b"},{".join(distinct[start : start + _CHUNK]) + b"}]"
            kept += map(len, _parsed(joined, self.errors))
        repeats = list(map(ne, sizes, kept))
        if True not in repeats:
            return [], 0
        # How many times each text comes: a pass over the objects a text, for a few of them.
        if len(distinct) > _FEW:
            times = list(Counter(texts).values())
        else:
            times = list(map(texts.count, distinct))
        total = sum(compress(times, repeats))  # a name each, at least
        # Two extra members or more, and two distinct names or more: counted from the names.
        several = list(map(and_, map(lt, map((1).__add__, kept), sizes), map((1).__lt__, kept)))
        if True in several:
            total += _repeated_names(
                list(compress(distinct, several)),
                list(compress(sizes, several)),
                list(compress(times, several)),
                self.errors,
            ) - sum(compress(times, several))
        repeating = set(compress(distinct, repeats))
        places = compress(count(), map(repeating.__contains__, texts))
        return list(places if limit is None else islice(places, limit)), total

    def _names(self, number: int) -> list[str]:
        """The names innermost object ``number`` repeats, in the order they first appear."""
        text = self.objects[number]
        distinct = self.distinct.get(number)
        if distinct is None:
            distinct = _parsed(b"{" + text + b"}", self.errors)
        if len(distinct) == 1:  # one name, repeated: no member to read
            return list(distinct)
        members = self.members[number]
        if members is None:
            members = _member_counts([text])[0]
        return _names_in(b"{" + text + b"}", distinct, members, self.errors)

    def _report(self, repeating: list[int], repeated: int, limit: int | None) -> list[Violation]:
        """The findings in document order: at most ``limit`` built, the rest counted.

        ``repeating`` holds the places in ``alive`` (ascending) of the innermost objects that
        repeat a name, ``repeated`` how many names they repeat in all.
        """
        total = self.named + repeated
        room = total if limit is None else min(limit, total)
        found: list[Violation] = []
        for event in self.events:
            if len(found) >= room:
                break  # the rest is only counted, in the total
            if len(event) == 2:  # an object of the reduced tree: its names, already known
                at, names = event
                found.extend(_finding(at, name) for name in names[: room - len(found)])
                continue
            at, node, positions, first = event
            start = bisect_left(repeating, first)
            end = bisect_left(repeating, first + len(positions), start)
            # A Python step per object built, none for the others.
            for place in repeating[start:end]:
                if len(found) >= room:
                    break
                where = at
                if node is not None:
                    position = positions[place - first]
                    where += segment(node[position][0] if type(node) is tuple else position)
                names = self._names(self.alive[place])
                found.extend(_finding(where, name) for name in names[: room - len(found)])
        if total > len(found):
            found.append(truncated(total - len(found)))
        return found


def _at_least(text: bytes, byte: bytes, times: int) -> bool:
    """Whether ``byte`` is in ``text`` ``times`` times or more: its head counted first.

    A dense text shows them in its first few KiB, where a count of the whole text is a pass
    over all of it (0.3 ms a MiB).
    """
    return text.count(byte, 0, _HEAD) >= times or text.count(byte) >= times


_HEAD: Final = 4096


def _member_counts(objects: list[bytes]) -> list[int]:
    """The members of each innermost object (its text between braces): colons outside strings.

    Raises:
        _NotJson: an object leaves a string open (its quotes are odd), so that the braces
            joining the objects are not all outside strings: a count each cannot be read.
    """
    if not objects:
        return []
    skeleton = outside(b"{" + b"{".join(objects), _NOT_OBJECT_SKELETON)
    counts = list(map(len, skeleton.split(b"{")[1:]))
    if len(counts) != len(objects):
        raise _NotJson
    return counts


def _repeated_total(
    texts: list[bytes], sizes: list[int], errors: str, joined: bytes | None = None
) -> int:
    """How many names the innermost objects ``texts`` (between braces) repeat, all together.

    ``sizes`` are their members; ``joined`` their texts as :func:`_repeated_names` joins them,
    where the caller has it. Equal texts are read once when most are equal (a dense text
    repeats a few objects): :func:`_repeated_names`.
    """
    if not texts:
        return 0
    if len(set(texts)) * 2 > len(texts):  # mostly distinct (numbered): each read once anyway
        return _repeated_names(texts, sizes, None, errors, joined)
    weights = Counter(texts)
    sized = dict(zip(texts, sizes, strict=True))
    return _repeated_names(
        list(weights), list(map(sized.__getitem__, weights)), list(weights.values()), errors
    )


def _repeated_names(
    distinct: list[bytes],
    sizes: list[int],
    counts: list[int] | None,
    errors: str,
    joined: bytes | None = None,
) -> int:
    """How many names the innermost objects ``distinct`` repeat, ``counts`` times each.

    ``sizes`` are their members; ``counts`` ``None`` is once each; ``joined`` is
    ``[{...},{...}]`` of them, where the caller has built it already. The objects are read
    together in C passes over the members, none a Python step (:func:`_member_names`): objects
    each once, of a few members, by places (:func:`_repeats_by_place`); else each object's
    names, with a count each, less those it holds once.
    """
    if joined is None:
        joined = b"[{" + b"},{".join(distinct) + b"}]"
    if counts is None and max(sizes) <= _PLACES:
        return _repeats(joined, sizes, errors)[0]
    names = _member_names(joined, sum(sizes), errors)
    owners = chain.from_iterable(map(repeat, count(), sizes))
    seen = Counter(zip(owners, names, strict=False))
    repeats = map(lt, repeat(1), seen.values())
    if counts is None:
        return countOf(repeats, True)
    # The object of each name it repeats, weighed by how many times its text comes.
    return sum(map(counts.__getitem__, compress(map(_NAME, seen), repeats)))


def _repeats_by_place(names: list[Any], sizes: list[int]) -> tuple[int, int]:
    """How many names objects of ``sizes`` members (at most :data:`_PLACES`) repeat in all.

    ``names`` are their members' names, object after object. Each pair of places (the j-th and
    the k-th member) is compared across all the objects at once, a C pass, into an int of a
    bit an object (a byte's low bit); a name repeats where its first place (equal to no earlier
    one) equals a later one. A Python step a pair of places, none an object or a member.
    Returns the total and the objects that repeat a name, as such an int.
    """
    widest = max(sizes)
    if sizes.count(widest) == len(sizes):  # objects of one size: each place a slice
        places = [names[k::widest] for k in range(widest)]
        held = [-1] * widest
    else:
        starts = list(accumulate(sizes, initial=0))
        del starts[-1]
        # Past an object's members, its place is masked out: any name (or the padding) does.
        padded = [*names, *repeat(None, widest)]
        places = [list(map(padded.__getitem__, map(k.__add__, starts))) for k in range(widest)]
        held = [int.from_bytes(bytes(map(k.__lt__, sizes)), "little") for k in range(widest)]
    equal = {
        (j, k): int.from_bytes(bytes(map(eq, places[j], places[k])), "little") & held[k]
        for k in range(widest)
        for j in range(k)
    }
    total = repeating = 0
    for k in range(widest):
        earlier = later = 0
        for j in range(k):
            earlier |= equal[j, k]
        for j in range(k + 1, widest):
            later |= equal[k, j]
        first = later & ~earlier
        total += first.bit_count()
        repeating |= first
    return total, repeating


def _repeats(joined: bytes, sizes: list[int], errors: str) -> tuple[int, int]:
    """What :func:`_repeats_by_place` says of ``joined``'s objects (of ``sizes`` members).

    Objects that are records, the same names written the same way in the same places (values
    aside, as arrays of records are written), repeat what the first repeats: its names alone
    are read, and one C pass a place across the objects proves the rest equal to them.
    """
    written = _names_written(joined, sum(sizes))
    if written is None:
        names = _names_parsed(joined, errors)
    else:
        first = _record(written[0], sizes)
        if first is not None:
            counted = Counter(_as_read(first, written[1], errors)).values()
            repeated = countOf(map((1).__lt__, counted), True)
            return repeated * len(sizes), _every_one(len(sizes)) if repeated else 0
        names = _as_read(*written, errors)
    return _repeats_by_place(names, sizes)


def _record(names: list[bytes], sizes: list[int]) -> list[bytes] | None:
    """The first object's ``names`` where every object's are the same in the same places."""
    width, objects = sizes[0], len(sizes)
    if sizes.count(width) != objects:
        return None
    for place in range(width):
        if names[place::width].count(names[place]) != objects:
            return None
    return names[:width]


def _every_one(objects: int) -> int:
    """:func:`_repeats_by_place`'s int of a byte an object, with every object marked."""
    return int.from_bytes(b"\x01" * objects, "little")


def _member_names(joined: bytes, members: int, errors: str) -> list[Any]:
    """The names of the ``members`` members of ``joined``, a JSON text, as the parser reads them.

    As written, where :func:`_names_written` finds them, read as :func:`_as_read` reads
    them; otherwise the standard library's pairs parse gives them.
    """
    written = _names_written(joined, members)
    if written is None:
        return _names_parsed(joined, errors)
    return _as_read(*written, errors)


def _names_written(joined: bytes, members: int) -> tuple[list[bytes], bool] | None:
    r"""The names of the ``members`` members of ``joined`` as written, or ``None``.

    In a copy whose escaped backslashes and quotes are ``\x`` and ``\y`` (every quote left
    delimits): where there are as many strings as members, every string is a name, and one
    split gives them; else, where no colon follows white space, each name ends at a ``":``
    outside strings, and when there are as many ``":`` as members, no other, one regular
    expression finds them all. The flag says whether equal bytes are equal names: the text
    holds no ``\u`` or ``\/`` escape (a character then has one spelling).
    """
    escaped = joined.find(b"\\") != -1
    plain = joined.replace(b"\\\\", b"\\x").replace(b'\\"', b"\\y") if escaped else joined
    if plain.count(b'"') == 2 * members:
        # As many strings as members, each with a name: every string is a name (the values
        # of innermost objects are then numbers or literals), read by one split, no search.
        names = plain.split(b'"')[1::2]
    elif plain.count(b'":') == members and (
        max(map(plain.find, b" \t\n\r")) == -1 or plain.translate(_ONE_SPACE).find(b" :") == -1
    ):
        names = _NAME_END.findall(plain)
    else:
        return None
    return names, not escaped or _one_spelling(joined)


def _as_read(names: list[bytes], one_way: bool, errors: str) -> list[Any]:
    """Names as written (:func:`_names_written`), as the parser reads them where it matters.

    Where each character is spelled one way, equal bytes are equal names: they are kept as
    they are. Else their escapes are written back and they are read by one parse, as an array
    of strings.
    """
    if one_way:
        return names
    # Every backslash of the copy begins an escape; `\y` first, as a `\\` written back
    # before a `y` would read as one.
    written = b'","'.join(names).replace(b"\\y", b'\\"').replace(b"\\x", b"\\\\")
    decoded: list[str] = _parsed(b'["' + written + b'"]', errors)
    return decoded


def _names_parsed(joined: bytes, errors: str) -> list[Any]:
    """The member names of ``joined`` where they cannot be cut out as written."""
    if joined.find(b"\\") == -1:
        return list(_raw_names(joined))
    pairs = json.loads(joined.decode("utf-8", errors), object_pairs_hook=tuple)
    return list(map(_NAME, chain.from_iterable(pairs)))


def _one_spelling(text: bytes) -> bool:
    r"""Whether ``text`` holds no ``\u`` or ``\/`` escape: each character spelled one way.

    A search for two bytes steps through each backslash, and the texts read here are dense
    with them (0.17 ms for a chunk of 180 KB); a text with no ``u`` (or ``/``) at all is told
    by one ``memchr`` (2 µs).
    """
    return (text.find(b"u") == -1 or text.find(b"\\u") == -1) and (
        text.find(b"/") == -1 or text.find(b"\\/") == -1
    )


def _parsed(joined: bytes, errors: str) -> Any:
    try:
        return orjson.loads(joined)
    except orjson.JSONDecodeError:  # NaN, beyond 64 bits, a lone surrogate: the reference reads
        try:
            return json.loads(joined.decode("utf-8", errors))
        except (ValueError, RecursionError):
            raise _NotJson from None


def _names_in(text: bytes, distinct: Any, members: int, errors: str) -> list[str]:
    """The names the innermost object ``text`` repeats, as they first appear.

    ``distinct`` is the object parsed (one key a name), ``members`` its members.
    """
    if len(distinct) == 1:  # one name, repeated: no member to read
        return list(distinct)
    if members == len(distinct) + 1:  # one name, twice
        name = _twice(text, distinct, members, errors)
        if name is not None:
            return [name]
    if text.find(b"\\") == -1:  # no escape: the names are the raw strings before a colon
        counts = Counter(_raw_names(text))
        repeated = compress(counts, map((1).__lt__, counts.values()))
        return [name.decode("utf-8", errors) for name in repeated]
    pairs = json.loads(text.decode("utf-8", errors), object_pairs_hook=tuple)
    named = Counter(map(_NAME, pairs))
    return list(compress(named, map((1).__lt__, named.values())))


def _twice(text: bytes, distinct: dict[str, Any], members: int, errors: str) -> str | None:
    """The name the object ``text`` holds twice (its only repeat), or ``None`` if not found so.

    Up to the second member of that name, the text's names are the parse's, in order (a dict
    keeps each name where it first came); from there on each is the parse's one before. So
    the member where they first differ is found by halves of the text, a member's number
    being the names closed (``":``) before it, counted in C; in a text with no escape and no
    space, where each ``":`` ends a name and each ``,"`` begins one (their counts say so). A
    name the text holds twice is the one; any other reading gives ``None`` (the caller counts
    the names).
    """
    if (
        text.find(b"\\") != -1
        or text.translate(None, _NOT_SPACE)
        or not text.startswith(b'{"')
        or text.count(b'":') != members
        or text.count(b',"') != members - 1
    ):
        return None  # an escape, a space, or some `":` or `,"` in a string
    keys = list(distinct)
    good, number = 0, 0  # the member at `good` has the parse's name `number`
    bad = len(text)  # the first member from `bad` on (if any) has not
    while True:
        start = text.find(b',"', (good + bad) // 2, bad)
        if start <= good:
            start = text.find(b',"', good + 1, bad)
            if start == -1:  # no member between: the one at `bad` is the first that differs
                break
        found = number + text.count(b'":', good, start)
        end = text.find(b'":', start)
        if found < len(keys) and text[start + 2 : end] == keys[found].encode("utf-8", errors):
            good, number = start, found
        else:
            bad = start
    end = text.find(b'":', bad)
    if end == -1 or text.count(text[bad + 1 : end + 2]) < 2:  # `"name":` twice
        return None
    name: str = json.loads(text[bad + 1 : end + 1].decode("utf-8", errors))
    return name


def _strings_hidden(text: bytes) -> bytes:
    """``text`` with the brackets inside its strings hidden (a few C passes a string)."""
    plain = neutral(text)
    pieces = plain.split(b'"')
    if plain is not text:
        # The original's pieces are cut where the neutral copy's are: it differs from the
        # text only inside strings, and never in length. Piece i starts after i quotes.
        starts = list(accumulate(map((1).__add__, map(len, pieces)), initial=0))
        pieces = list(map(text.__getitem__, map(slice, starts, map((-1).__add__, starts[1:]))))
    pieces[1::2] = map(bytes.translate, pieces[1::2], repeat(_HIDE))
    return b'"'.join(pieces)


def _raw_names(text: bytes) -> Iterator[bytes]:
    """The member names of ``text``, a JSON text with no escape: each string before a colon."""
    pieces = text.split(b'"')
    after: Iterator[bytes] | list[bytes] = pieces[2::2]
    if max(map(text.find, _QUOTE_THEN_SPACE)) != -1:  # white space may come before a colon
        after = map(bytes.lstrip, after)
    return compress(pieces[1::2], map(bytes.startswith, after, repeat(b":")))


# A name, where every `":` ends one and no quote is left in a string: the string before it (a
# match that began at any other quote would hold the name's opening quote).
_NAME_END: Final = re.compile(rb'"([^"]*)":')
_QUOTE_THEN_SPACE: Final = (b'" ', b'"\t', b'"\n', b'"\r')
# White space as one kind, so that white space before a colon is one search (four were each
# a pass over a spaced text).
_ONE_SPACE: Final = bytes.maketrans(b"\t\n\r", b"   ")


def _finding(at: str, name: str) -> Violation:
    return violation(rules.JSON_DUPLICATE_KEY, at + segment(name), _MESSAGE.format(shown(name)))
