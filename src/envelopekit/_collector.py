"""The cyclic garbage collector, paused while a large message is read.

A JSON document is a tree: the containers its reading builds (the parse, the validated model,
the duplicate scan's pieces) hold no cycle, and refcounting frees each as it goes. The cyclic
collector would only walk them, and the rest of the heap, again and again while they are built:
each collection of the oldest generation walks every container alive. For 1 MiB of small arrays
that is three quarters of pydantic-core's validation (83 ms, 21 without), and as much of orjson's
own parse, on Python 3.10 and 3.11. From 3.12 on the interpreter runs a collection only at its
next check, so a build in C code sets off one, after it: ``check`` of the same text 35 -> 29 ms
on 3.13 (172 -> 24 ms on 3.11). What the read leaves alive (the model) is walked once by a
later collection, as anything allocated is; what it freed is never walked.
"""

from __future__ import annotations

import gc
from types import TracebackType

__all__ = ["CollectorPaused"]


class CollectorPaused:
    """Pause the cyclic collector for a block, and let it run again after, if it ran.

    The collector is the process's: another thread's cycles wait for the block too (a read of
    at most the size limit, tens of milliseconds), then are collected as before. One that the
    caller had paused stays paused. A class, not a generator: a generator's end allocates its
    ``StopIteration`` after the collector runs again, and that first allocation pays for a
    collection of everything the block left alive.
    """

    __slots__ = ("_collecting",)

    def __enter__(self) -> None:
        self._collecting = gc.isenabled()
        gc.disable()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._collecting:
            gc.enable()
