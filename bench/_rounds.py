"""The interleaved rounds every bench times its calls in (``run.py``, ``hostile.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def interleaved(
    calls: Sequence[Callable[[], object]],
    numbers: Sequence[int],
    rounds: int,
    clock: Callable[[], float],
) -> list[list[float]]:
    """Each call's seconds per call in each round, ``numbers[i]`` calls of ``calls[i]`` a sample.

    A round samples every call once, in an order rotated from round to round, so that a burst
    of load from another process falls on all of them alike: the ratios between them are then
    far steadier than from rounds one call after another.
    """
    samples: list[list[float]] = [[] for _ in calls]
    order = list(range(len(calls)))
    for index in range(rounds):
        shift = index % len(order)
        for which in order[shift:] + order[:shift]:
            call, number = calls[which], numbers[which]
            start = clock()
            for _ in range(number):
                call()
            samples[which].append((clock() - start) / number)
    return samples
