"""The ``meta`` block: producer-set, immutable descriptive metadata."""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, StrictInt, StrictStr
from pydantic_core import CoreSchema

from .. import rules
from .._formats import UuidStr
from .._json import INT64_MAX
from .._model import WireModel, own_members
from ._forbidden import FORBIDDEN_META_KEYS, forbidden_keys_read

__all__ = ["LANGS", "BabelMeta", "Lang"]

Lang = Literal["php", "go", "python", "java", "dotnet", "node"]
"""The producer language tags of the six official SDKs (and this one)."""

LANGS: Final[frozenset[str]] = frozenset(get_args(Lang))

SCHEMA_VERSION: Final = 1
# Keys a meta extra may never be emitted as: the canonical ones and the forbidden ones.
_NOT_EXTRA: Final = frozenset(
    {"id", "queue", "lang", "schema_version", "created_at"} | FORBIDDEN_META_KEYS.keys()
)


class BabelMeta(WireModel):
    """``meta``: ``id, queue, lang, schema_version, created_at``, plus producers' own keys.

    Unknown keys are kept (consumers MUST ignore them, a re-emitting hop MUST NOT drop them) and
    re-emitted after the canonical ones. ``lang`` is any string on input (a future SDK's tag is
    not a reason to refuse); this SDK writes ``"python"``.
    """

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    __schema_name__: ClassVar[str] = "message-envelope"
    # Whatever `schema_version` holds, a wrong one means one thing to a consumer.
    __field_rules__: ClassVar = MappingProxyType(
        {"schema_version": rules.SCHEMA_VERSION_UNSUPPORTED}
    )

    id: UuidStr
    """Unique id of this message (the idempotency key), distinct from ``trace_id``."""
    queue: Annotated[StrictStr, Field(min_length=1)]
    """The logical queue the message was produced onto (not the broker key)."""
    lang: StrictStr
    """The producer's language tag."""
    schema_version: Annotated[
        StrictInt,
        # The schema's `const: 1`, which other languages' validators read as the integer 1.
        Field(ge=SCHEMA_VERSION, le=SCHEMA_VERSION, json_schema_extra={"const": SCHEMA_VERSION}),
    ]
    """Envelope schema version: exactly the JSON integer 1."""
    created_at: Annotated[StrictInt, Field(ge=0, le=INT64_MAX)]
    """Production time as Unix epoch milliseconds, UTC."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The block's schema; a user's subclass closing it still drops the forbidden keys.

        Policy K-15 (babelqueue.md §1.2) whatever its own ``extra``, as for the envelope: a
        closed one reads them for the envelope to drop with their warning, and refuses every
        other unknown key; an ignoring one drops the others unsaid.
        """
        schema = super().__get_pydantic_core_schema__(source, handler)
        if cls.model_config.get("extra") in ("forbid", "ignore"):
            schema = forbidden_keys_read(schema, cls, FORBIDDEN_META_KEYS, dropped=False)
        return schema

    def to_wire(self) -> dict[str, Any]:
        """The block as a JSON-ready dict: canonical keys in spec order, then unknown keys.

        A user's subclass's own fields are written before the unknown keys.
        """
        fields = self.__dict__
        out: dict[str, Any] = {
            "id": fields["id"],
            "queue": fields["queue"],
            "lang": fields["lang"],
            "schema_version": fields["schema_version"],
            "created_at": fields["created_at"],
        }
        if type(self) is not BabelMeta:
            out.update(own_members(self, BabelMeta))  # a user's meta class's own fields
        extra = self.__pydantic_extra__
        if extra:
            # Decoding never puts these among the extras; a caller mutating them might.
            out.update((k, v) for k, v in extra.items() if k not in _NOT_EXTRA)
        return out
