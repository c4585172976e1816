r"""Python-mode validation refuses what JSON validation refuses: strings that are not Unicode.

``json.loads`` decodes the escape ``"\ud800"`` into a ``str`` holding a lone surrogate, which
is not Unicode text: pydantic's JSON parser refuses the same bytes (``json.invalid``), while its
Python mode (``model_validate`` of a dict, a ``TypeAdapter``, FastAPI) would accept the decoded
dict and fail only when the message is written. The message models' core schemas are
``json-or-python`` schemas (:func:`text_checked_schema`): JSON validation runs the model schema
as it is, Python validation first probes its input (:func:`refuse_unreadable`), which also
refuses nesting deeper than the parser reads.

Every public model is such a model (``WireModel``, Matrix's ``WireNames``, SOM's
``UnvalidatedPayload``), so that each refuses alone, as a ``TypeAdapter``'s type or a FastAPI
body, what it would fail to write. Within one of them, the models it holds are read by their
JSON branches: the outer probe read their input, and is paid once.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from functools import partial
from typing import Any, Final, Literal, cast

import orjson
from pydantic import (
    BaseModel,
    GetCoreSchemaHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
)
from pydantic_core import (
    CoreSchema,
    SchemaValidator,
    core_schema,
)

from . import rules
from ._failfast import (
    FULL_REPORT_BYTES,
    PROBES,
    fresh_validator,
    large_validator,
    own_config,
    schemas_in,
    stops_early,
)
from ._json import PARSER_MAX_DEPTH, exceeds_depth, plain_text, pointer_of, segment
from ._model import ProbedOnRebuild, schema_root
from ._violations import is_unicode, pointer, rule_error

WRITTEN: Final = "envelopekit:written"
"""A validation context key: the text orjson wrote of the input, plain JSON data, where a
producer wrote it and kept it within the depth ``check`` reads (``envelopekit._bounds``).
:func:`refuse_unreadable` then writes no probe of it again, nor do the fast paths."""

__all__ = [
    "WRITTEN",
    "CallKind",
    "InstancesRead",
    "TextChecked",
    "call_kind",
    "instance_data",
    "instances_read",
    "json_branch",
    "part_schema",
    "probed",
    "refuse_unreadable",
    "run_time_extra",
    "text_check_built",
    "text_checked_again",
    "text_checked_schema",
    "too_deep_at",
]


def text_checked_schema(
    cls: type[BaseModel],
    source: type[BaseModel],
    handler: GetCoreSchemaHandler,
    held: core_schema.WithInfoWrapValidatorFunction | None = None,
) -> CoreSchema:
    """A message model's core schema, for its ``__get_pydantic_core_schema__``.

    The model's ``ref`` moves to the ``json-or-python`` wrapper, so a nested use is still a
    ``$ref`` in the JSON Schema. Within another text-checked model's schema it is the JSON
    branch (:func:`part_schema`).

    ``held``: a wrap validator that a finished model held by another schema (a FastAPI body,
    FastStream's arguments) runs around its own validator on Python data, where the call is
    strict (the model's config; a run-time ``strict=False`` runs the model alone). It must
    decide as the model does under any other run-time option: it sees none of them.
    """
    if cls.__dict__.get("__pydantic_complete__"):
        return _used(source, handler, held)
    schema = _own(source, handler)
    if _WITHIN.get():
        return schema  # built within another one, which probes its input
    if schema["type"] == "definitions":
        return {**schema, "schema": _text_checked(schema["schema"])}
    return _text_checked(schema)


def part_schema(
    cls: type[BaseModel],
    source: type[BaseModel],
    handler: GetCoreSchemaHandler,
) -> CoreSchema:
    """The core schema of a model read alone as well as within a message model.

    Plain as pydantic builds it (its own validator is text-checked once built,
    :func:`text_check_built`); within a text-checked model's schema, which probes the whole
    input first, a finished one is its JSON branch: the envelope's dict door probes once, and
    the envelope's schema (which the fast paths compile) is the one it always was.
    """
    if cls.__dict__.get("__pydantic_complete__"):
        return _used(source, handler)
    return _own(source, handler)


def text_check_built(cls: type[BaseModel]) -> None:
    """Make a finished model's own validator probe its input once (``__pydantic_on_complete__``).

    Its schema is wrapped after pydantic inlined its parts (wrapped before, the schema would
    hold the model's twice, both branches, and pydantic would keep each part a definition in
    every schema that holds the model too); a message model's (:func:`text_checked_schema`) is
    already. pydantic-core reuses a finished model's own validator for a model it holds, which
    would probe again at each one: the validator is built anew, with the JSON branches of the
    text-checked models it holds.
    """
    schema = cls.__pydantic_core_schema__
    top = schema["schema"] if schema["type"] == "definitions" else schema
    wrapped = schema
    if not _is_text_checked(top):
        wrapped = _text_checked(top)
        if schema["type"] == "definitions":
            wrapped = core_schema.definitions_schema(wrapped, schema["definitions"])
    held = {
        node["cls"]
        for node in schemas_in(wrapped)
        if node.get("type") == "model"
        and node["cls"] is not cls
        and _is_text_checked(_own_top(node["cls"]))
    }
    gate = stops_early(wrapped)
    reads = _reads_instances(cls)
    if wrapped is schema and not held and not gate and not reads:
        return
    cls.__pydantic_core_schema__ = wrapped  # pyright: ignore[reportAttributeAccessIssue]
    # Its own model too: reused, the validator would hold the one it replaces. Gated where a
    # large message's fail-fast reading could report less (else the gate would cost the dict
    # doors a wrap validator, and never read anything otherwise); the gate knows the class, as
    # the probe of one that reads some instances as their messages must (`instance_data`).
    own = gated(wrapped, cls) if gate else bound(wrapped, cls) if reads else wrapped
    cls.__pydantic_validator__ = fresh_validator(own, {cls, *held}, own_config(wrapped, cls))


def _reads_instances(cls: type[BaseModel]) -> bool:
    """Whether ``cls``'s own validator reads some instance as its message (:func:`instance_data`).

    Not the model that declares its schema, whose instances are every message of that schema,
    and which keeps them as they are: the hot doors of the unparametrised envelopes pay nothing.
    """
    root = schema_root(cls)
    revalidated = cls.model_config.get("revalidate_instances", "never") != "never"
    return (root is not None and root is not cls) or revalidated


def instances_read(schema: CoreSchema, model: type[BaseModel]) -> CoreSchema:
    """``schema``, of ``model`` held by another model, reading what :func:`instance_data` reads.

    Within a message model the parts it holds are read by their JSON branches, with no probe
    of their own: an instance of the part's schema that pydantic would refuse (a family
    instance where the envelope's payload is a user's subclass of it) or read by its
    attribute names (a class that revalidates) is its wire data there too, as given alone.
    Python data only: no JSON text holds an instance.
    """
    ref = schema.get("ref")
    bare = cast("CoreSchema", {key: value for key, value in schema.items() if key != "ref"})
    read = core_schema.no_info_before_validator_function(partial(_held_instance, model), bare)
    wrapped = core_schema.json_or_python_schema(json_schema=bare, python_schema=read)
    if ref is not None:
        wrapped["ref"] = ref
    return wrapped


def _held_instance(model: type[BaseModel], value: object) -> object:
    """``value`` as a held ``model`` reads it (:func:`instances_read`)."""
    if type(value) is dict or not isinstance(value, BaseModel):
        return value
    return instance_data(value, model)


class InstancesRead:
    """Field metadata: a user's model the field is typed by reads its bases' instances as data.

    The type parameter of an envelope (BabelQueue's ``data``, a Matrix payload) is a user's
    model, whose own schema is pydantic's: given an instance of a model its class derives from
    (``BabelEnvelope[MyOrder]`` given ``data=Order(...)``), pydantic refuses it
    (``model_type``), where the same message's JSON, or an envelope holding that instance, is
    read. The model's own validator, given it alone, is left as pydantic made it.
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """The field type's schema; a model that derives from another reads its instances."""
        schema = handler(source)
        found: Any = handler.resolve_ref_schema(schema)
        if found.get("type") != "model" or not _derives(found["cls"]):
            return schema  # no model, one read so already (`_used`), or one with no base
        return instances_read(schema, found["cls"])


def _derives(model: type[BaseModel]) -> bool:
    """Whether ``model`` is no wire model and derives from a model (not ``BaseModel`` itself)."""
    if schema_root(model) is not None:
        return False  # a wire model held is read so by its own schema (`_used`)
    return any(base is not BaseModel and issubclass(base, BaseModel) for base in model.__mro__[1:])


def _held_reads_instances(cls: type[BaseModel]) -> bool:
    """Whether ``cls``, held, reads some instance a user can give it as its wire data.

    One of a public class of its schema that it derives from (a user's subclass of a SOM
    family, of ``BabelMeta``), or any its config revalidates. The spec's own classes derive
    from private roots only, whose instances nobody holds: the envelopes holding them (and
    the fast paths compiled from their schemas) pay nothing.
    """
    if cls.model_config.get("revalidate_instances", "never") != "never":
        return True
    root = schema_root(cls)
    return root is not None and any(
        base is not cls and not base.__name__.startswith("_") and schema_root(base) is root
        for base in cls.__mro__
    )


def gated(schema: CoreSchema, cls: type[BaseModel]) -> CoreSchema:
    """``schema`` (text-checked) as the model's own validator runs it: its probe a gate too.

    The class's validator is what every door but the model's own methods runs: a
    ``TypeAdapter`` of the class, FastAPI's body, FastStream's arguments, a model holding it.
    Over ``FULL_REPORT_BYTES`` of plain JSON data, where the call sets no run-time option that
    could change the verdict (:func:`_at_defaults`), the gate reads the message as
    ``model_validate`` does, with the fail-fast copy of the schema (one error per array): the
    whole reading's errors were unbounded (1 MiB of SOM assets ``[{}, ...]``: 287x
    ``orjson.loads``). The schema itself, which the fast paths and fail-fast copies compile,
    keeps the plain probe.
    """
    gate = probed(partial(_gate, cls))
    # What the gate read goes on to the model, which returns an instance as it is (its
    # after-validators read it again: a wrap or a default around the model to spare them
    # would stop a `PydanticUseDefault` of the model's own validators on its way to the
    # default of the field holding the model).
    return _probe_replaced(schema, lambda probe: core_schema.chain_schema([gate, probe["schema"]]))


def bound(schema: CoreSchema, cls: type[BaseModel]) -> CoreSchema:
    """``schema`` (text-checked) as the own validator of a class that reads instances runs it.

    Its probe is told the class (:func:`instance_data`), as a gate's is (:func:`gated`): a
    positional ``partial``, which pydantic-core calls as fast as the function itself.
    """
    probe = partial(_own_probe, cls)
    return _probe_replaced(
        schema, lambda node: {**node, "function": {**node["function"], "function": probe}}
    )


def _probe_replaced(schema: CoreSchema, replace: Callable[[Any], Any]) -> CoreSchema:
    """``schema`` with its probe (the top ``function-before`` of ``refuse_unreadable``) replaced.

    ``schema`` itself where it has none (a typed BabelQueue envelope's top is its own chain).
    """
    node: Any = schema
    kind = node["type"]
    if kind == "function-before" and node["function"]["function"] is refuse_unreadable:
        return cast("CoreSchema", replace(node))
    if kind == "definitions" or kind in _AROUND:
        keys = ("json_schema", "python_schema") if kind == "json-or-python" else ("schema",)
        inner = {key: _probe_replaced(node[key], replace) for key in keys}
        if all(inner[key] is node[key] for key in keys):
            return schema
        return cast("CoreSchema", {**node, **inner})
    return schema


def text_checked_again(
    cls: type[BaseModel], rebuilt: bool | None, *, was_complete: bool
) -> bool | None:
    """``rebuilt`` (``cls.model_rebuild``'s result), once a model finished before probes again.

    pydantic runs no ``__pydantic_on_complete__`` for a model rebuilt with ``force=True``: its
    new validator would take what no JSON text carries (a lone surrogate, then raised by its
    dump), as :func:`text_check_built` made the first one refuse.
    """
    if rebuilt and was_complete:
        text_check_built(cls)
    return rebuilt


def _own_top(model: type[BaseModel]) -> CoreSchema:
    schema: Any = model.__dict__.get("__pydantic_core_schema__")
    if not isinstance(schema, dict):
        return core_schema.any_schema()  # not built
    found = schema["schema"] if schema.get("type") == "definitions" else schema
    return cast("CoreSchema", found)


_WITHIN: ContextVar[bool] = ContextVar("envelopekit_text_checked_within", default=False)
"""Whether a text-checked model's schema is being built: the models it holds are not probed."""


def _own(source: type[BaseModel], handler: GetCoreSchemaHandler) -> CoreSchema:
    # The model's own schema: the finished models it holds are their JSON branches.
    token = _WITHIN.set(True)
    try:
        return handler(source)
    finally:
        _WITHIN.reset(token)


def _used(
    source: type[BaseModel],
    handler: GetCoreSchemaHandler,
    held: core_schema.WithInfoWrapValidatorFunction | None = None,
) -> CoreSchema:
    """A use of a finished model: its model schema alone, or within another one its JSON branch.

    Outside a message model (a ``TypeAdapter`` of ``Annotated[Model, Body()]``, FastAPI's
    body; a model holding it, FastStream's handler arguments) it is the model schema alone:
    pydantic-core runs a complete model's own validator for it, whose top is the probe's
    ``json-or-python`` and which therefore runs the probe and the after-validators itself.
    The whole schema there ran them twice (BabelQueue's FastAPI door 1.7x its
    ``TypeAdapter``).
    """
    schema = handler(source)
    found = handler.resolve_ref_schema(schema)
    if not _is_text_checked(found) or "ref" not in found:
        return schema
    if not _WITHIN.get():
        model = _model_of(found, source)
        own = source.__dict__.get("__pydantic_core_schema__")
        if model is None or not isinstance(own, dict) or _own_top(source) is not found:
            return schema  # not the class's own validator's schema: it runs as it is
        if held is None:
            # A copy: pydantic inlines the definitions it refers to in place.
            return cast("CoreSchema", {**copy.deepcopy(model), "ref": found["ref"]})
        strict = core_schema.with_info_wrap_validator_function(held, copy.deepcopy(model))
        return core_schema.json_or_python_schema(
            json_schema=copy.deepcopy(model),
            python_schema=core_schema.lax_or_strict_schema(
                lax_schema=copy.deepcopy(model), strict_schema=strict, strict=True
            ),
            ref=found["ref"],
        )
    # Under the same ref: the schema being built defines it as this one.
    branch = cast("CoreSchema", {**json_branch(found), "ref": found["ref"]})
    return instances_read(branch, source) if _held_reads_instances(source) else branch


def _model_of(schema: CoreSchema, cls: type[BaseModel]) -> CoreSchema | None:
    """The ``model`` schema of ``cls`` under ``schema``'s JSON branches and validators."""
    node: Any = schema
    while node.get("type") in _AROUND:
        node = node["json_schema" if node["type"] == "json-or-python" else "schema"]
    return cast("CoreSchema", node) if node.get("type") == "model" and node["cls"] is cls else None


_AROUND: Final = frozenset({"json-or-python", "function-after", "function-before", "function-wrap"})
"""The schemas a message model's own wraps its model schema in."""


def _is_text_checked(schema: CoreSchema) -> bool:
    """Whether ``schema`` is a :func:`_text_checked` one, or wraps one (BabelEnvelope's)."""
    if schema["type"] != "json-or-python":
        return False
    python: Any = schema["python_schema"]
    if python.get("type") == "function-before":
        return python["function"]["function"] is refuse_unreadable
    return _is_text_checked(schema["json_schema"])


class TextChecked(ProbedOnRebuild):
    """The mixin of a model read alone as well as within a message model (before ``BaseModel``).

    :func:`part_schema` and :func:`text_check_built` (again on a rebuild), where ``WireModel``
    is not the base.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The model's schema; within a message model's, its JSON branch."""
        return part_schema(cast("type[BaseModel]", cls), source, handler)

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        """Refuse in Python mode what no JSON text carries, the model read alone too."""
        super().__pydantic_on_complete__()  # type: ignore[misc]
        text_check_built(cast("type[BaseModel]", cls))


def _text_checked(schema: CoreSchema) -> CoreSchema:
    ref = schema.get("ref")
    bare = cast("CoreSchema", {key: value for key, value in schema.items() if key != "ref"})
    wrapped = core_schema.json_or_python_schema(
        json_schema=bare,
        python_schema=core_schema.with_info_before_validator_function(refuse_unreadable, bare),
    )
    if ref is not None:
        wrapped["ref"] = ref
    return wrapped


def json_branch(schema: CoreSchema) -> CoreSchema:
    """The schema JSON validation runs: a :func:`text_checked_schema` unwrapped."""
    if schema["type"] == "json-or-python":
        inner: CoreSchema = schema["json_schema"]
        return inner
    return schema


def refuse_unreadable(
    value: object,
    info: ValidationInfo,
    model: type[BaseModel] | None = None,
    handler: ValidatorFunctionWrapHandler | None = None,
) -> object:
    """``value`` (the input of Python validation), refused where no JSON text could carry it.

    A string or key that is no Unicode text, or nesting deeper than the JSON parser reads. One
    orjson encode probes every string and key (orjson refuses a lone surrogate); only an input
    it cannot encode is walked in Python, for the pointer and to tell a lone surrogate from
    what else orjson refuses (an integer beyond 64 bits, a key that is not a string). The same
    encode shows the depth: a text of ``2n`` bytes nests ``n`` levels at most, and only a
    longer one is read by the depth scan (C passes); orjson itself refuses 255 levels, where
    the input is walked. Python data past :data:`PARSER_MAX_DEPTH` (200) is what the JSON door
    refuses as ``json_invalid``, and what a message accepted from it could not be written as
    and read back. A producer that wrote its wire data and kept it within the bounds says so
    in the validation context (:data:`WRITTEN`): nothing is written again.

    Raises:
        PydanticCustomError: ``json.invalid`` for a lone surrogate, a verdict on the whole
            document, as JSON validation gives for the same message; ``message.too_deep`` at
            the pointer of the first array or object past the limit.

    With a ``model`` and the ``handler`` of its gate (:func:`_gate`), a message over
    ``FULL_REPORT_BYTES`` is read as the model's ``model_validate`` reads it.
    """
    context = info.context
    # (The type test first: `isinstance` of a model's ABC costs a dict's input 60 ns.)
    if type(value) is not dict and isinstance(value, BaseModel):
        # An instance, not input: as it is, unless the model reads it as its message.
        value = instance_data(value, model)
        if type(value) is not dict:
            return value
        written = None  # the context's text, if any, is of no such data
    else:
        written = context.get(WRITTEN) if type(context) is dict else None
    if written is not None:
        text = written  # its producer wrote it, within the bounds: no second probe
    else:
        try:
            text = orjson.dumps(value, default=_members)
        except orjson.JSONEncodeError:
            found = _written_by_json(value)
            if found is None:
                _refuse_lone_surrogate(value)
                _refuse_too_deep(value)
                return value
            text = found
        if len(text) > 2 * PARSER_MAX_DEPTH and exceeds_depth(text, PARSER_MAX_DEPTH):
            _refuse_too_deep(value)
    if (
        model is not None
        and len(text) > FULL_REPORT_BYTES
        and type(value) is dict
        and handler is not None
        and _at_defaults(handler)
        and (written is not None or plain_text(value) is not None)
    ):
        # Bounded as `model_validate` bounds the same message: one error per array, read with
        # no probe (this one ran) and the call's own context (a user's validator reads it, and
        # may note into it).
        return large_validator(model, probed=True).validate_python(value, context=context)
    return value


PROBES.add(refuse_unreadable)


def _own_probe(model: type[BaseModel], value: object, info: ValidationInfo) -> object:
    """The probe of the own validator of ``model``, which reads some instances (:func:`bound`)."""
    return refuse_unreadable(value, info, model)


def instance_data(value: BaseModel, model: type[BaseModel] | None) -> object:
    """``value``, an instance given to ``model``'s own validator, as that validator reads it.

    pydantic keeps an instance of the class as it is (``revalidate_instances="never"``),
    refuses one of a base class (``model_type``), and reads one of the generic class a
    parametrisation was made from by its attribute names, where the wire names (SOM's
    ``_actors`` and ``@context``, Matrix's camelCase) are then missing and the names unknown
    keys. An instance of ``model``'s schema (:func:`~envelopekit._model.schema_root`: the
    unparametrised envelope, a sibling parametrisation, a user's subclass) that it does not
    keep is the message it is: its wire data, which ``model`` reads as it reads that message's
    JSON, with the same verdict and rule ids (``payload.family_unexpected`` for another SOM
    family). An instance ``model``'s config revalidates is read so too. A user's model that is
    no wire model (an envelope's type parameter, :class:`InstancesRead`) reads so an instance
    of a model it derives from, and its own as pydantic does. Anything else (an instance of
    another schema, ``model`` unknown: a probe within another schema) is left to pydantic.

    Raises:
        PydanticCustomError: ``json.invalid`` for an instance no JSON text holds (one made
            with ``model_construct`` of values its dump cannot write).
    """
    if model is None:
        return value
    root = schema_root(model)
    if isinstance(value, model):
        mode = model.model_config.get("revalidate_instances", "never")
        if (
            root is None
            or mode == "never"
            or (mode == "subclass-instances" and type(value) is model)
        ):
            return value
    elif root is None:
        if not issubclass(model, type(value)):
            return value  # a user's model given another's instance, refused by pydantic
    elif not isinstance(value, root):
        return value
    try:
        # pydantic's own writing of the wire: what `to_json()` writes (tests/test_doors.py).
        return value.model_dump(mode="json", by_alias=True, warnings=False)
    except (ValueError, RecursionError) as error:  # PydanticSerializationError is a ValueError
        raise rule_error(
            rules.JSON_INVALID,
            f"Invalid JSON: the {type(value).__name__} instance has no JSON text ({error}).",
        ) from None


def _gate(
    model: type[BaseModel],
    value: object,
    handler: ValidatorFunctionWrapHandler,
    info: ValidationInfo,
) -> object:
    """The probe of ``model``'s own validator (:func:`gated`): the probe read's handler."""
    return refuse_unreadable(value, info, model, handler)


class _Instance:
    """The class of the probe's ``init`` member: an instance of it is read as it is."""


def _state_probe() -> tuple[CoreSchema, dict[str, Any]]:
    """A schema whose reading of :data:`_PROBE_INPUT` shows the call's run-time options.

    Each member reads under one option: ``strict`` (either way), ``extra`` (any of its values,
    over a typed dict's own), ``by_name`` (a member found by its name where its alias is
    absent), ``by_alias=False``, and ``self_instance`` (a model's ``__init__``, whose instance
    the validation fills: pydantic-core reads the member's input into it, which an instance
    refuses before anything is set). A member's refusal reads as ``"refused"``, so the reading
    is one value, never an error.
    """

    def member(schema: CoreSchema, alias: str | None = None) -> core_schema.TypedDictField:
        kept = core_schema.with_default_schema(schema, default="refused", on_error="default")
        return core_schema.typed_dict_field(kept, validation_alias=alias)

    def named(name: str, alias: str) -> CoreSchema:
        field = core_schema.typed_dict_field(
            core_schema.int_schema(strict=True), required=False, validation_alias=alias
        )
        return core_schema.typed_dict_schema({name: field}, extra_behavior="ignore")

    # Required: read into the instance to fill, an `_Instance` refuses whatever the options.
    instance_fields = core_schema.model_fields_schema(
        {"absent": core_schema.model_field(core_schema.int_schema())}
    )
    schema = core_schema.typed_dict_schema(
        {
            "strict": member(core_schema.int_schema(strict=True)),
            "lax": member(core_schema.int_schema(strict=False)),
            "allow": member(core_schema.typed_dict_schema({}, extra_behavior="allow")),
            "forbid": member(core_schema.typed_dict_schema({}, extra_behavior="forbid")),
            "ignore": member(core_schema.typed_dict_schema({}, extra_behavior="ignore")),
            "alias": member(named("a", "A")),
            "name": member(named("b", "B")),
            "init": member(core_schema.model_schema(_Instance, instance_fields)),
        },
        extra_behavior="ignore",
    )
    given = {
        "strict": "1",
        "lax": "1",
        "allow": {"x": 1},
        "forbid": {"x": 1},
        "ignore": {"x": 1},
        "alias": {"A": 1},
        "name": {"b": 1},
        "init": _Instance(),
    }
    return schema, given


_STATE_PROBE, _PROBE_INPUT = _state_probe()
_AT_DEFAULTS: Final = SchemaValidator(_STATE_PROBE).validate_python(_PROBE_INPUT)
"""The probe's reading with no run-time option."""
_AT_INIT: Final = SchemaValidator(_STATE_PROBE).validate_python(
    _PROBE_INPUT, self_instance=_Instance()
)
"""The probe's reading in a model's ``__init__``: its ``init`` member refused, nothing else."""

CallKind = Literal["defaults", "init", "options"]
"""How a validation runs: with no run-time option, in a model's ``__init__``, or with options."""


def probed(function: core_schema.WithInfoWrapValidatorFunction) -> CoreSchema:
    """A wrap validator of ``function`` whose handler reads the probe (see :func:`call_kind`).

    ``function`` returns the value the validation goes on with (a ``chain`` step).
    """
    return core_schema.with_info_wrap_validator_function(function, _STATE_PROBE)


def call_kind(handler: ValidatorFunctionWrapHandler) -> CallKind:
    """How the validation of ``handler`` (a :func:`probed` one's) runs.

    ``"options"`` where ``strict``, ``extra``, ``by_name`` or ``by_alias=False`` could change a
    verdict; ``"init"`` where it fills an instance (a model's ``__init__``, which the
    validation's own result would leave empty): what a validator function cannot see, shown by
    the probe's reading under the same call, against its readings at the defaults and in
    ``__init__``.
    """
    try:
        reading = handler(_PROBE_INPUT)
    except (ValidationError, ValueError):  # pydantic-core told to find fields by neither name
        return "options"  # nor alias: the whole reading says so
    if reading == _AT_DEFAULTS:
        return "defaults"
    return "init" if reading == _AT_INIT else "options"


def run_time_extra(
    handler: ValidatorFunctionWrapHandler,
) -> Literal["allow", "ignore", "forbid"] | None:
    """The run-time ``extra`` of the validation of ``handler`` (a :func:`probed` one's), if any.

    pydantic-core applies it over every model's own ``extra``: the probe's typed dicts of each
    ``extra`` read alike under it.
    """
    try:
        reading = handler(_PROBE_INPUT)
    except (ValidationError, ValueError):  # the whole reading refused (see `call_kind`)
        return None
    if reading["forbid"] != "refused":
        return "allow"
    if reading["allow"] == "refused":
        return "forbid"
    return "ignore" if reading["allow"] == {} else None


def _at_defaults(handler: ValidatorFunctionWrapHandler) -> bool:
    """Whether ``handler``'s validation runs with no run-time option that could change a verdict.

    ``strict``, ``extra``, ``by_name``, ``by_alias=False``, or an instance to fill (``__init__``,
    which the reading's own instance would leave empty) (:func:`call_kind`).
    """
    return call_kind(handler) == "defaults"


def _written_by_json(value: object) -> bytes | None:
    """``value`` as the standard library's C encoder writes it, where orjson wrote nothing.

    orjson refuses an integer beyond 64 bits too, and its refusal was the walk of every value
    in Python (50,000 integers beyond 2^64 in a dict's `data`: ``model_validate`` 52x
    ``orjson.loads``); the standard encoder writes any integer. ``None`` where it fails too,
    or a string or key holds a lone surrogate (its UTF-8 fails): the walk says where.
    """
    try:
        return json.dumps(
            value, default=_members, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None


def _refuse_lone_surrogate(value: object) -> None:
    at = _lone_surrogate_at(value)
    if at is not None:
        raise rule_error(
            rules.JSON_INVALID,
            f"Invalid JSON: a string or key at {at or '/'} holds a lone surrogate, "
            "which no JSON text can carry.",
        ) from None


def _refuse_too_deep(value: object) -> None:
    at = too_deep_at(value, PARSER_MAX_DEPTH)
    if at is not None:
        raise rule_error(
            rules.MESSAGE_TOO_DEEP,
            f"The message nests arrays and objects deeper than {PARSER_MAX_DEPTH} levels, "
            "the most its JSON text may hold.",
            pointer=at,
        ) from None


def _members(value: object) -> object:
    # orjson's hook for what it cannot encode: a model's members (input may hold models), one
    # object, as the model writes them.
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__
        return {**value.__dict__, **extra} if extra else value.__dict__
    return None  # anything else holds no string of the input


def too_deep_at(document: object, limit: int) -> str | None:
    """The pointer of the first array or object of ``document`` nested past ``limit`` levels.

    ``None`` when it nests no deeper. Python data: mappings, lists and tuples, and models
    (their members) are levels, as their JSON is. Walked with an explicit stack, in document
    order, never below the limit, so its cost is the size of what lies within it.
    """
    if not isinstance(document, (Mapping, list, tuple, BaseModel)):
        return None
    # (value, its depth, its parent's node, its key); a node (as the number walks build one)
    # for containers only, and a pointer only for what is reported.
    stack: list[tuple[object, int, Any, object]] = [(document, 1, None, None)]
    while stack:
        value, depth, parent, key = stack.pop()
        members: Iterable[tuple[object, object]]
        if isinstance(value, BaseModel):
            extra = value.__pydantic_extra__
            members = ({**value.__dict__, **extra} if extra else value.__dict__).items()
        elif isinstance(value, Mapping):
            members = cast("Mapping[object, object]", value).items()
        else:
            members = enumerate(cast("list[object] | tuple[object, ...]", value))
        node = (
            None if key is None else (None, parent, segment(key if type(key) is int else str(key)))
        )
        if depth > limit:
            return pointer_of(node, "")
        inner = [
            (item, depth + 1, node, member)
            for member, item in members
            if isinstance(item, (Mapping, list, tuple, BaseModel))
        ]
        stack.extend(reversed(inner))
    return None


def _lone_surrogate_at(document: object) -> str | None:
    """The pointer of the first string or key that is not Unicode text, if there is one.

    Each container is read once: one held twice holds the same strings, and one that holds
    itself (a cycle, which :func:`too_deep_at` then refuses as nesting past the limit) would
    be read without end.
    """
    stack: list[tuple[object, str]] = [(document, "")]
    read: set[int] = set()
    while stack:
        value, at = stack.pop()
        if isinstance(value, str):
            if not is_unicode(value):
                return at
            continue
        if id(value) in read:
            continue
        read.add(id(value))
        if isinstance(value, BaseModel):
            members = {**value.__dict__, **(value.__pydantic_extra__ or {})}
            stack.extend((item, at + pointer(name)) for name, item in members.items())
        elif isinstance(value, Mapping):
            for key, item in cast("Mapping[object, object]", value).items():
                if isinstance(key, str) and not is_unicode(key):
                    return at
                stack.append((item, at + pointer(str(key))))
        elif isinstance(value, (list, tuple)):
            items = cast("list[object] | tuple[object, ...]", value)
            stack.extend((item, at + pointer(index)) for index, item in enumerate(items))
    return None
