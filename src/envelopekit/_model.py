"""The base class of every wire model, and the registry the violation mapper reads."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ._violations import Violation

__all__ = ["WireModel", "attach_warnings", "attached_warnings", "model_named"]

_REGISTRY: dict[str, type[WireModel]] = {}
_WARNINGS = "_envelopekit_warnings"


class WireModel(BaseModel):
    """A model that stands for (part of) one schema of a spec.

    The class variables let the violation mapper derive rule ids instead of listing them:

    * ``__schema_name__``: the spec's schema file this model belongs to (``"envelope"``,
      ``"story-context"``, ``"message-envelope"``, ``"request"`` ...), the ``<schema>`` of every
      structural rule id raised inside it.
    * ``__false_schema__``: keys the schema declares as ``false``: an unknown-key error on one of
      them is ``<schema>.false_schema`` rather than ``<schema>.additionalProperties``.
    * ``__field_rules__``: wire key -> named rule id, for fields whose every failure is one named
      rule (BabelQueue's ``schema_version`` is ``schema_version.unsupported`` whatever it holds).
    """

    # Field docstrings become the descriptions of the generated JSON Schema; every dump
    # (`model_dump()`, `model_dump_json()`, FastAPI's responses) writes the wire names.
    model_config = ConfigDict(use_attribute_docstrings=True, serialize_by_alias=True)

    __schema_name__: ClassVar[str] = ""
    __false_schema__: ClassVar[frozenset[str]] = frozenset()
    __field_rules__: ClassVar[Mapping[str, str]] = MappingProxyType({})

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # Parametrised generics are titled "Name[Arg]"; the mapper strips the brackets.
        _REGISTRY.setdefault(cls.__name__.partition("[")[0], cls)


def attach_warnings(model: BaseModel, found: list[Violation]) -> None:
    """Keep what a validator noted on the instance, for ``envelope_warnings()``.

    Declaring a ``PrivateAttr`` would make pydantic initialise private state on every
    validation, a measurable share of a small message's parse; the private-state slot is
    filled only for the rare message that has something to report, and ``model_copy`` carries it.
    """
    private = model.__pydantic_private__
    if private is None:
        object.__setattr__(model, "__pydantic_private__", {_WARNINGS: tuple(found)})
    else:
        private[_WARNINGS] = tuple(private.get(_WARNINGS, ())) + tuple(found)


def attached_warnings(model: BaseModel) -> list[Violation]:
    """What :func:`attach_warnings` kept on ``model`` (a new list)."""
    private = model.__pydantic_private__
    return list(private.get(_WARNINGS, ())) if private else []


def model_named(title: str) -> type[WireModel] | None:
    """The wire model whose ``ValidationError.title`` is ``title``, if it is one of ours."""
    return _REGISTRY.get(title.partition("[")[0])
