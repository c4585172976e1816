"""What a call runs and holds: the cost tests' measures, counted, never timed."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable
from types import CodeType, FrameType


def python_calls(call: Callable[[], object]) -> list[CodeType]:
    """The code of each Python function ``call()`` enters, in order (``sys.setprofile``).

    The cyclic collector is paused meanwhile: a collection would run the gc callbacks that are
    registered (hypothesis keeps one) within whichever call it fell in.
    """
    entered: list[CodeType] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            entered.append(frame.f_code)

    collecting = gc.isenabled()
    gc.disable()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    return entered


def peak_memory(call: Callable[[], object]) -> int:
    """The most memory ``tracemalloc`` sees during ``call()``."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def collections_set_off(call: Callable[[], object]) -> int:
    """How many garbage collections ``call()`` sets off (Python containers allocated)."""
    started = 0

    def count(phase: str, info: dict[str, int]) -> None:
        nonlocal started
        started += phase == "start"

    gc.collect()
    gc.callbacks.append(count)
    try:
        call()
    finally:
        gc.callbacks.remove(count)
    return started
