"""``SomEnvelope[Family]``: the envelope typed by its payload, and the message types it takes.

A parametrised envelope takes only the ``message_type`` values that select its payload type
(``payload.family_unexpected`` for the others); its JSON Schema says the same, and producing
from one goes through the plain envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast, get_args, get_origin

from .. import rules
from .._violations import rule_error
from ._payloads import PAYLOAD_MODELS, UnvalidatedPayload

if TYPE_CHECKING:
    from ._envelope import SomEnvelope

__all__ = ["expect_family", "expected_of", "unparametrised"]

# A parametrised envelope class -> (the message types it takes, whether unknown ones too, the
# payload types' names), or None when it takes every message type.
_EXPECTED: dict[type, tuple[frozenset[str], bool, str] | None] = {}


def unparametrised(cls: type[SomEnvelope[Any]]) -> type[SomEnvelope[Any]]:
    """The plain envelope class ``cls`` parametrises (``cls`` itself when it is not one)."""
    origin = cls.__pydantic_generic_metadata__["origin"]
    return cls if origin is None else cast("type[SomEnvelope[Any]]", origin)


def expect_family(cls: type[SomEnvelope[Any]], message_type: str) -> None:
    """Refuse a ``message_type`` that does not select ``SomEnvelope[X]``'s payload type X."""
    if cls not in _EXPECTED:
        _EXPECTED[cls] = expected_of(cls)
    expected = _EXPECTED[cls]
    if expected is None:
        return
    known, unknown, names = expected
    if message_type in known or (unknown and message_type not in PAYLOAD_MODELS):
        return
    # At /payload: a field validator's pointer is its field's (message_type was valid).
    family = PAYLOAD_MODELS.get(message_type, UnvalidatedPayload).__name__
    raise rule_error(
        rules.PAYLOAD_FAMILY_UNEXPECTED,
        f"message_type '{message_type}' selects {family}; this envelope takes {names}",
    )


def expected_of(cls: type[SomEnvelope[Any]]) -> tuple[frozenset[str], bool, str] | None:
    """What ``cls`` takes: its known message types, whether unknown ones too, its payloads' names.

    ``None`` when it takes every message type (the plain envelope, or a payload type that
    names every family).
    """
    args = cls.__pydantic_generic_metadata__["args"]
    kinds = _payload_classes(args[0]) if args else None
    if kinds is None:  # a subclass of the plain envelope, or a payload type we cannot read
        return None
    families: list[type] = [*dict.fromkeys(PAYLOAD_MODELS.values()), UnvalidatedPayload]
    chosen = [family for family in families if any(issubclass(k, family) for k in kinds)]
    if len(chosen) == len(families):
        return None
    known = frozenset(t for t, model in PAYLOAD_MODELS.items() if model in chosen)
    names = " or ".join(kind.__name__ for kind in kinds)
    return known, UnvalidatedPayload in chosen, names


def _payload_classes(annotation: Any) -> list[type] | None:
    """The classes a payload type argument names (through unions and ``Annotated``)."""
    if get_origin(annotation) is Annotated:
        return _payload_classes(get_args(annotation)[0])
    if isinstance(annotation, type) and not get_args(annotation):
        return [annotation]
    members = get_args(annotation)
    if not members:
        return None
    found: list[type] = []
    for member in members:
        classes = _payload_classes(member)
        if classes is None:
            return None
        found += classes
    return found
