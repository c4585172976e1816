"""A Matrix envelope instance given to another envelope class is read as the message it is.

``MxRequest[Args].model_validate(request)`` of a plain ``MxRequest`` refused it with
``request.additionalProperties`` at ``/correlation_id``, ``/reply_to``, ``/trace_id`` ...:
pydantic read the instance of the generic class by its attribute names, where the wire names
are camelCase. An open ``MxResponse[Result]`` took those names as unknown keys, and
refused their absent values as ``json.invalid``; a user's subclass refused the instance whole.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from envelopekit.matrix import MxErrorCode, MxErrorPayload, MxRequest, MxResponse
from tests._instances import disagreements, doors, part_disagreements


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


class MyArgs(Args):
    """A user's model deriving from another."""


class MyEntry(Entry):
    """A user's model deriving from another."""


def test_a_base_model_s_instance_as_payload_in_a_dict_is_read_as_its_wire_data() -> None:
    # `MxRequest[MyArgs]` given `payload=Args(...)` (a dict built by hand) refused it as
    # `request.type` at /payload, where a request holding that instance is read.
    request = json.loads(REQUEST.to_json())
    reply = json.loads(REPLY.to_json())
    wrong: dict[str, Any] = {"path": 7, "name": None}  # no message's: refused as its JSON is
    cases: list[tuple[Any, dict[str, Any], BaseModel]] = [
        (MxRequest[MyArgs], request, Args(path="/home/ada")),
        (MxRequest[Args], request, Args(path="/home/ada")),
        (MxRequest[MyArgs], request, Args.model_construct(path=wrong["path"])),
        (MxResponse[MyEntry], reply, Entry(name="notes.txt")),
        (MxResponse[Entry], reply, Entry(name="notes.txt")),
        (MxResponse[MyEntry], reply, Entry.model_construct(name=wrong["name"])),
    ]
    found: list[str] = []
    for target, wire, part in cases:
        found += part_disagreements(target, wire, "payload", part)
    assert found == []
