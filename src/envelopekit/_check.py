"""``check``: a verdict with rule ids for any bytes, never an exception on bad input."""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from pydantic_core import from_json

from . import rules
from ._json import (
    OUT_OF_RANGE_STAND_IN,
    duplicate_keys,
    exceeds_depth,
    without_long_integers,
)
from ._settings import Settings, get_settings
from ._violations import Verdict, Violation, cap, violation

if TYPE_CHECKING:
    from .babelqueue import BabelEnvelope
    from .matrix import MxErrorPayload, MxRequest, MxResponse
    from .som import SomEnvelope

__all__ = ["SPECS", "Raw", "Spec", "SpecName", "check", "detect", "spec_named"]

Raw = bytes | bytearray | memoryview | str
SpecName = Literal["babelqueue", "som", "matrix"]
SPECS: tuple[SpecName, ...] = ("babelqueue", "som", "matrix")


class Spec(abc.ABC):
    """What ``check`` needs from one spec; each spec package defines one in ``_spec.py``."""

    name: ClassVar[SpecName]
    max_bytes: ClassVar[int | None] = None
    """The spec's own size limit, applied on top of ``Settings.max_message_bytes``."""

    @abc.abstractmethod
    def validate(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        """Validate one message already within the size and depth limits."""

    @abc.abstractmethod
    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """Whether a parsed JSON object has this spec's shape (for ``spec="auto"``)."""

    def signature(self, document: Mapping[str, Any]) -> bool:
        """Whether the object carries this spec's unmistakable signature.

        Checked before any :meth:`looks_like`: an open spec tolerates unknown keys, so its
        messages may carry a key that another spec's shape test keys on.
        """
        return False


_LOADED: dict[str, Spec] = {}
_MODULES: dict[str, str] = {
    "babelqueue": "envelopekit.babelqueue._spec",
    "som": "envelopekit.som._spec",
    "matrix": "envelopekit.matrix._spec",
}


def spec_named(name: str) -> Spec:
    """The spec called ``name`` (imported on first use, so ``import envelopekit`` stays light).

    Raises:
        ValueError: for a name that is not one of :data:`SPECS`.
    """
    found = _LOADED.get(name)
    if found is None:
        module = _MODULES.get(name)
        if module is None:
            raise ValueError(f"unknown spec {name!r}; expected one of {', '.join(SPECS)} or 'auto'")
        found = _LOADED[name] = importlib.import_module(module).SPEC
    return found


def detect(document: Any) -> SpecName | None:
    """The spec whose shape a parsed JSON document has, or ``None``."""
    if not isinstance(document, dict):
        return None
    # BabelQueue's signature first: a BabelQueue message may carry any extra, even `op`.
    for name in ("babelqueue", "matrix", "som"):
        if spec_named(name).signature(document):
            return name
    names: tuple[SpecName, ...] = ("som", "matrix", "babelqueue")
    for name in names:
        if spec_named(name).looks_like(document):
            return name
    return None


def _as_bytes(raw: Raw) -> bytes | str:
    if type(raw) is bytes or isinstance(raw, (bytes, str)):
        return raw
    if isinstance(raw, (bytearray, memoryview)):
        return bytes(raw)
    raise TypeError(f"check() takes bytes or str, not {type(raw).__name__}")


@overload
def check(
    raw: Raw, spec: Literal["babelqueue"], *, settings: Settings | None = None
) -> Verdict[BabelEnvelope]: ...
@overload
def check(
    raw: Raw, spec: Literal["som"], *, settings: Settings | None = None
) -> Verdict[SomEnvelope]: ...
@overload
def check(
    raw: Raw, spec: Literal["matrix"], *, settings: Settings | None = None
) -> Verdict[MxRequest | MxResponse | MxErrorPayload]: ...
@overload
def check(raw: Raw, spec: str = "auto", *, settings: Settings | None = None) -> Verdict[Any]: ...
def check(raw: Raw, spec: str = "auto", *, settings: Settings | None = None) -> Verdict[Any]:
    """Validate one message and return a verdict; bad input never raises.

    Args:
        raw: the message as received: JSON bytes (UTF-8) or text.
        spec: ``"babelqueue"``, ``"som"``, ``"matrix"``, or ``"auto"`` to recognise the spec from
            the message's shape.
        settings: limits and modes; the environment's (:func:`get_settings`) when not given.

    Returns:
        A :class:`Verdict`: ``ok``, the parsed ``envelope``, ``violations`` and ``warnings``.

    Raises:
        ValueError: for an unknown ``spec`` name (a programming error, not bad input).
        TypeError: when ``raw`` is neither bytes nor str.
    """
    target = None if spec == "auto" else _LOADED.get(spec) or spec_named(spec)
    if settings is None:
        settings = get_settings()
    if type(raw) is bytes:
        encoded = raw
    else:
        text = _as_bytes(raw)
        # Validate the UTF-8 bytes: a str holding a lone surrogate becomes bytes that are not
        # UTF-8, which the parser refuses as json.invalid like any other undecodable input.
        encoded = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    size = len(encoded)
    name = spec
    limit = settings.max_message_bytes
    if target is not None and target.max_bytes is not None and target.max_bytes < limit:
        limit = target.max_bytes
    if size > limit:
        return _refused(name, rules.MESSAGE_TOO_LARGE, f"{size} bytes exceeds {limit}.")
    depth = settings.max_depth
    # The bracket count bounds the depth: only a text with more brackets is scanned.
    if encoded.count(b"{") + encoded.count(b"[") > depth and exceeds_depth(encoded, depth):
        return _refused(
            name, rules.MESSAGE_TOO_DEEP, f"The JSON nests deeper than {settings.max_depth}."
        )
    stand_in = None
    if target is None:
        try:
            # pydantic's own parser, so auto-detection reads exactly what validation will.
            document = from_json(encoded, allow_inf_nan=True)
        except ValueError as exc:
            stand_in = _long_integers_replaced(encoded, str(exc))
            if stand_in is not None:
                invalid = _refused(name, rules.JSON_INVALID, f"Invalid JSON: {exc}.")
                return _long_integers_named(check(stand_in, spec, settings=settings), invalid)
            if "recursion limit" in str(exc):
                return _refused(name, rules.MESSAGE_TOO_DEEP, f"The JSON nests too deeply: {exc}.")
            return _refused(name, rules.JSON_INVALID, f"Invalid JSON: {exc}.")
        found = detect(document)
        if found is None:
            return _refused(
                name,
                rules.SPEC_UNRECOGNISED,
                "Not a BabelQueue, SOM or Matrix message: no shape of the three matched.",
            )
        target = spec_named(found)
        if target.max_bytes is not None and size > target.max_bytes:
            return _refused(
                found, rules.MESSAGE_TOO_LARGE, f"{size} bytes exceeds {target.max_bytes}."
            )
    verdict = target.validate(encoded, settings)
    if verdict.violations and verdict.violations[0].rule == rules.JSON_INVALID:
        stand_in = _long_integers_replaced(encoded, verdict.violations[0].message)
        if stand_in is not None:
            verdict = _long_integers_named(target.validate(stand_in, settings), verdict)
    if settings.duplicate_keys != "allow":
        repeated = duplicate_keys(encoded)
        if repeated and settings.duplicate_keys == "refuse":
            verdict.violations[:0] = repeated
            verdict.envelope = None
        elif repeated:
            verdict.warnings[:0] = repeated
    if verdict.violations or verdict.warnings:
        limit = settings.max_violations
        if len(verdict.violations) > limit:
            verdict.violations = cap(verdict.violations, limit)
        if len(verdict.warnings) > limit:
            verdict.warnings = cap(verdict.warnings, limit)
    return verdict


def _long_integers_replaced(raw: bytes, error: str) -> bytes | None:
    # pydantic's parser refuses an integer past Python's 4,300 digits for the whole document.
    if "number out of range" not in error:
        return None
    return without_long_integers(raw)


def _long_integers_named(stand_in: Verdict[Any], verdict: Verdict[Any]) -> Verdict[Any]:
    """The verdict on the stand-in copy, its findings naming the integers as they were.

    A stand-in that a spec reads with a warning (a wide integer in BabelQueue ``data``) is
    still refused: the original is too long to be read or written back. When the copy shows
    no trace of a stand-in, ``verdict`` (``json.invalid``) stands.
    """
    said = OUT_OF_RANGE_STAND_IN.decode()
    too_long = "an integer of more than 4300 digits"
    found = [
        replace(v, message=v.message.replace(said, too_long)) if said in v.message else v
        for v in stand_in.violations
    ]
    warnings = []
    for warning in stand_in.warnings:
        if warning.rule == rules.NUMBER_BEYOND_INT64 and said in warning.message:
            found.append(
                violation(
                    rules.NUMBER_OUT_OF_RANGE,
                    warning.pointer,
                    f"{too_long[0].upper()}{too_long[1:]}: too long to read or write back.",
                )
            )
        else:
            warnings.append(warning)
    if not found:
        return verdict
    return Verdict(stand_in.spec, None, found, warnings)


def _refused(name: str, rule: str, message: str) -> Verdict[Any]:
    found: list[Violation] = [violation(rule, "", message)]
    return Verdict(name, None, found)
