"""Sensitive fields (ADR-0030): declared in the model, marked in the schema, encrypted on the wire.

A field of a ``data`` model is marked with ``Annotated[str, Sensitive("contact")]``;
:func:`payload_schema` writes the per-URN JSON Schema with ``x-gdpr-sensitive`` on it (the
registry's keyword, validation-neutral); :func:`sensitive_paths` lists the marked paths exactly
as the official SDKs do; :func:`protect` and :func:`unprotect` encrypt and decrypt those leaves
of ``data`` with a :class:`Cipher` the caller provides (no crypto library here), byte-compatible
with ``babelqueue.gdpr`` under the same cipher.

Validation runs on cleartext: a typed envelope is validated when it is built, *before*
:func:`protect` (which returns a plain ``BabelEnvelope[dict]``: ciphertext is not the model),
and ``unprotect(env, cipher, model=Model)`` decrypts *then* validates into ``Model``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar, overload, runtime_checkable

from pydantic import BaseModel, GetJsonSchemaHandler, TypeAdapter, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, from_json

from .. import rules
from .._errors import DecryptError
from .._json import refuse_non_finite
from .._violations import pointer, violation, violations
from ._data_model import AnyWhereUnwritable
from ._envelope import BabelEnvelope

__all__ = [
    "GDPR_KEYWORD",
    "Cipher",
    "DecryptError",
    "Sensitive",
    "SensitivePath",
    "payload_schema",
    "protect",
    "sensitive_paths",
    "unprotect",
]

GDPR_KEYWORD = "x-gdpr-sensitive"
"""The registry's extension keyword: ``true`` or a non-empty category string."""

M = TypeVar("M", bound=BaseModel)
SchemaSource = Mapping[str, Any] | type[BaseModel]


@dataclass(frozen=True, slots=True)
class Sensitive:
    """Marks a ``data`` model field as personal data: ``Annotated[str, Sensitive("email")]``.

    Attributes:
        category: the optional category the schema carries (``"email"``, ``"national_id"``);
            without one the mark is ``true``.
    """

    category: str | None = None

    def __post_init__(self) -> None:
        if self.category is not None and (not isinstance(self.category, str) or not self.category):
            # The official readers take "" (and any non-string) as "not marked".
            raise ValueError("a Sensitive category must be a non-empty string, or omitted")

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema[GDPR_KEYWORD] = self.category if self.category is not None else True
        return schema


class SensitivePath(NamedTuple):
    """One marked location: ``profile.full_name``, ``addresses[].line`` (``""`` is the root).

    ``category`` is ``""`` for a ``true`` mark. Equal, as a tuple, to the official
    ``babelqueue.schema.SensitivePath``.
    """

    path: str
    category: str


@runtime_checkable
class Cipher(Protocol):
    """The caller's field cipher (a KMS, Vault transit, AES-GCM on ``cryptography`` ...).

    ``encrypt`` takes one field value's canonical JSON bytes and returns a JSON-safe string
    (base64); ``decrypt`` returns exactly those bytes, and raises for a string it did not make.
    The same protocol as ``babelqueue.gdpr.Cipher``, so one implementation serves both.
    """

    def encrypt(self, plaintext: bytes) -> str:
        """Protect one field value."""
        ...

    def decrypt(self, ciphertext: str) -> bytes:
        """Reverse :meth:`encrypt`."""
        ...


# --- schemas -------------------------------------------------------------------------------


def payload_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The per-URN JSON Schema of a ``data`` model, ``x-gdpr-sensitive`` marks included.

    Nested models are written in place (``$ref`` resolved), since the registry's readers and
    the official SDKs descend only ``properties`` and ``items``; for an optional field
    (``Address | None``) the non-null branch's ``properties``, ``items`` and mark are carried up
    to the field itself, so they are found there too.

    Raises:
        TypeError: for a recursive model, which has no such inline form.
    """
    generated = TypeAdapter(model).json_schema()
    definitions = generated.pop("$defs", {})
    return _inline(generated, definitions, ())  # type: ignore[no-any-return]


def _inline(node: Any, definitions: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise TypeError(f"{name} is recursive: a payload schema cannot inline it")
        out.update(_inline(definitions[name], definitions, (*seen, name)))
    out.update((k, _inline(v, definitions, seen)) for k, v in node.items() if k != "$ref")
    branches = out.get("anyOf")
    if isinstance(branches, list):
        # `X | None`: the registry's readers descend only `properties` and `items`, so the one
        # non-null branch lends them (and its mark) to the node; both apply only to a value of
        # their own type, so `null` still passes.
        others = [b for b in branches if isinstance(b, dict) and b.get("type") != "null"]
        if len(others) == 1:
            for key in (GDPR_KEYWORD, "properties", "items"):
                if key in others[0] and key not in out:
                    out[key] = others[0][key]
    return out


def sensitive_schema(data_type: Any) -> dict[str, Any] | None:
    """The :func:`payload_schema` of a ``data`` type that marks sensitive fields, else ``None``.

    Any type pydantic validates (a model, a dataclass, a ``TypedDict``). The marks are looked for
    before anything is inlined, so a type that marks none costs one pass over its schema (the
    inline form of nested types repeated at every use can be far larger), and a field pydantic
    cannot write a JSON Schema for marks nothing.

    Raises:
        TypeError: for a recursive type that marks fields: no inline schema can carry its marks,
            so they can be neither found on a path nor opened.
    """
    generated = TypeAdapter(data_type).json_schema(schema_generator=AnyWhereUnwritable)
    definitions = generated.pop("$defs", {})
    if not _marks_anything((generated, definitions)):
        return None
    schema: dict[str, Any] = _inline(generated, definitions, ())
    return schema if sensitive_paths(schema) else None


def _marks_anything(node: Any) -> bool:
    """Whether a mark (``true`` or a non-empty string) is anywhere under ``node``."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            mark = item.get(GDPR_KEYWORD)
            if mark is True or (isinstance(mark, str) and mark):
                return True
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _schema_of(source: SchemaSource) -> Mapping[str, Any]:
    return payload_schema(source) if isinstance(source, type) else source


def sensitive_paths(schema: SchemaSource) -> list[SensitivePath]:
    """Every location the schema (or a model's :func:`payload_schema`) marks, sorted by path.

    The official SDK's reading, kept exactly: ``properties`` give dotted paths, ``items`` a
    ``[]`` suffix; the mark is ``true`` or a non-empty string (``false``, ``""`` and numbers
    mark nothing); anything malformed is skipped, never raised on, and so is a node of a
    Python schema that holds itself (no JSON text can), where the path would go on forever.
    """
    found: list[SensitivePath] = []
    # An explicit stack rather than recursion, so a schema of any depth is read without a
    # RecursionError; pushed in reverse, so nodes come in the official's depth-first order
    # (which decides between two equal paths, `a.b` the key and `a` then `b`, after the sort).
    # A `None` path marks where a node's own reading ends: `inside` holds the nodes being read,
    # the ancestors of the next one. (A node shared by two places, not its own ancestor, is
    # read at both.)
    stack: list[tuple[Any, str | None]] = [(_schema_of(schema), "")]
    inside: set[int] = set()
    while stack:
        node, path = stack.pop()
        if path is None:
            inside.discard(id(node))
            continue
        if not isinstance(node, Mapping) or id(node) in inside:
            continue
        inside.add(id(node))
        stack.append((node, None))
        mark = node.get(GDPR_KEYWORD)
        if mark is True:
            found.append(SensitivePath(path, ""))
        elif isinstance(mark, str) and mark:
            found.append(SensitivePath(path, mark))
        items = node.get("items")
        if isinstance(items, Mapping):
            stack.append((items, path + "[]"))
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            stack.extend(
                (sub, f"{path}.{name}" if path else str(name))
                for name, sub in list(properties.items())[::-1]
            )
    found.sort(key=lambda p: p.path)
    return found


# --- protect / unprotect -------------------------------------------------------------------


@overload
def protect(
    target: BabelEnvelope[Any], cipher: Cipher, schema: SchemaSource | None = None
) -> BabelEnvelope[dict[str, Any]]: ...
@overload
def protect(target: Mapping[str, Any], cipher: Cipher, schema: SchemaSource) -> dict[str, Any]: ...
def protect(
    target: BabelEnvelope[Any] | Mapping[str, Any],
    cipher: Cipher,
    schema: SchemaSource | None = None,
) -> BabelEnvelope[dict[str, Any]] | dict[str, Any]:
    """Encrypt the marked leaves of ``data``: each becomes the cipher's string for its JSON.

    Args:
        target: an envelope (validated, so its ``data`` is cleartext that passed its model) or a
            ``data`` mapping; neither is changed.
        cipher: the caller's :class:`Cipher`.
        schema: the URN's JSON Schema or ``data`` model; for a ``BabelEnvelope[Model]``, the
            model's :func:`payload_schema` when not given.

    Returns:
        A new ``BabelEnvelope[dict]`` (ciphertext no longer fits the model) or a new ``data``
        dict. Everything but the marked leaves is kept as it was; a marked path the message does
        not carry is skipped.

    Raises:
        TypeError: when no schema is given and none can be taken from ``data``'s model, or the
            cipher's ``encrypt`` returns something other than a string.
    """
    return _apply(target, cipher, schema, _encrypt)


@overload
def unprotect(
    target: BabelEnvelope[Any], cipher: Cipher, schema: SchemaSource | None = None
) -> BabelEnvelope[dict[str, Any]]: ...
@overload
def unprotect(
    target: BabelEnvelope[Any],
    cipher: Cipher,
    schema: SchemaSource | None = None,
    *,
    model: type[M],
) -> BabelEnvelope[M]: ...
@overload
def unprotect(
    target: Mapping[str, Any], cipher: Cipher, schema: SchemaSource
) -> dict[str, Any]: ...
def unprotect(
    target: BabelEnvelope[Any] | Mapping[str, Any],
    cipher: Cipher,
    schema: SchemaSource | None = None,
    *,
    model: type[BaseModel] | None = None,
) -> BabelEnvelope[Any] | dict[str, Any]:
    """Decrypt the marked leaves of ``data``, then (with ``model``) validate the cleartext.

    A marked leaf that is not a string (never protected, or already decrypted) is left as is.

    Args:
        target: a received envelope or a ``data`` mapping; neither is changed.
        cipher: the caller's :class:`Cipher`.
        schema: the URN's JSON Schema or ``data`` model; ``model``'s when not given.
        model: validate the decrypted ``data`` into this model: the result is
            ``BabelEnvelope[model]``.

    Raises:
        DecryptError: a marked string the cipher cannot open, that is not JSON inside (NaN,
            Infinity and lone surrogates are not), or whose value the message cannot hold
            (``data.decrypt_failed``, with the field's pointer).
        pydantic.ValidationError: the cleartext does not fit ``model``.
    """
    if schema is None:
        schema = model
    try:
        opened = _apply(target, cipher, schema, _decrypt)
    except ValidationError as exc:
        # JSON plaintext the envelope still refuses: nesting, with the field's own depth, past
        # the parser's.
        found = violations(exc, model=BabelEnvelope)[0]
        raise _failed(
            found.pointer, f"its plaintext does not fit the message ({found.message})"
        ) from exc
    if model is None or not isinstance(opened, BabelEnvelope):
        return opened
    return BabelEnvelope[model].model_validate(opened.to_wire())  # type: ignore[valid-type]


_Leaf = Callable[[Any, Cipher, str], tuple[Any, bool]]


def _apply(
    target: BabelEnvelope[Any] | Mapping[str, Any],
    cipher: Cipher,
    schema: SchemaSource | None,
    leaf: _Leaf,
) -> BabelEnvelope[dict[str, Any]] | dict[str, Any]:
    if isinstance(target, BabelEnvelope):
        if schema is None and isinstance(target.data, BaseModel):
            schema = type(target.data)
        if schema is None:
            raise TypeError("protect/unprotect of a dict envelope needs the URN's schema")
        wire = target.to_wire()
        wire["data"] = _walked(wire["data"], _schema_of(schema), cipher, leaf)
        return BabelEnvelope.model_validate(wire)
    if schema is None:
        raise TypeError("protect/unprotect of a data mapping needs the URN's schema")
    return _walked(target, _schema_of(schema), cipher, leaf)


def _walked(
    data: Mapping[str, Any], schema: Mapping[str, Any], cipher: Cipher, leaf: _Leaf
) -> dict[str, Any]:
    out = copy.deepcopy(dict(data))
    # Where a leaf was sealed or opened. A mark below a marked container (`n` and `n[]`) names
    # what went into the container's one ciphertext, never a ciphertext of its own: once the
    # container is opened, its cleartext is not opened again (the official unprotect tries to,
    # and fails on what both SDKs' protect wrote). Paths come sorted, so a container first.
    done: set[tuple[str | int, ...]] = set()
    for marked in sensitive_paths(schema):
        if marked.path:  # a mark on the root names no leaf inside data
            _at(out, _segments(marked.path), cipher, leaf, ("data",), done)
    return out


def _segments(path: str) -> list[tuple[str, bool]]:
    return [
        (part[:-2], True) if len(part) >= 2 and part.endswith("[]") else (part, False)
        for part in path.split(".")
    ]


def _at(
    node: Any,
    segments: list[tuple[str, bool]],
    cipher: Cipher,
    leaf: _Leaf,
    where: tuple[str | int, ...],
    done: set[tuple[str | int, ...]],
) -> None:
    # The official walk: objects by key, every element of an array; what is absent is skipped.
    key, is_array = segments[0]
    if not isinstance(node, MutableMapping) or key not in node:
        return
    child = node[key]
    last = len(segments) == 1
    here = (*where, key)
    if here in done:
        return
    if is_array:
        if not isinstance(child, list):
            return
        for index, element in enumerate(child):
            at = (*here, index)
            if at in done:
                continue
            if last:
                value, changed = leaf(element, cipher, pointer(*at))
                if changed:
                    child[index] = value
                    done.add(at)
            else:
                _at(element, segments[1:], cipher, leaf, at, done)
        return
    if last:
        value, changed = leaf(child, cipher, pointer(*here))
        if changed:
            node[key] = value
            done.add(here)
        return
    _at(child, segments[1:], cipher, leaf, here, done)


def _encrypt(value: Any, cipher: Cipher, at: str) -> tuple[Any, bool]:
    # The official canonical form (sorted keys, compact, ASCII-escaped), so either side opens it.
    plaintext = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    sealed = cipher.encrypt(plaintext.encode("utf-8"))
    if not isinstance(sealed, str):
        # Written in place of the value, it would be lost: nothing decrypts what is not a string.
        raise TypeError(f"the cipher's encrypt returned {type(sealed).__name__}, not a str")
    return sealed, True


def _decrypt(value: Any, cipher: Cipher, at: str) -> tuple[Any, bool]:
    if not isinstance(value, str):
        return None, False
    try:
        plaintext = cipher.decrypt(value)
    except Exception as exc:  # any cipher failure is a decrypt failure for the caller
        raise _failed(at, f"the cipher cannot open it ({type(exc).__name__}: {exc})") from exc
    try:
        # Read as the message itself is read (pydantic-core's parser): `json.loads` also takes
        # NaN, Infinity and lone surrogate escapes, which no envelope holds, and raises a
        # RecursionError for deep nesting. Valid JSON reads the same either way.
        return refuse_non_finite(from_json(plaintext, allow_inf_nan=False)), True
    except (ValueError, TypeError) as exc:
        raise _failed(at, f"its plaintext is not JSON ({exc})") from exc


def _failed(at: str, why: str) -> DecryptError:
    return DecryptError(violation(rules.DATA_DECRYPT_FAILED, at, f"A protected field: {why}."))
