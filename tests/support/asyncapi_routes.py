"""A consumer's routes, importable as ``tests.support.asyncapi_routes:router`` by the CLI tests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envelopekit.babelqueue import BabelEnvelope, Router


class Point(TypedDict):
    """A ``data`` model that is no pydantic model: the library and the CLI take it as well."""

    lat: float
    lon: float


class Address(BaseModel):
    """Where an order ships."""

    city: str
    postcode: str = Field(pattern=r"^[0-9]{5}$")


class OrderCreated(BaseModel):
    """An order was placed."""

    order_id: int = Field(ge=1)
    total_cents: int
    ship_to: Address


class UserRegistered(BaseModel):
    """A user signed up."""

    user_id: str
    email: str


router = Router(unknown_urn="dead_letter", max_attempts=5)


@router.on("urn:babel:orders:created", OrderCreated)
def order_created(env: BabelEnvelope[OrderCreated]) -> None:
    """Handle a new order."""


@router.on("urn:babel:users:registered", UserRegistered)
def user_registered(env: BabelEnvelope[UserRegistered]) -> None:
    """Handle a new user."""


@router.on("urn:babel:audit:ping")
def ping(env: BabelEnvelope[dict[str, Any]]) -> None:
    """An untyped route: `data` is any JSON object."""


not_a_router = object()
