"""A Matrix envelope instance given to another envelope class is read as the message it is.

``MxRequest[Args].model_validate(request)`` of a plain ``MxRequest`` refused it with
``request.additionalProperties`` at ``/correlation_id``, ``/reply_to``, ``/trace_id`` ...:
pydantic read the instance of the generic class by its attribute names, where the wire names
are camelCase. An open ``MxResponse[Result]`` took those names as unknown keys, and
refused their absent values as ``json.invalid``; a user's subclass refused the instance whole.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from envelopekit.matrix import MxErrorCode, MxErrorPayload, MxRequest, MxResponse
from tests._instances import disagreements, doors


class Args(BaseModel):
    path: str


class Entry(BaseModel):
    name: str


class Listing(MxRequest[Args]):
    """A user's subclass of a typed request."""


class Entries(MxResponse[Entry]):
    """A user's subclass of a typed response."""


class OwnError(MxErrorPayload):
    """A user's subclass of the error payload."""


class Revalidated(MxRequest[Args]):
    """A user's subclass that revalidates even its own instances."""

    model_config = ConfigDict(revalidate_instances="always")


REQUEST = MxRequest.create(
    "fs.list",
    {"path": "/home/ada"},
    expect_reply=True,
    from_="/ada",
    trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
    parent_span_id="00f067aa0ba902b7",
)
REPLY = REQUEST.reply({"name": "notes.txt"})
FAILURE = REQUEST.fail(MxErrorCode.NOT_FOUND, "no such directory")


def test_a_request_instance_is_read_as_its_message_by_every_door() -> None:
    instances: list[Any] = [REQUEST, MxRequest[Args].model_validate_json(REQUEST.to_json())]
    instances.append(Listing.model_validate_json(REQUEST.to_json()))
    targets = [MxRequest, MxRequest[Args], MxRequest[Entry], Listing, Revalidated]
    pairs = [(target, instance) for target in targets for instance in instances]
    assert disagreements(pairs) == []


def test_a_response_instance_is_read_as_its_message_by_every_door() -> None:
    instances: list[Any] = [REPLY, FAILURE, MxResponse[Entry].model_validate_json(REPLY.to_json())]
    instances.append(Entries.model_validate_json(REPLY.to_json()))
    targets = [MxResponse, MxResponse[Entry], MxResponse[Args], Entries]
    pairs: list[tuple[type[Any], Any]] = [(t, instance) for t in targets for instance in instances]
    errors = [FAILURE.payload, OwnError.model_validate_json(FAILURE.payload.to_json())]
    pairs += [(target, error) for target in (MxErrorPayload, OwnError) for error in errors]
    assert disagreements(pairs) == []


@pytest.mark.parametrize("door", ["model_validate", "type_adapter", "from_attributes", "held"])
def test_a_class_that_revalidates_instances_reads_its_own_from_their_wire_names(door: str) -> None:
    own = Revalidated.model_validate_json(REQUEST.to_json())
    again = doors(Revalidated)[door](own)
    assert isinstance(again, Revalidated)
    assert again is not own
    assert again.to_json() == REQUEST.to_json()
