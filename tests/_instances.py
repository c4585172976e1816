"""An envelope instance given to another envelope class, through every door of that class.

The reference is the message's own JSON: ``target.model_validate_json(instance.to_json())``.
Each door must give its verdict: the same acceptance, an envelope of the target class writing
the same bytes, and for a refusal the same (rule id, pointer) pairs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

import envelopekit as ek
from envelopekit._violations import raised_again

Verdict = tuple[str, Any]
"""``("ok", the class and bytes of the envelope)`` or ``("refused", its (rule, pointer) pairs)``."""


def _held(target: Any) -> Callable[[object], object]:
    # A user's model with a field typed as the class: pydantic-core runs the class's validator.
    holder: type[BaseModel] = create_model("Holder", envelope=(target, ...))

    def validate(value: object) -> object:
        try:
            held: Any = holder.model_validate({"envelope": value})
            return held.envelope
        except ValidationError as exc:
            # The errors as the class itself raised them: the holder's field left out.
            lines = [
                {**raised_again(line, line["input"]), "loc": tuple(line["loc"][1:])}
                for line in exc.errors(include_url=False)
            ]
            raise ValidationError.from_exception_data(exc.title, lines) from None  # type: ignore[arg-type]

    return validate


def doors(target: Any) -> dict[str, Callable[[object], object]]:
    """Every door of ``target`` that takes Python data, by name."""
    adapter = TypeAdapter(target)
    return {
        "model_validate": target.model_validate,
        "type_adapter": adapter.validate_python,
        # FastAPI's `response_model` (`ModelField.validate`).
        "from_attributes": lambda value: adapter.validate_python(value, from_attributes=True),
        "held": _held(target),
    }


def verdict(target: Any, call: Callable[[], Any]) -> Verdict:
    """What ``call()`` (a validation by ``target``) gives, compared whole."""
    try:
        found = call()
    except ValidationError as exc:
        return "refused", [(v.rule, v.pointer) for v in ek.violations(exc, model=target)]
    return "ok", (type(found), found.to_json())


def disagreements(pairs: Iterable[tuple[Any, Any]]) -> list[str]:
    """Every (target, instance, door) whose verdict is not that of the instance's JSON.

    An instance of the target class itself is kept as it is (pydantic's
    ``revalidate_instances="never"``): the door returns that very instance.
    """
    found: list[str] = []
    for target, instance in pairs:
        raw = instance.to_json()
        kept = isinstance(instance, target)
        expected = (
            ("ok", (type(instance), raw))
            if kept
            else verdict(target, partial(target.model_validate_json, raw))
        )
        for name, door in doors(target).items():
            label = f"{type(instance).__name__} -> {target.__name__} ({name})"
            got = verdict(target, partial(door, instance))
            if got != expected:
                found.append(f"{label}: {got} != {expected}")
            elif kept and door(instance) is not instance:
                found.append(f"{label}: a copy, not the instance")
    return found


def part_disagreements(target: Any, wire: dict[str, Any], key: str, part: BaseModel) -> list[str]:
    """Every door of ``target`` whose verdict on ``wire`` holding ``part`` at ``key`` is not
    that of the message holding the part's wire data there (its JSON, read back).

    A user building the dict by hand with a model instance means that message.
    """
    message = {**wire, key: json.loads(part.model_dump_json(by_alias=True, warnings=False))}
    expected = verdict(target, partial(target.model_validate_json, json.dumps(message)))
    members = {**wire, key: part}
    found: list[str] = []
    for name, door in {**doors(target), "keywords": lambda value: target(**value)}.items():
        got = verdict(target, partial(door, members))
        if got != expected:
            label = f"{type(part).__name__} at {key} -> {target.__name__} ({name})"
            found.append(f"{label}: {got} != {expected}")
    return found
