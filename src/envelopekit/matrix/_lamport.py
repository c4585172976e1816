"""A Lamport logical clock for the ``lamport`` field (Lamport 1978; matrix.md §7)."""

from __future__ import annotations

import threading

from .._errors import ProducerError

__all__ = ["LamportClock"]


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
            ProducerError: for a negative start (the schema's ``minimum`` is 0).
        """
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ProducerError(f"a Lamport clock starts at an integer >= 0, not {start!r}")
        self._value = start
        self._lock = threading.Lock()

    @property
    def value(self) -> int:
        """The last timestamp this clock issued or observed."""
        return self._value

    def tick(self) -> int:
        """Advance for a local event or a send (``L = L + 1``) and return the stamp."""
        with self._lock:
            self._value += 1
            return self._value

    def observe(self, received: int | None) -> int:
        """Merge a received stamp (``L = max(L, received) + 1``) and return the new value.

        ``None`` (a message without ``lamport``) counts as a local event.

        Raises:
            ProducerError: for a negative or non-integer stamp.
        """
        if received is not None and (
            isinstance(received, bool) or not isinstance(received, int) or received < 0
        ):
            raise ProducerError(f"a Lamport stamp is an integer >= 0, not {received!r}")
        with self._lock:
            self._value = max(self._value, received or 0) + 1
            return self._value

    def __repr__(self) -> str:
        return f"LamportClock({self._value})"
