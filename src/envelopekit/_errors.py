"""Every exception envelopekit raises, in one place.

Bad *input* never raises anything but ``pydantic.ValidationError`` (from ``model_validate_json``)
and never raises at all from :func:`envelopekit.check`. What is here is raised by producing,
routing and configuring::

    Exception
    └── EnvelopekitError                       the base of everything below
        ├── ProducerError (ValueError)         a message cannot be produced as asked:
        │                                      .violations names the rules and pointers
        ├── InvalidPayloadError (ValueError)   data does not match its URN's JSON Schema
        ├── InvalidEnvelopeError (ValueError)  a consumed envelope its route's class refuses
        ├── SchemaRegistryError (ValueError)   a payload-schema registry that cannot be used
        ├── DecryptError (ValueError)          a protected field the cipher cannot open
        ├── UnknownUrnError (LookupError)      no handler for a consumed message's URN
        └── SeenStoreUnavailable (ConnectionError)
                                               a shared seen-store could not be reached

Each is exported from :mod:`envelopekit`, and the BabelQueue ones also from
:mod:`envelopekit.babelqueue`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ._violations import Violation

__all__ = [
    "DecryptError",
    "EnvelopekitError",
    "InvalidEnvelopeError",
    "InvalidPayloadError",
    "ProducerError",
    "SchemaRegistryError",
    "SeenStoreUnavailable",
    "UnknownUrnError",
]


class EnvelopekitError(Exception):
    """Base class of the exceptions envelopekit raises.

    Each one pickles (and copies) whole: a process pool, Celery or a ``--jobs`` worker hands
    it to another process, whose copy has the same message and attributes.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's own reduce rebuilds an error by calling its class with ``args`` (the
        # message): the subclasses here take other arguments, so that call raised or lost
        # their attributes. The copy is made without __init__, its attributes restored.
        return (_restored, (type(self), self.args), self.__dict__)


def _restored(cls: type[EnvelopekitError], args: tuple[Any, ...]) -> EnvelopekitError:
    """An unpickled ``cls`` holding ``args``, as before pickling (its attributes follow)."""
    error = cls.__new__(cls, *args)
    error.args = args  # OSError's __new__ leaves them to the __init__ of a subclass that has one
    return error


class ProducerError(EnvelopekitError, ValueError):
    """A message cannot be produced as asked (a programming error, found before sending).

    Attributes:
        violations: what the message would break, each with its rule id and JSON pointer
            (the same findings :func:`envelopekit.check` would report for it); empty for a
            refusal that is about the call rather than the content.
    """

    def __init__(self, message: str, violations: Sequence[Violation] = ()) -> None:
        super().__init__(message)
        self.violations: list[Violation] = list(violations)

    @classmethod
    def of(cls, found: Sequence[Violation]) -> ProducerError:
        """The error for ``found``, its message naming each rule and pointer."""
        listed = "; ".join(f"{v.rule} at {v.pointer or '/'}: {v.message}" for v in found)
        return cls(f"the message would be invalid: {listed}", found)

    @classmethod
    def from_validation(cls, exc: ValidationError, model: Any) -> ProducerError:
        """The error for a producer's own validation failing, mapped as consumers map it."""
        from ._violations import violations  # a cycle at import time: violations needs rules

        return cls.of(violations(exc, model=model))


class InvalidPayloadError(EnvelopekitError, ValueError):
    """``data`` does not match the JSON Schema registered for its URN.

    Attributes:
        urn: the message URN.
        violations: why, with ``payload-schema.<keyword>`` rule ids and ``/data/...`` pointers.
    """

    def __init__(self, urn: str, violations: list[Violation]) -> None:
        first = violations[0] if violations else None
        detail = f"{first.pointer or '/'}: {first.message}" if first else "no detail"
        super().__init__(f"data for {urn!r} does not match its URN schema: {detail}")
        self.urn = urn
        self.violations = violations


class InvalidEnvelopeError(EnvelopekitError, ValueError):
    """A consumed envelope that the envelope class registered for its URN refuses.

    The refusal is the class's own (a member it adds, one of its validators), not its ``data``
    model's: the message names each rule id and pointer.

    Attributes:
        urn: the message URN.
        model: the name of the envelope class that refused it.
        violations: why, mapped against that class (``message-envelope.required`` at
            ``/tenant``), as :func:`envelopekit.check` maps them.
    """

    def __init__(self, urn: str, model: str, violations: list[Violation]) -> None:
        listed = "; ".join(f"{v.rule} at {v.pointer or '/'}: {v.message}" for v in violations)
        super().__init__(f"the envelope for {urn!r} is refused by {model}: {listed or 'no detail'}")
        self.urn = urn
        self.model = model
        self.violations = violations


class SchemaRegistryError(EnvelopekitError, ValueError):
    """A registry or schema that cannot be used (a configuration error, found at load time)."""


class DecryptError(EnvelopekitError, ValueError):
    """A protected field that the cipher cannot open, or whose plaintext is not JSON.

    Attributes:
        violation: ``data.decrypt_failed`` with the field's pointer (``/data/email``).
    """

    def __init__(self, found: Violation) -> None:
        super().__init__(f"{found.pointer}: {found.message}")
        self.violation = found


class UnknownUrnError(EnvelopekitError, LookupError):
    """No handler is mapped for a consumed message's URN (strategy ``fail``)."""

    def __init__(self, urn: str) -> None:
        super().__init__(f"No handler is mapped for the message URN {urn!r}.")
        self.urn = urn


class SeenStoreUnavailable(EnvelopekitError, ConnectionError):
    """A shared seen-store could not be reached: the id was not marked; do not ack the message.

    Attributes:
        operation: ``seen``, ``claim``, ``renew``, ``remember``, ``release`` or ``forget``.
        message_id: the id the store was asked about.
    """

    def __init__(self, operation: str, message_id: str, cause: BaseException) -> None:
        effect = {
            "remember": "the handler ran but its id was not marked seen, "
            "so a redelivery runs it again",
            "renew": "the claim may lapse while the handler runs",
        }.get(operation, "the handler was not run and the id was not marked seen")
        super().__init__(
            f"The seen-store failed during {operation} of message {message_id!r} "
            f"({type(cause).__name__}: {cause}): {effect}; do not acknowledge the message."
        )
        self.operation = operation
        self.message_id = message_id
