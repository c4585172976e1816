"""A Lamport logical clock for the ``lamport`` field (Lamport 1978; matrix.md §7)."""

from __future__ import annotations

import threading

from .. import rules
from .._errors import ProducerError
from .._json import INT64_MAX
from .._violations import quote, violation

__all__ = ["LamportClock"]


def _is_stamp(value: object) -> bool:
    """Whether ``value`` is a stamp ``lamport`` holds: an integer from 0 to signed 64-bit."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= INT64_MAX


def _past_the_last_stamp() -> ProducerError:
    """The refusal to advance past 2^63-1: the finding ``check`` reports at ``/lamport``."""
    return ProducerError(
        "a Lamport clock at 2^63-1 cannot advance: no valid message carries a later stamp",
        [
            violation(
                rules.NUMBER_OUT_OF_RANGE,
                "/lamport",
                f"{INT64_MAX + 1} does not fit a signed 64-bit integer",
            )
        ],
    )


class LamportClock:
    """A thread-safe Lamport clock: ``tick`` before sending, ``observe`` on receiving.

    The value orders events causally, not in time: ties between actors are broken by other
    ids (``from``), and it is never a wall clock.

    Example:
        >>> clock = LamportClock()
        >>> clock.tick()
        1
        >>> clock.observe(41)
        42
    """

    __slots__ = ("_lock", "_value")

    def __init__(self, start: int = 0) -> None:
        """Start the clock at ``start`` (0 for a new actor).

        Raises:
            ProducerError: for a start that is no integer, negative or beyond signed 64-bit
                (the schema's ``minimum`` is 0; past the maximum no stamp it issues is valid).
        """
        if not _is_stamp(start):
            # quote(): an integer past 4,300 digits has no repr(), a long input no short one.
            raise ProducerError(
                f"a Lamport clock starts at an integer from 0 to 2^63-1, not {quote(start)}"
            )
        self._value = start
        self._lock = threading.Lock()

    @property
    def value(self) -> int:
        """The last timestamp this clock issued or observed."""
        return self._value

    def tick(self) -> int:
        """Advance for a local event or a send (``L = L + 1``) and return the stamp.

        Raises:
            ProducerError: when the clock is at 2^63-1 (``number.out_of_range`` at
                ``/lamport``: the next stamp would not be valid); the clock is left there.
        """
        with self._lock:
            if self._value >= INT64_MAX:
                raise _past_the_last_stamp()
            self._value += 1
            return self._value

    def observe(self, received: int | None) -> int:
        """Merge a received stamp (``L = max(L, received) + 1``) and return the new value.

        ``None`` (a message without ``lamport``) counts as a local event.

        Raises:
            ProducerError: for a stamp that is no integer, negative or beyond signed 64-bit
                (no valid message carries one), and, as :meth:`tick`, when the new value
                would pass 2^63-1 (the clock is left as it was).
        """
        if received is not None and not _is_stamp(received):
            raise ProducerError(
                f"a Lamport stamp is an integer from 0 to 2^63-1, not {quote(received)}"
            )
        with self._lock:
            merged = max(self._value, received or 0)
            if merged >= INT64_MAX:
                raise _past_the_last_stamp()
            self._value = merged + 1
            return self._value

    def __repr__(self) -> str:
        return f"LamportClock({self._value})"
