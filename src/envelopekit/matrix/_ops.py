"""Op and interface names: the page's conventions, checked by lints that report, never refuse.

The schema types ``op`` as any string. The page names two forms (matrix.md §5): domain ops
``<area>.<verb>`` (``fs.write``) and system ops ``$<verb>`` (``$join``, ``$reply``). Its own
example ``ExpandDir``, an interface-method name resolved against ``iface``, is outside both,
so an op off the convention is a warning (``op.convention``), never a violation.

The schemas type ``iface`` as any string too; the page writes it ``Name@N`` (``FsDaemon@1``,
matrix.md §2 and S-6), so an ``iface`` of another form is a warning (``iface.convention``).
"""

from __future__ import annotations

import re
import string
from typing import Final

from .. import rules
from .._violations import Violation, violation

__all__ = [
    "DOMAIN_OP_PATTERN",
    "IFACE_PATTERN",
    "JOIN_OP",
    "REPLY_OP",
    "REPLY_PREFIX",
    "SYSTEM_OPS",
    "SYSTEM_OP_PATTERN",
    "iface_problem",
    "iface_warnings",
    "is_system_op",
    "op_problem",
    "reply_inbox",
]

REPLY_OP: Final = "$reply"
"""The op of every response envelope (the schema's ``const``)."""
JOIN_OP: Final = "$join"
"""The one other system op the page names; its payload is not documented."""
SYSTEM_OPS: Final = frozenset({JOIN_OP, REPLY_OP})
"""The system ops known by name. Any ``$``-op is accepted (matrix.md §14.6)."""
REPLY_PREFIX: Final = "$replies."
"""The reply-inbox address prefix used in ``replyTo``: an address, not an op."""

DOMAIN_OP_PATTERN: Final = r"^[a-z][a-z0-9]*(?:\.[a-z][A-Za-z0-9]*)+$"
"""``<area>.<verb>``: a lowercase area, then one or more dot-separated camelCase verbs."""
SYSTEM_OP_PATTERN: Final = r"^\$[a-z][A-Za-z0-9]*$"
"""``$<verb>``: a ``$`` and one camelCase verb."""
IFACE_PATTERN: Final = r"^[A-Za-z][A-Za-z0-9]*@[0-9]+$"
"""``Name@N`` (matrix.md §2, inferred): an ASCII letter, ASCII letters and digits, ``@``, and
a version of ASCII digits, ``0`` included."""

_DOMAIN_RE: Final = re.compile(DOMAIN_OP_PATTERN)
_SYSTEM_RE: Final = re.compile(SYSTEM_OP_PATTERN)
_PASCAL_RE: Final = re.compile(r"^[A-Z][A-Za-z0-9]*$")
# Explicit ASCII ranges, never `\d` or `\w`: those take other scripts' digits and letters.
# No group and no overlap between the classes and `@`: linear in the iface's length.
_IFACE_RE: Final = re.compile(IFACE_PATTERN)
_IFACE_NAME_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# Past this length an op is read by byte methods, not by the patterns: Python's regex engine
# keeps state per repetition of DOMAIN_OP_PATTERN's group (75 MiB for a 1 MiB op), and a
# search for a dot not followed by a lowercase letter costs a match attempt per dot.
_PATTERN_CHARS: Final = 256


def _byte_classes() -> bytes:
    """A ``bytes.translate`` table: each byte of a long op as its class.

    A lowercase letter reads ``a``, an uppercase letter or a digit ``A``, a dot ``.``, and
    anything else ``?``.
    """
    table = bytearray(b"?" * 256)
    for letter in string.ascii_lowercase.encode():
        table[letter] = ord("a")
    for other in (string.ascii_uppercase + string.digits).encode():
        table[other] = ord("A")
    table[ord(".")] = ord(".")
    return bytes(table)


_CLASSES: Final = _byte_classes()


def _is_long_domain_op(op: str) -> bool:
    """``DOMAIN_OP_PATTERN``, read in a few passes of C over the op (any length)."""
    if not op.isascii():
        return False
    classes = op.encode("ascii").translate(_CLASSES)
    dot = classes.find(b".")
    # The area: a lowercase letter, then lowercase letters and digits; then every dot is
    # followed by a lowercase letter (no `..`, no `.A`, no `.0`, no trailing dot).
    return (
        dot > 0
        and classes.startswith(b"a")
        and classes.find(b"?") == -1
        and op[:dot].islower()
        and classes.rfind(b"..") == -1  # rfind: a simpler loop than find's, for two bytes
        and classes.rfind(b".A") == -1
        and not classes.endswith(b".")
    )


def _is_domain_op(op: str) -> bool:
    if len(op) <= _PATTERN_CHARS:
        return _DOMAIN_RE.fullmatch(op) is not None
    return _is_long_domain_op(op)


def is_system_op(op: str) -> bool:
    """Whether ``op`` is a system op: anything starting with ``$``."""
    return op.startswith("$")


def reply_inbox(correlation_id: str) -> str:
    """The conventional reply address for a correlation id: ``$replies.<cid>``."""
    return REPLY_PREFIX + correlation_id


def _short(op: str) -> str:
    # Quoted with !r below: a long op is cut to a prefix, as every message quoting input is.
    return op if len(op) <= 60 else op[:60] + "..."


def op_problem(op: str) -> str | None:
    """Why ``op`` is off the naming convention, or ``None`` when it follows it."""
    if _is_domain_op(op) or _SYSTEM_RE.fullmatch(op):
        return None
    op = _short(op)
    if op.startswith(REPLY_PREFIX):
        return f"{op!r} is a reply-inbox address ({REPLY_PREFIX}<cid>), not an op"
    if op.startswith("$"):
        return f"system op {op!r} is not of the form $<verb>"
    if _PASCAL_RE.fullmatch(op):
        return (
            f"{op!r} is an interface-method name; the convention for domain ops is "
            "<area>.<verb>, e.g. 'fs.expandDir'"
        )
    return f"op {op!r} is neither <area>.<verb> nor $<verb>"


def iface_problem(iface: str) -> str | None:
    """Why ``iface`` is off the ``Name@N`` form, or ``None`` when it follows it.

    The form is :data:`IFACE_PATTERN`: ASCII only, so a digit of another script (``'FsDaemon@١'``)
    is not a version. ``N`` may be ``0`` (``'A@0'``): the page leaves open whether it may, and a
    lint does not report what the page may allow.
    """
    if _IFACE_RE.fullmatch(iface) is not None:
        return None
    return _iface_reason(iface)


def _iface_reason(iface: str) -> str:
    name, at, version = iface.partition("@")
    if not iface:
        reason = "it is empty"
    elif not at:
        reason = "no '@N' version"
    elif "@" in version:
        reason = "more than one '@'"
    elif not _IFACE_NAME_RE.fullmatch(name):
        reason = "the name before '@' is not an ASCII letter followed by ASCII letters and digits"
    else:
        reason = "the version after '@' is not ASCII digits"
    return f"iface {_short(iface)!r} is not of the form Name@N ({reason}), e.g. 'FsDaemon@1'"


def iface_warnings(iface: str) -> list[Violation]:
    """The ``iface.convention`` warning of an envelope's ``iface`` off the ``Name@N`` form."""
    # `check` asks every message with an iface: the pattern alone, no call, for one on form.
    if _IFACE_RE.fullmatch(iface) is not None:
        return []
    return [violation(rules.IFACE_CONVENTION, "/iface", _iface_reason(iface))]
