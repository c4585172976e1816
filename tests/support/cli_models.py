"""Models the CLI cannot write a schema for, importable as ``tests.support.cli_models:<name>``."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict
from pydantic.dataclasses import dataclass

from envelopekit.babelqueue import BabelEnvelope, Router


class Opaque(BaseModel):
    """A field of a type pydantic checks by ``isinstance`` and has no JSON Schema for."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    decoder: json.JSONDecoder


@dataclass(config=ConfigDict(arbitrary_types_allowed=True))
class OpaqueData:
    """As ``Opaque``, a dataclass: a router takes it (it writes no payload schema for one)."""

    decoder: json.JSONDecoder


router = Router()


@router.on("urn:babel:opaque:made", OpaqueData)
def opaque_made(env: BabelEnvelope[OpaqueData]) -> None:
    """A route whose ``data`` model has no JSON Schema."""
