"""The forbidden, non-canonical keys of early drafts (envelope page, "Forbidden fields").

Policy K-15: a consumer drops them with a warning naming the key, never refuses the message,
and never re-emits them, whatever a user's subclass says of unknown keys
(:func:`forbidden_keys_read`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from functools import partial
from typing import Any, Final, cast

from pydantic import (
    BaseModel,
    GetJsonSchemaHandler,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticKnownError, core_schema

from .._text import probed, run_time_extra

__all__ = [
    "FORBIDDEN_META_KEYS",
    "FORBIDDEN_TOP_LEVEL_KEYS",
    "forbidden_keys_read",
    "opened_by_the_call",
]

FORBIDDEN_TOP_LEVEL_KEYS: Final[dict[str, str]] = {"timestamp": "meta.created_at (Unix ms)"}
"""Forbidden top-level key -> what to use instead."""

FORBIDDEN_META_KEYS: Final[dict[str, str]] = {
    "max_retries": "consumer-side config or a per-URN policy",
    "attempts": "the top-level attempts",
    "source": "meta.lang",
    "ts": "meta.created_at",
}
"""Forbidden ``meta`` key -> what to use instead."""


_OPENED: ContextVar[bool] = ContextVar("envelopekit_babelqueue_opened", default=False)
"""Whether a closed model is being read under a run-time ``extra="allow"``."""


def _forbidden_key(keys: Mapping[str, object], key: str) -> str:
    """An unknown key of a closed model: a forbidden one (of ``keys``) read, any other refused.

    The forbidden one is read for ``_consume`` to drop with its warning, as the envelope does;
    any other is refused as the closed model refuses it (``extra_forbidden``), unless the call
    opened the model (a run-time ``extra="allow"``, over the model's own as pydantic reads it).
    """
    if key in keys or _OPENED.get():
        return key
    raise PydanticKnownError("extra_forbidden")


class _Opened:
    """The input of a closed model, read under a run-time ``extra="allow"``."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


def _opened(value: object, handler: ValidatorFunctionWrapHandler, _: ValidationInfo) -> object:
    """``value``, marked where the call gives ``extra="allow"`` (``handler`` reads the probe)."""
    return _Opened(value) if run_time_extra(handler) == "allow" else value


def _read_opened(
    ignored: Mapping[str, object] | None, value: object, handler: ValidatorFunctionWrapHandler
) -> object:
    """``value`` read by a closed model, open where :func:`_opened` marked it.

    ``ignored``: the forbidden keys of a model whose own ``extra="ignore"`` drops every other
    unknown key unsaid, here (``meta``, read before the envelope's rules), unless opened.
    """
    if type(value) is _Opened:
        token = _OPENED.set(True)
        try:
            return handler(value.value)
        finally:
            _OPENED.reset(token)
    read = handler(value)
    if ignored is not None and read.__pydantic_extra__:
        extra = read.__pydantic_extra__
        for key in [key for key in extra if key not in ignored]:
            del extra[key]
    return read


_AROUND_MODEL: Final = frozenset({"function-after", "function-before", "function-wrap"})
"""The validators pydantic puts around a model schema (its model validators)."""


def _model_under(node: dict[str, Any]) -> object:
    """The class of the model schema ``node`` is, or holds under its model validators."""
    while node.get("type") in _AROUND_MODEL:
        node = node["schema"]
    return node.get("cls") if node.get("type") == "model" else None


def forbidden_keys_read(
    schema: CoreSchema, cls: type[BaseModel], keys: Mapping[str, object], *, dropped: bool
) -> CoreSchema:
    """``schema`` with ``cls``'s model reading the spec's forbidden ``keys`` whatever its ``extra``.

    Policy K-15 (babelqueue.md §1.2): a consumer drops them with a warning, never refuses the
    message. A user's subclass (of the envelope, of ``BabelMeta``) with its own
    ``extra="forbid"`` refused it, ``"ignore"`` dropped them unsaid: its model reads unknown
    keys, a closed one only the forbidden ones (every other is refused with the closed model's
    error), and ``_consume`` drops them with the warning; an ignoring one's others are dropped
    unsaid, by ``_consume`` (``dropped``) or here. Its JSON Schema is its own
    ``model_config``'s still. A run-time ``extra`` is pydantic's over the model's own:
    ``"allow"`` opens it (the probe tells, :func:`_opened`), ``"ignore"`` and ``"forbid"``
    pydantic-core applies itself.
    """
    closed = cls.model_config.get("extra") == "forbid"
    ignored = None if closed or dropped else keys
    only = core_schema.no_info_plain_validator_function(partial(_forbidden_key, keys))

    def opened(node: dict[str, Any]) -> dict[str, Any]:
        # Around the model's own validators too: `_consume` reads whether the call opened it.
        ref = node.get("ref")
        inner = cast("CoreSchema", {key: item for key, item in node.items() if key != "ref"})
        read: dict[str, Any] = dict(
            core_schema.chain_schema(
                [
                    probed(_opened),
                    core_schema.no_info_wrap_validator_function(
                        partial(_read_opened, ignored), reading(inner, within=True)
                    ),
                ],
                metadata={"pydantic_js_functions": [_model_json_schema]},
            )
        )
        return read if ref is None else {**read, "ref": ref}

    def reading(node: Any, *, within: bool = False) -> Any:
        if isinstance(node, list):
            items: list[Any] = node
            return [reading(item) for item in items]
        if not isinstance(node, dict):
            return node
        found = cast("dict[str, Any]", node)
        kind = found.get("type")
        if kind == "chain" and found["steps"][0].get("function", {}).get("function") is _opened:
            return found  # read so already (a finished class's schema, used again)
        if not within and (kind == "model" or kind in _AROUND_MODEL) and _model_under(found) is cls:
            return opened(found)
        if kind == "model":
            if found["cls"] is not cls:
                return found
            fields = found["schema"]
            if closed:
                fields = {**fields, "extras_keys_schema": only}
            config = {**found.get("config", {}), "extra_fields_behavior": "allow"}
            return {**found, "config": config, "schema": fields}
        return {
            key: item if key == "metadata" else reading(item, within=within)
            for key, item in found.items()
        }

    return cast("CoreSchema", reading(schema))


def _model_json_schema(schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
    """The JSON Schema of the model :func:`forbidden_keys_read` reads, not of its probe."""
    steps: Any = schema
    return handler(steps["steps"][-1])


def opened_by_the_call() -> bool:
    """Whether a closed model is being read under a run-time ``extra="allow"`` (its validators)."""
    return _OPENED.get()
