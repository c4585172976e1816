"""Producing a SOM 1.0 message: the wire data ``SomEnvelope.create`` validates.

Every default is filled in (ids, timestamp, topic, the settings' ``originating_system``) and
every model given is reduced to what it would put on the wire, so that the message is
validated as a consumer will see it; whatever would make it invalid is a
:class:`~envelopekit.ProducerError` with the rule ids and pointers ``check`` would report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final
from uuid import UUID

from typing_extensions import Unpack

from .. import rules
from .._bounds import SOM_MAX_BYTES, refuse_unbounded
from .._errors import ProducerError
from .._ids import rfc3339, uuid7
from .._json import plain_json_nesting
from .._settings import Settings, given_settings
from .._violations import Violation, violation
from ._delivery import DeliveryMediaAvailable
from ._link import LinkEvent
from ._payloads import (
    PAYLOAD_MODELS,
    FamilyPayload,
    UnvalidatedPayload,
    closest_known_type,
    message_type_of,
)
from ._telling import TellingEvent
from ._version import SOM_VERSION

if TYPE_CHECKING:
    from ._envelope import OriginatingSystem, ProducingKeywords

__all__ = ["wire_data"]

_MESSAGE_TYPE_RE: Final = re.compile(r"\A[a-z][a-z0-9_.]*\Z")
_FAMILIES: Final = tuple(dict.fromkeys(PAYLOAD_MODELS.values()))
_ENVELOPE_REQUIRED: Final = rules.structural("envelope", "required")
_ENVELOPE_TYPE: Final = rules.structural("envelope", "type")
_DATE_TIME: Final = rules.structural("envelope", "format.date-time")
# Families whose schema requires the payload to repeat the envelope's message_type.
_OWN_TYPE_REQUIRED: Final = (TellingEvent, LinkEvent, DeliveryMediaAvailable)


def wire_data(
    message_type: str | None,
    payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any] | None,
    *,
    allow_unknown: bool,
    **keywords: Unpack[ProducingKeywords],
) -> tuple[dict[str, Any], bytes | None]:
    """The message :meth:`SomEnvelope.create` validates, as plain JSON data.

    And its text, where orjson wrote it (:func:`~envelopekit._bounds.refuse_unbounded`): for
    its validation, which need not write it again to probe it.

    Raises:
        ProducerError: for what is refused before validation: no ``message_type`` to take,
            one that is no string, no payload, an unknown ``message_type`` without
            ``allow_unknown``, a payload that is no mapping or a model of another family, a
            timestamp RFC 3339 cannot write, no ``originating_system``; a message larger or
            nesting deeper than ``check`` with the settings reads (``message.too_large``, past
            ``max_message_bytes`` or SOM's own 240,000 bytes; ``message.too_deep``).
    """
    given = keywords.get("settings")
    settings = given_settings(given)
    asked: object = message_type  # (typed callers pass a string; others may pass anything)
    if message_type is None:
        message_type = _inferred_message_type(payload)
    elif not isinstance(asked, str):
        # Refused here: the checks below read it as text (a pattern, a key, `som.<type>`).
        found = f"'message_type' must be a string, not a {type(asked).__name__}"
        raise ProducerError.of([violation(_ENVELOPE_TYPE, "/message_type", found)])
    if payload is None:
        raise ProducerError.of(
            [violation(_ENVELOPE_REQUIRED, "/payload", "'payload' is a required property")]
        )
    if (
        not allow_unknown
        and message_type not in PAYLOAD_MODELS
        and _MESSAGE_TYPE_RE.match(message_type) is not None
    ):
        raise ProducerError.of([_unknown_message_type(message_type)])
    data: dict[str, Any] = {
        "som_version": SOM_VERSION,
        "message_id": _uuid_text(keywords.get("message_id")),
        "correlation_id": _uuid_text(keywords.get("correlation_id")),
    }
    causation_id = keywords.get("causation_id")
    if causation_id is not None:
        data["causation_id"] = _uuid_text(causation_id)
    data["message_type"] = message_type
    data["timestamp"] = _timestamp_text(keywords.get("timestamp"))
    data["originating_system"] = _originating_system(keywords.get("originating_system"), settings)
    topic = keywords.get("topic")
    data["topic"] = f"som.{message_type}" if topic is None else topic
    data["payload"] = _payload_input(message_type, payload)
    extensions = keywords.get("extensions")
    if extensions is not None:
        data["extensions"] = extensions
    # Validation takes a model instance as it is, and `model_copy(update=...)` derives one
    # unvalidated: every model given (payload, originating_system, or one nested in a
    # mapping) is validated from what it would put on the wire, as a consumer will see it.
    data, levels = plain_json_nesting(data)
    # Its text, which the model's Python door would write to probe it, is written here, once:
    # refused past the bounds `check` reads, and not written again (the text returned).
    return data, refuse_unbounded(data, settings, SOM_MAX_BYTES, levels)


def _inferred_message_type(payload: object) -> str:
    """The ``message_type`` of a family model given without one."""
    if isinstance(payload, _FAMILIES):
        return message_type_of(payload)
    given = "no payload" if payload is None else f"a {type(payload).__name__} payload"
    raise ProducerError.of(
        [
            violation(
                _ENVELOPE_REQUIRED,
                "/message_type",
                f"'message_type' is a required property: pass it, or a family model as the "
                f"payload to take it from (not {given})",
            )
        ]
    )


def _unknown_message_type(message_type: str) -> Violation:
    close = closest_known_type(message_type)
    hint = f"did you mean '{close}'? " if close else ""
    return violation(
        rules.MESSAGE_TYPE_UNKNOWN,
        "/message_type",
        f"message_type '{message_type}' has no SOM 1.0 schema: {hint}pass allow_unknown=True "
        "to produce an unknown family deliberately",
    )


def _uuid_text(value: str | UUID | None) -> str:
    # A string is checked by the model's validation, reported at its pointer.
    if value is None:
        return uuid7()
    return str(value) if isinstance(value, UUID) else value


def _timestamp_text(value: datetime | str | None) -> str:
    if value is None:
        return rfc3339(digits=6)
    if isinstance(value, datetime):
        try:
            return rfc3339(value, digits=6)
        except ValueError as exc:
            why = f"timestamp {value.isoformat()}: {exc}"
        except TypeError as exc:  # a tzinfo whose offset is no timedelta (so no isoformat)
            why = f"timestamp {value!r}: {exc}"
        raise ProducerError.of([violation(_DATE_TIME, "/timestamp", why)]) from None
    return value


def _originating_system(
    given: OriginatingSystem | Mapping[str, Any] | None, settings: Settings
) -> OriginatingSystem | Mapping[str, Any]:
    if given is not None:
        return given
    if settings.som_system_id is None:
        found = violation(
            _ENVELOPE_REQUIRED,
            "/originating_system",
            "no originating_system given and ENVELOPEKIT_SOM_SYSTEM_ID is not set",
        )
        raise ProducerError.of([found])
    system: dict[str, Any] = {
        "system_id": settings.som_system_id,
        "system_type": settings.som_system_type,
    }
    if settings.som_system_name is not None:
        system["system_name"] = settings.som_system_name
    return system


def _payload_input(
    message_type: str, payload: FamilyPayload | UnvalidatedPayload | Mapping[str, Any]
) -> Any:
    family = PAYLOAD_MODELS.get(message_type)
    if isinstance(payload, UnvalidatedPayload):
        payload = payload.root
    elif not isinstance(payload, Mapping):
        if family is None or not isinstance(payload, family):
            expected = family.__name__ if family is not None else "a mapping"
            message = f"'{message_type}' takes {expected}, not a {type(payload).__name__}"
            # A family model selected by another message_type, or no JSON object at all.
            rule = (
                rules.PAYLOAD_FAMILY_UNEXPECTED
                if isinstance(payload, _FAMILIES)
                else _ENVELOPE_TYPE
            )
            raise ProducerError(message, [violation(rule, "/payload", message)])
        return payload
    if family is None:
        return dict(payload)
    body = dict(payload)
    if issubclass(family, _OWN_TYPE_REQUIRED) and "message_type" not in body:
        body["message_type"] = message_type
    return body
