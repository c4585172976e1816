"""The base class of every wire model, and the registry the violation mapper reads."""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import typing_extensions
from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

if TYPE_CHECKING:
    from ._violations import Violation

__all__ = [
    "ModelT",
    "ProbedOnRebuild",
    "WireModel",
    "any_is_unparametrised",
    "attach_warnings",
    "attached_warnings",
    "free_type_variable",
    "has_default",
    "model_named",
    "own_fields",
    "own_members",
    "schema_root",
    "titled",
    "typed_by_model",
]

ModelT = TypeVar("ModelT", bound=BaseModel)
"""A model given as an envelope's payload: the producers' overloads keep its class in the type."""
_Model = TypeVar("_Model", bound=BaseModel)

_REGISTRY: dict[str, type[WireModel]] = {}
_UNIONS: dict[str, Any] = {}
_WARNINGS = "_envelopekit_warnings"


if TYPE_CHECKING:
    # The type checkers read the models as pydantic's (its metaclass is a dataclass_transform).
    from pydantic._internal._model_construction import ModelMetaclass as _WireModelMeta
else:

    class _WireModelMeta(type(BaseModel)):
        """pydantic's metaclass; a parametrisation (``Model[Arg]``) reads no field docstrings.

        Its fields hold the generic model's. Read again, pydantic (Python < 3.13) would read
        the source line of the caller's frame, which fails with ``tokenize.TokenError`` when
        that line is inside a bracketed statement of the user's module. Given as the class's
        own config, the setting is the parametrisation's alone: the generic model and a user's
        subclass of it (``class Mine(SomEnvelope)``) read theirs.
        """

        def __new__(
            mcs,
            cls_name: str,
            bases: tuple[type[Any], ...],
            namespace: dict[str, Any],
            __pydantic_generic_metadata__: Any = None,
            __pydantic_reset_parent_namespace__: bool = True,
            _create_model_module: str | None = None,
            **kwargs: Any,
        ) -> type:
            if (
                __pydantic_generic_metadata__ is not None
                and __pydantic_generic_metadata__["origin"]
            ):
                kwargs["use_attribute_docstrings"] = False
            return super().__new__(
                mcs,
                cls_name,
                bases,
                namespace,
                __pydantic_generic_metadata__,
                __pydantic_reset_parent_namespace__,
                _create_model_module,
                **kwargs,
            )


class ProbedOnRebuild:
    """The mixin (before ``BaseModel``) of a model whose own validator probes its Python input.

    pydantic runs no ``__pydantic_on_complete__`` for a model rebuilt with ``force=True``,
    where the probe is made (``text_check_built``): its new validator would take what no JSON
    text carries. ``WireModel`` and ``TextChecked`` both hold it, once in any model's MRO.
    """

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        """Rebuild the model as pydantic does; one finished before still probes its input."""
        model = cast("type[BaseModel]", cls)
        complete = model.__pydantic_complete__
        rebuilt = super().model_rebuild(  # type: ignore[misc]
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=_parent_namespace_depth + 1,  # this frame, above the caller
            _types_namespace=_types_namespace,
        )
        if model.__module__ == __name__:  # WireModel itself, built before _text can be imported
            return cast("bool | None", rebuilt)
        from ._text import text_checked_again

        return text_checked_again(model, cast("bool | None", rebuilt), was_complete=complete)


class WireModel(ProbedOnRebuild, BaseModel, metaclass=_WireModelMeta):
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
    # (`model_dump()`, `model_dump_json()`, FastAPI's responses) writes the wire names. The
    # serialization schema is pydantic's own, what a dump writes: the same as the validation
    # schema but for what is read and never written (BabelQueue's `urn`), so FastAPI's OpenAPI
    # splits only those models into `-Input` and `-Output`. (`json_schema_mode_override`,
    # which forced one schema, made pydantic refer to definitions it never wrote: KeyError.)
    model_config = ConfigDict(use_attribute_docstrings=True, serialize_by_alias=True)

    __schema_name__: ClassVar[str] = ""
    __false_schema__: ClassVar[frozenset[str]] = frozenset()
    __field_rules__: ClassVar[Mapping[str, str]] = MappingProxyType({})
    __notes__: ClassVar[bool] = False
    """Whether the model notes anything about its own values (it overrides :meth:`_notes`)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The model's schema, with its descriptions in plain text wherever it is generated."""
        found = handler(core_schema)
        plain_descriptions(handler.resolve_ref_schema(found))
        return found

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The model's schema; held in another model, the part that reads JSON values alone.

        The holder refuses once, for all it holds, what no JSON text carries.
        """
        if cls.__module__ == __name__:  # WireModel itself, built before _text can be imported
            return handler(source)
        from ._text import part_schema  # _text reads this module's models

        return part_schema(cls, source, handler)

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        """Refuse in Python mode what no JSON text carries, the model read alone too.

        Strings that are no Unicode text, and nesting past the JSON parser's depth.
        """
        super().__pydantic_on_complete__()
        if cls.__module__ != __name__:
            from ._text import TextChecked, text_check_built

            if not issubclass(cls, TextChecked):  # whose own hook does it (Matrix's models)
                text_check_built(cls)

    def envelope_warnings(self) -> list[Violation]:
        """What was accepted but noted about this message, with JSON pointers (never refused).

        The one way every spec makes warnings: first what its validators noted while reading
        the input, which the model cannot show afterwards (a dropped forbidden key, how an
        integer was written; :func:`attach_warnings`), then what the model notes about its own
        values when asked (:meth:`_notes`: a tolerated version, an unvalidated payload, a
        lint), so a message that notes nothing pays for nothing at validation.
        """
        notes = self._notes()
        private = self.__pydantic_private__
        if private and _WARNINGS in private:
            return [*private[_WARNINGS], *notes]
        return notes

    def _notes(self) -> list[Violation]:
        """What the model notes about its own values; models with such warnings override it."""
        return []

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.__notes__ = cls._notes is not WireModel._notes
        origin = cls.__pydantic_generic_metadata__["origin"]
        if origin is not None:
            # Built without reading docstrings (_WireModelMeta); its subclasses read theirs.
            cls.model_config = {
                **cls.model_config,
                "use_attribute_docstrings": origin.model_config.get(
                    "use_attribute_docstrings", False
                ),
            }
        # Parametrised generics are titled "Name[Arg]": the mapper finds the parametrisation
        # (its payload typed `Arg`), else (one built elsewhere, a title of its own) the generic.
        _REGISTRY.setdefault(cls.__name__, cls)
        _REGISTRY.setdefault(cls.__name__.partition("[")[0], cls)


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


@cache
def own_fields(cls: type[BaseModel], base: type[BaseModel]) -> frozenset[str]:
    """The fields a user's subclass ``cls`` declares beyond ``base``'s, which dumps write.

    On the wire they are members after the spec's (``to_wire``), as unknown keys are.
    """
    declared = base.model_fields
    return frozenset(
        name
        for name, field in cls.model_fields.items()
        if name not in declared and not field.exclude
    )


def own_members(model: BaseModel, base: type[BaseModel]) -> dict[str, Any]:
    """``model``'s own fields beyond ``base``'s (:func:`own_fields`) as its serializer writes them.

    JSON mode, by wire name: what ``to_wire`` writes after the spec's keys, as unknown keys are.
    """
    own = own_fields(type(model), base)
    if not own:
        return {}
    written: dict[str, Any] = model.__pydantic_serializer__.to_python(
        model, mode="json", by_alias=True, include=set(own)
    )
    return written


def has_default(variable: typing.TypeVar) -> bool:
    """Whether type variable ``variable`` has a default (typing's has none before Python 3.13)."""
    found = getattr(variable, "has_default", None)
    return bool(found()) if callable(found) else False


def free_type_variable(annotation: object) -> bool:
    """Whether ``annotation`` is a type variable with no default, constraints nor bound.

    pydantic reads one as ``Any``: the type of a user's subclass still generic in a type
    variable of its own (``class Mine(BabelEnvelope[X], Generic[X])``), where the spec's own
    type (a JSON object, every SOM family, JSON data) is meant.
    """
    return (
        isinstance(annotation, typing.TypeVar)
        and not has_default(annotation)
        and not annotation.__constraints__
        and annotation.__bound__ is None
    )


def any_is_unparametrised(cls: type[BaseModel], item: object, parameter: object) -> bool:
    """Whether ``cls[item]`` is ``cls`` itself: ``item`` is ``Any``, ``cls`` still generic.

    A generic envelope's ``Any`` is its unparametrised reading (every SOM family, any JSON
    object as BabelQueue ``data``): as a type, ``Any`` would take what the spec refuses. A
    user's subclass still generic in ``parameter`` alike, and typing_extensions' ``Any`` (a
    class of its own on Python 3.10).
    """
    generic = cls.__pydantic_generic_metadata__["parameters"] == (parameter,)
    return generic and (item is typing.Any or item is typing_extensions.Any)


def schema_root(cls: type) -> type | None:
    """The class of ``cls``'s own that declares its schema, or ``None`` for no wire model.

    Every message of that schema is an instance of it: ``SomEnvelope`` for
    ``SomEnvelope[StoryContext]``, a sibling parametrisation and a user's subclass of either;
    ``MxRequest`` for ``MxRequest[Args]``. A model that declares its schema is its own root.
    """
    name = getattr(cls, "__schema_name__", "")
    if not name:
        return None
    found: type | None = None
    for base in cls.__mro__:
        if base.__dict__.get("__schema_name__") == name:
            found = base  # the furthest: a subclass that declares the same name again is not it
    return found


def typed_by_model(cls: type[_Model], payload: object) -> type[_Model]:
    """The class a producer validates ``payload`` with: ``cls`` typed by a model's own class.

    An envelope still generic in its one type parameter (the unparametrised class, a user's
    ``class Mine(MxRequest)``) reads its payload as JSON data, which a model instance is not:
    the class parametrised by the model's class validates (and dumps) it as that model, as the
    producers' overloads type it (``MxRequest[Model]``, ``BabelEnvelope[Model]``). A class
    with a payload type of its own keeps it, and its validation refuses another model; so does
    one generic in more than the one parameter, which a single class cannot fill.
    """
    if isinstance(payload, BaseModel) and len(cls.__pydantic_generic_metadata__["parameters"]) == 1:
        typed: type[_Model] = cast("Any", cls)[type(payload)]
        return typed
    return cls


def plain_text(text: str) -> str:
    """A docstring's reST markup (``` ``x`` ```, ``:meth:`x` ``) as the plain `x` of Markdown."""
    return _ROLE.sub(r"`\1`", text).replace("``", "`")


def plain_descriptions(schema: dict[str, Any]) -> None:
    """Rewrite a model schema's description, and its properties', as :func:`plain_text`."""
    description = schema.get("description")
    if isinstance(description, str):
        schema["description"] = plain_text(description)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for member in cast("dict[str, Any]", properties).values():
            if isinstance(member, dict) and isinstance(member.get("description"), str):
                member["description"] = plain_text(member["description"])


def attach_warnings(model: BaseModel, found: list[Violation]) -> None:
    """Keep what a validator noted on the instance, for :meth:`WireModel.envelope_warnings`.

    Declaring a ``PrivateAttr`` would make pydantic initialise private state on every
    validation, a measurable share of a small message's parse; the private-state slot is
    filled only for the rare message that has something to report, and ``model_copy`` carries it.
    """
    private = model.__pydantic_private__
    if private is None:
        object.__setattr__(model, "__pydantic_private__", {_WARNINGS: tuple(found)})
    else:
        # An instance validated again (`model_validate(envelope)`, a FastAPI `response_model`, a
        # FastStream publish) runs its validators again on itself: what it noted already is
        # kept once, not again.
        kept = tuple(private.get(_WARNINGS, ()))
        private[_WARNINGS] = kept + tuple(one for one in found if one not in kept)


def attached_warnings(model: BaseModel) -> list[Violation]:
    """What :func:`attach_warnings` kept on ``model`` (a new list)."""
    private = model.__pydantic_private__
    return list(private.get(_WARNINGS, ())) if private else []


def model_named(title: str) -> Any:
    """The wire model (or union of them) whose ``ValidationError.title`` is ``title``, if ours."""
    found = _UNIONS.get(title) or _REGISTRY.get(title)
    return found if found is not None else _REGISTRY.get(title.partition("[")[0])


def titled(title: str, union: Any) -> ConfigDict:
    """The config of a ``TypeAdapter`` of a union of wire models, its errors titled ``title``.

    Pydantic titles them with its dump of the union's core schema, which names private
    validators; :func:`model_named` finds the union by ``title``, so ``violations(exc)`` needs
    no ``model=``.
    """
    _UNIONS[title] = union
    return ConfigDict(title=title)
