"""What Python runs during a call: the cost tests' measure, counted, never timed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import CodeType, FrameType


def python_calls(call: Callable[[], object]) -> list[CodeType]:
    """The code of each Python function ``call()`` enters, in order (``sys.setprofile``)."""
    entered: list[CodeType] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            entered.append(frame.f_code)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return entered
