"""JSON Schema (Draft 2020-12, and Draft-07) generated from the models, for other languages.

Each schema carries ``$schema``, a stable ``$id`` and titles and descriptions taken from the
models' docstrings (which restate the specs). The files shipped in ``envelopekit/schemas/`` are
this module's output; ``make schemas`` regenerates them and a test fails when they are stale.

Draft-07 (what AsyncAPI and many schema registries read) is the same schema rewritten: the
2020-12 document is the source, and :func:`to_draft_07` changes only its spelling.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal, cast

import orjson
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from ._check import REGISTRY, is_spec_name
from ._model import plain_text

__all__ = [
    "BASE_ID",
    "DRAFTS",
    "SCHEMA_NAMES",
    "Draft",
    "json_schema",
    "ref_to",
    "rule_schema",
    "schema_id",
    "shipping",
    "to_draft_07",
    "write_schemas",
]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
DIALECT_07: Final = "http://json-schema.org/draft-07/schema#"
BASE_ID: Final = "https://envelopekit.dev/schemas"
Draft = Literal["2020-12", "07"]
DRAFTS: Final[tuple[Draft, ...]] = ("2020-12", "07")

SCHEMA_NAMES: Final[dict[str, tuple[str, ...]]] = {
    spec: tuple(entry.schemas) for spec, entry in REGISTRY.items()
}
"""Each spec's generated schemas, by name (from its registry entry, ``_check.REGISTRY``)."""


def schema_id(spec: str, name: str, draft: Draft = "2020-12") -> str:
    """The stable ``$id`` of a generated schema (Draft-07 ones under ``draft-07/``)."""
    folder = "" if draft == "2020-12" else "draft-07/"
    return f"{BASE_ID}/{folder}{spec}/{name}.schema.json"


def ref_to(model: type[BaseModel], refs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The ``{"$ref": ...}`` among ``refs`` that points at ``model``'s definition.

    For a ``json_schema_extra`` callable that moves a model's references around (the SOM
    envelope's payload dispatch). There, references still carry pydantic's internal names
    (module and class, mangled); they become the short ``$defs`` names only afterwards. Reusing
    the reference objects, rather than writing ``#/$defs/Name`` by hand, keeps that renaming
    and pydantic's pruning of unreferenced ``$defs`` working.

    Raises:
        LookupError: when no reference points at ``model``.
    """
    name = re.compile(rf"(?:^|[^A-Za-z0-9]){re.escape(model.__name__)}(?:$|[^A-Za-z0-9])")
    for ref in refs:
        if name.search(ref["$ref"].rpartition("/")[2]):
            return dict(ref)
    raise LookupError(f"no reference to {model.__name__}")


# True while a shipped schema (`json_schema`, the files in `envelopekit/schemas/`) is generated.
_SHIPPING: ContextVar[bool] = ContextVar("envelopekit_shipping_schema", default=False)


def shipping() -> bool:
    """Whether the JSON Schema being generated is a shipped one, not pydantic's own.

    For a model whose pydantic JSON Schema (what FastAPI puts in OpenAPI) is written for code
    generators, while the shipped one is written for the reference validators: the SOM
    envelope is a discriminated ``oneOf`` in the first and an ``if``/``then`` dispatch in the
    second, with the same verdicts.
    """
    return _SHIPPING.get()


class _Generator(GenerateJsonSchema):
    """Pydantic's generator, stamped with the dialect and the schema's ``$id``."""

    identity: str = ""

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        token = _SHIPPING.set(True)
        try:
            body = _plain_text(super().generate(schema, mode=mode))
        finally:
            _SHIPPING.reset(token)
        return {"$schema": DIALECT, "$id": self.identity, **body}

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        # A retired key the spec declares `false` is listed as `false`, as the official schemas
        # write it: closed objects refuse it anyway, but the schema then says why.
        refused = sorted(getattr(schema["cls"], "__false_schema__", ()))
        properties = json_schema.get("properties")
        if refused and isinstance(properties, dict):
            cast("dict[str, Any]", properties).update(dict.fromkeys(refused, False))
        return json_schema


def _plain_text(node: Any) -> Any:
    """Every description under ``node`` as :func:`plain_text` (enums' and non-model parts')."""
    if isinstance(node, dict):
        node = cast("dict[str, Any]", node)
        return {
            key: (
                plain_text(value)
                if key == "description" and isinstance(value, str)
                else _plain_text(value)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_plain_text(item) for item in cast("list[object]", node)]
    return node


def _resolve(spec: str, name: str) -> tuple[str, Any]:
    """Our name of a generated schema, and its model (or TypeAdapter), from either name.

    A name may be ours or the spec's: its own schema file's, as its rule ids spell it
    (BabelQueue's ``message-envelope`` is our ``envelope``), which is the first of the spec's
    models whose ``__schema_name__`` it is.

    Raises:
        ValueError: for a (spec, name) pair that has no schema.
    """
    if is_spec_name(spec):
        entry = REGISTRY[spec]
        package = importlib.import_module(entry.package)
        for ours, model in entry.schemas.items():
            target = getattr(package, model)
            if name in (ours, getattr(target, "__schema_name__", None)):
                return ours, target
    known = ", ".join(f"{s}/{n}" for s, names in SCHEMA_NAMES.items() for n in names)
    raise ValueError(f"no schema {spec}/{name}; known: {known}")


@cache
def rule_schema(spec: str, name: str) -> str:
    """The ``<schema>`` of the rule ids a generated schema reports: its model's schema name.

    The model's ``__schema_name__``, the spec's own schema file (BabelQueue's ``envelope`` is
    ``message-envelope``).

    Raises:
        ValueError: for a (spec, name) pair that has no schema.
    """
    ours, target = _resolve(spec, name)
    own = getattr(target, "__schema_name__", None)
    return own if isinstance(own, str) else ours


def json_schema(spec: str, name: str, *, draft: Draft = "2020-12") -> dict[str, Any]:
    """The JSON Schema of one model, e.g. ``json_schema("som", "envelope")``.

    A name may also be the spec's own schema-file name, as rule ids use it
    (``json_schema("babelqueue", "message-envelope")``). ``draft="07"`` gives the same schema
    in Draft-07 (:func:`to_draft_07`).

    Raises:
        ValueError: for a (spec, name) pair that has no schema, or an unknown draft.
    """
    name, target = _resolve(spec, name)
    if draft == "07":
        return to_draft_07(json_schema(spec, name), schema_id(spec, name, "07"))
    if draft != "2020-12":
        raise ValueError(f"unknown draft {draft!r}; expected one of {', '.join(DRAFTS)}")
    generator = type("Generator", (_Generator,), {"identity": schema_id(spec, name)})
    if isinstance(target, TypeAdapter):
        document: dict[str, Any] = target.json_schema(mode="validation", schema_generator=generator)
    else:
        assert isinstance(target, type) and issubclass(target, BaseModel)
        document = target.model_json_schema(mode="validation", schema_generator=generator)
    return document


def write_schemas(
    directory: Path, specs: Iterable[str] | None = None, *, draft: Draft = "2020-12"
) -> list[Path]:
    """Write ``<directory>/<spec>/<name>.schema.json`` for every schema; returns the paths."""
    written: list[Path] = []
    for spec in specs if specs is not None else SCHEMA_NAMES:
        for name in SCHEMA_NAMES[spec]:
            path = directory / spec / f"{name}.schema.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(render(json_schema(spec, name, draft=draft)))
            written.append(path)
    return written


_DEFS_2020: Final = "#/$defs/"
_DEFS_07: Final = "#/definitions/"


def to_draft_07(document: dict[str, Any], identity: str | None = None) -> dict[str, Any]:
    """A Draft 2020-12 schema of ours, spelt in Draft-07.

    What changes: ``$schema``; ``$defs`` becomes ``definitions`` (and references follow); a
    ``$ref`` with sibling keywords, which Draft-07 ignores, moves into an ``allOf`` beside
    them; ``dependentRequired`` becomes ``dependencies``. Everything else our generator emits
    (``const``, ``if``/``then``/``else``, ``patternProperties``, ``propertyNames``, the formats)
    means the same in both drafts.

    Raises:
        ValueError: for a keyword Draft-07 cannot say (none of our schemas uses one; a new one
            must be translated here, not dropped).
    """
    body = _to_07(document, top=True)
    body["$schema"] = DIALECT_07
    if identity is not None:
        body["$id"] = identity
    # `$schema` and `$id` first, as in the 2020-12 files.
    head = {key: body.pop(key) for key in ("$schema", "$id") if key in body}
    return {**head, **body}


_NOT_IN_07: Final = frozenset(
    {
        "prefixItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "dependentSchemas",
        "$dynamicRef",
        "$dynamicAnchor",
        "$anchor",
        "minContains",
        "maxContains",
    }
)


# Keywords whose values are instances, not schemas: copied as they are, never read.
_VALUES: Final = frozenset({"const", "enum", "default", "examples"})


def _to_07(node: Any, top: bool = False) -> Any:
    if isinstance(node, list):
        return [_to_07(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = _NOT_IN_07.intersection(node)
    if found:
        raise ValueError(f"Draft-07 has no {', '.join(sorted(found))}")
    converted: dict[str, Any] = {}
    for key, value in node.items():
        if key in _VALUES:
            converted[key] = value
        elif key == "$defs" and top:
            converted["definitions"] = {n: _to_07(s) for n, s in value.items()}
        elif key in ("properties", "patternProperties", "definitions"):
            converted[key] = {n: _to_07(s) for n, s in value.items()}
        elif key == "dependentRequired":
            converted["dependencies"] = dict(value)
        elif key == "$ref":
            if not value.startswith(_DEFS_2020):
                raise ValueError(f"only local $defs references are converted, not {value!r}")
            converted[key] = _DEFS_07 + value[len(_DEFS_2020) :]
        else:
            converted[key] = _to_07(value)
    if "$ref" in converted and len(converted) > 1:
        # Draft-07: "All other properties in a $ref object MUST be ignored."
        reference = {"$ref": converted.pop("$ref")}
        converted["allOf"] = [reference, *converted.get("allOf", [])]
    return converted


def render(document: dict[str, Any]) -> bytes:
    """The bytes a schema file holds: indented, keys as generated, newline-terminated."""
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
