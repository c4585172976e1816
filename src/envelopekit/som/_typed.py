"""``SomEnvelope[Family]``: the envelope typed by its payload, and the message types it takes.

A parametrised envelope takes only the ``message_type`` values that select its payload type
(``payload.family_unexpected`` for the others); its JSON Schema says the same, and producing
from one goes through the plain envelope. What an envelope class takes is read from its
``payload`` field's type, so a user's subclass of a typed envelope (``class
Stories(SomEnvelope[StoryContext])``) takes what its base does, and one still generic in a type
variable of its own (``class Mine(SomEnvelope[X], Generic[X])``) what that variable stands for:
its default, constraints or bound, and with none of them every family, as ``SomEnvelope``.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    ForwardRef,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
)

from .. import rules
from .._model import free_type_variable, has_default
from .._violations import ReadAs, read_in_module, rule_error
from ._payloads import PAYLOAD_MODELS, UNVALIDATED, SomPayload, UnvalidatedPayload, dispatched

if TYPE_CHECKING:
    from ._envelope import SomEnvelope

__all__ = [
    "READ_BY_MESSAGE_TYPE",
    "expect_family",
    "expected_of",
    "payload_choices",
    "unparametrised",
]

# An envelope class -> (the message types it takes, whether unknown ones too, the payload
# types' names), or None when it takes every message type.
_EXPECTED: dict[type, tuple[frozenset[str], bool, str] | None] = {}

_FAMILIES: dict[str, type] = {**PAYLOAD_MODELS, UNVALIDATED: UnvalidatedPayload}
_EVERY: dict[str, list[type]] = {tag: [family] for tag, family in _FAMILIES.items()}


def _read_as(payload: Any) -> Any:
    """The type a ``payload`` field typed ``payload`` is read as (:data:`READ_BY_MESSAGE_TYPE`)."""
    choices = _choices_of(payload)
    if choices is None:
        return payload
    if choices == _EVERY:
        return SomPayload
    types = {tag: Union[tuple(chosen)] for tag, chosen in choices.items()}  # noqa: UP007
    if len(set(types.values())) == 1:
        # One type (every message type the envelope takes selects it): nothing to choose.
        return next(iter(types.values()))
    return dispatched(types)


def payload_choices(cls: type[SomEnvelope[Any]]) -> dict[str, list[type]] | None:
    """``cls``'s payload types by the ``message_type`` (or ``"unvalidated"``) that selects them.

    ``None`` when its payload type is no family's (read as pydantic reads it).
    """
    return _choices_of(cls.__pydantic_fields__["payload"].annotation)


def _choices_of(annotation: Any) -> dict[str, list[type]] | None:
    if free_type_variable(annotation):
        return _EVERY
    kinds = _payload_classes(annotation)
    return None if kinds is None else _choices(kinds)


def _choices(kinds: list[type]) -> dict[str, list[type]] | None:
    """The message types (and ``"unvalidated"``) that select ``kinds``, each with its own."""
    choices: dict[str, list[type]] = {}
    for tag, family in _FAMILIES.items():
        chosen = [kind for kind in kinds if issubclass(kind, family)]
        if chosen:
            choices[tag] = chosen
    if not all(any(issubclass(kind, family) for family in _FAMILIES.values()) for kind in kinds):
        return None
    return choices


READ_BY_MESSAGE_TYPE: Final = ReadAs(_read_as)
"""The ``payload`` field's marker: its type is read as the ``message_type`` chooses.

A union of families (``StoryContext | TellingEvent``, the bound of a type variable) is
pydantic's own ``Union`` otherwise, which reads a payload by its shape, against SOM's rule that
``message_type`` alone selects the payload's schema: a bad ``story.context`` payload was taken as
an :class:`UnvalidatedPayload`, or reported against every member. A type variable with no
default, constraints nor bound would be ``Any``: a dict, not a family model.
"""


def unparametrised(cls: type[SomEnvelope[Any]]) -> type[SomEnvelope[Any]]:
    """The nearest class of ``cls``'s (``cls`` first) that takes every message type.

    ``SomEnvelope`` for ``SomEnvelope[StoryContext]`` and a user's subclass of it; a user's
    generic subclass for its parametrisations.
    """
    for base in cls.__mro__:
        if "payload" in getattr(base, "__pydantic_fields__", {}) and _expected(base) is None:
            return cast("type[SomEnvelope[Any]]", base)
    raise AssertionError("SomEnvelope takes every message type")  # pragma: no cover


def expect_family(cls: type[SomEnvelope[Any]], message_type: str) -> None:
    """Refuse a ``message_type`` that does not select ``SomEnvelope[X]``'s payload type X."""
    expected = _expected(cls)
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


def _expected(cls: type) -> tuple[frozenset[str], bool, str] | None:
    if cls not in _EXPECTED:
        _EXPECTED[cls] = expected_of(cls)
    return _EXPECTED[cls]


def expected_of(cls: type[SomEnvelope[Any]]) -> tuple[frozenset[str], bool, str] | None:
    """What ``cls`` takes: its known message types, whether unknown ones too, its payloads' names.

    ``None`` when it takes every message type (the plain envelope, a payload type that names
    every family, or one no family's).
    """
    kinds = _payload_classes(cls.__pydantic_fields__["payload"].annotation)
    if kinds is None:  # every family, or a payload type we cannot read
        return None
    families: list[type] = [*dict.fromkeys(_FAMILIES.values())]
    chosen = [family for family in families if any(issubclass(k, family) for k in kinds)]
    if len(chosen) == len(families):
        return None
    known = frozenset(t for t, model in PAYLOAD_MODELS.items() if model in chosen)
    names = " or ".join(kind.__name__ for kind in kinds)
    return known, UnvalidatedPayload in chosen, names


def _payload_classes(annotation: Any) -> list[type] | None:
    """The classes a payload type names (through unions, ``Annotated`` and type variables)."""
    if isinstance(annotation, TypeVar):
        # What pydantic reads an unparametrised type variable as: its default, constraints or
        # bound; with none of them, every family (`_read_as`).
        if has_default(annotation):
            return _payload_classes(cast("Any", annotation).__default__)
        if annotation.__constraints__:
            return _members(annotation.__constraints__)
        return None if annotation.__bound__ is None else _payload_classes(_bound(annotation))
    if get_origin(annotation) is Annotated:
        return _payload_classes(get_args(annotation)[0])
    if isinstance(annotation, type) and not get_args(annotation):
        return [annotation]
    members = get_args(annotation)
    return _members(members) if members else None


def _bound(variable: TypeVar) -> Any:
    """``variable``'s bound; one given as a string, read in the module that declared it."""
    bound = variable.__bound__
    if not isinstance(bound, ForwardRef):
        return bound
    # A name only the type checkers see (None) is read as pydantic reads it.
    return read_in_module(bound.__forward_arg__, variable.__module__)


def _members(members: tuple[Any, ...]) -> list[type] | None:
    found: list[type] = []
    for member in members:
        classes = _payload_classes(member)
        if classes is None:
            return None
        found += classes
    return [*dict.fromkeys(found)]  # SomPayload names TellingEvent and LinkEvent thrice
