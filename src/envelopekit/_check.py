"""``check``: a verdict with rule ids for any bytes, never an exception on bad input."""

from __future__ import annotations

import abc
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache, partial
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeAlias

from pydantic import ValidationError
from pydantic_core import SchemaValidator, core_schema, from_json
from typing_extensions import TypeIs, overload

from . import rules
from ._bounds import SOM_MAX_BYTES
from ._collector import CollectorPaused
from ._duplicates import duplicate_keys, may_repeat
from ._failfast import FULL_REPORT_BYTES
from ._json import (
    COUNTED_BYTES,
    exceeds_depth,
    long_integer_digits,
    one_reading,
    plain_numbers,
    release_reading,
    stand_in_for,
    without_long_integers,
    without_refused_integers,
)
from ._settings import Settings, get_settings, given_settings
from ._violations import Verdict, Violation, cap, violation, violations

if TYPE_CHECKING:
    from .babelqueue import BabelEnvelope
    from .matrix import MxErrorPayload, MxRequest, MxResponse
    from .som import SomEnvelope

__all__ = [
    "REGISTRY",
    "SPECS",
    "Raw",
    "Spec",
    "SpecEntry",
    "SpecName",
    "check",
    "check_as",
    "clean_reader",
    "detect",
    "is_spec_name",
    "spec_named",
]

Raw = bytes | bytearray | memoryview | str
SpecName = Literal["babelqueue", "som", "matrix"]
"""The specs :func:`check` knows: the keys of :data:`REGISTRY` (a test holds the two equal)."""


@dataclass(frozen=True)
class SpecEntry:
    """One spec, described once; everything else about the set of specs is derived from these.

    A spec is a package (``envelopekit.<name>``) whose ``_spec`` module defines ``SPEC``, the
    :class:`Spec` that reads its messages, and one entry here, which ``import envelopekit``
    can read without importing the package.

    Attributes:
        package: the spec's package; ``<package>._spec.SPEC`` is imported on first use.
        schemas: each generated JSON Schema's name (``json_schema(spec, name)``, the file
            ``schemas/<spec>/<name>.schema.json``) -> the model's name in ``package``; the
            first is the envelope's.
        rule_schemas: the ``<schema>`` part of the spec's structural rule ids (its own schema
            files' names, from :mod:`envelopekit.rules`).
        shape_rank: the order in which ``spec="auto"`` tries each spec's shape test, the most
            particular shape first.
        signature_rank: the order in which the unmistakable signatures are tried, before any
            shape; ``None`` for a spec with no signature.
        context: the :class:`Settings` fields handed to the spec's validators as the
            validation context (``info.context[field]``).
        max_bytes: the spec's own size limit, on top of ``Settings.max_message_bytes``.
    """

    package: str
    schemas: Mapping[str, str]
    rule_schemas: tuple[str, ...]
    shape_rank: int
    signature_rank: int | None = None
    context: tuple[str, ...] = ()
    max_bytes: int | None = None


REGISTRY: Final[Mapping[SpecName, SpecEntry]] = {
    "babelqueue": SpecEntry(
        package="envelopekit.babelqueue",
        schemas={"envelope": "BabelEnvelope", "dead-letter": "DeadLetter"},
        rule_schemas=rules.BABELQUEUE_SCHEMAS,
        # Its signature first: a BabelQueue message may carry any extra key, even `op`; its
        # shape last: `job`, `urn` or `meta` with `data` is the loosest of the three.
        signature_rank=0,
        shape_rank=2,
        # The warning cap of the number scan: the check's own, not the environment's.
        context=("max_violations",),
    ),
    "som": SpecEntry(
        package="envelopekit.som",
        schemas={
            "envelope": "SomEnvelope",
            "story-context": "StoryContext",
            "telling-event": "TellingEvent",
            "link-event": "LinkEvent",
            "delivery-media-available": "DeliveryMediaAvailable",
            "system-audit": "SystemAudit",
            "skill-warning": "SkillWarning",
        },
        rule_schemas=rules.SOM_SCHEMAS,
        shape_rank=0,
        context=("som_version_mode",),
        max_bytes=SOM_MAX_BYTES,
    ),
    "matrix": SpecEntry(
        package="envelopekit.matrix",
        schemas={
            "request": "MxRequest",
            "response": "MxResponse",
            "error-payload": "MxErrorPayload",
        },
        rule_schemas=rules.MATRIX_SCHEMAS,
        # A reply or a bare error payload is an open object that may carry SOM's keys.
        signature_rank=1,
        shape_rank=1,
        # The cap of the number warnings envelope_warnings() builds: the check's own.
        context=("max_violations",),
    ),
}
"""Every spec, by name (:class:`SpecEntry`)."""

SPECS: Final[tuple[SpecName, ...]] = tuple(REGISTRY)


def is_spec_name(name: str) -> TypeIs[SpecName]:
    """Whether ``name`` is one of :data:`SPECS` (a key of :data:`REGISTRY`)."""
    return name in REGISTRY


def _ranked(rank: Callable[[SpecEntry], int | None]) -> tuple[SpecName, ...]:
    ranked: list[tuple[int, SpecName]] = [
        (r, name) for name, entry in REGISTRY.items() if (r := rank(entry)) is not None
    ]
    return tuple(name for _, name in sorted(ranked))


_SIGNATURES: Final = _ranked(lambda entry: entry.signature_rank)
_SHAPES: Final = _ranked(lambda entry: entry.shape_rank)


def _declined(raw: bytes) -> None:
    """The reader of a plan that allows none: never called, its bound being -1."""
    return None


_new_verdict: Final = object.__new__

QuickPlan: TypeAlias = "tuple[Settings | None, Callable[[bytes], Any], int, bool]"
""":meth:`Spec.planned`: the settings, the quick reader, the most bytes it may read (-1 for
none), and whether its verdict is final (no duplicate-key scan after it)."""


class Spec(abc.ABC):
    """How ``check`` reads one spec's messages; each spec package defines one in ``_spec.py``.

    A subclass names its spec, its ``model`` and its two readers; :meth:`validate`, the same
    for every spec, turns what they raise into violations and what they return into a verdict.
    """

    name: ClassVar[SpecName]
    model: Any
    """What the violation mapper resolves errors against (a model class or a union of them)."""
    read: Callable[..., Any]
    """``read(raw)``, or ``read(raw, context)`` when the spec's entry names a context: the
    envelope of a valid message; raises ``pydantic.ValidationError`` for an invalid one. A
    static callable, not a method: a spec's own validator, bound, costs no Python frame."""
    read_large: Callable[..., Any]
    """:attr:`read` for a message over ``FULL_REPORT_BYTES``: one error per array at most."""
    validate_large: Callable[[bytes | str, Settings], Verdict[Any]] | None = None
    """A spec's own :meth:`validate` for a message over ``FULL_REPORT_BYTES``, if it has one
    (Matrix's, which never has pydantic build an error per unknown key)."""
    quick: Callable[[bytes], Any] | None = None
    """A spec's quick reader, if it has one: ``quick(raw)`` is the envelope of a valid message
    with nothing to note, nesting at most :attr:`quick_depth` deep, else ``None`` (it raises
    ``pydantic.ValidationError`` for bytes that are not JSON). What it accepts, the spec's
    verdict is known to be that envelope, ``ok`` with no warning, before any scan: ``check``
    tries it first, in place of the depth scan and :meth:`validate`, where the settings allow
    no other finding on such a message (a depth limit of at least :attr:`quick_depth`), then
    adds what it adds to every verdict (duplicate keys). A spec with a quick reader need not
    try the same fast path again in :attr:`read`: a message :attr:`quick` declines under
    these settings, it would decline too."""
    quick_depth: int = 0
    """How deep a message :attr:`quick` takes nests, at most (the top-level value is 1)."""
    proves_numbers: bool = False
    """Whether :attr:`read_large` proves the text's numbers (``_json.proven_context``) before
    building the envelope: ``check``'s reading of a large text (``_json.one_reading``) then
    shares its strings cut out with that proof, which lets them go before the tree is built."""
    quick_plan: QuickPlan = (None, _declined, -1, False)
    """:meth:`planned` for the settings last seen, as one tuple so that a thread never mixes
    two plans."""
    validate_small: Callable[[bytes | str, Settings], Verdict[Any] | None] | None = None
    """A spec's own reading of a message within ``FULL_REPORT_BYTES``, if it has one (Matrix's,
    which picks its model from the bytes); ``None`` from it leaves the message to :attr:`read`."""

    def __init__(self) -> None:
        entry = REGISTRY[self.name]
        self.max_bytes = entry.max_bytes
        self._fields = entry.context
        # The context of the settings last seen (Settings is frozen), as one pair so that a
        # thread never reads one settings' context beside another's.
        self._context: tuple[Settings | None, dict[str, Any] | None] = (None, None)

    def planned(self, settings: Settings) -> QuickPlan:
        """:attr:`quick_plan` for ``settings``.

        The plan holds the settings, the reader, its size bound, and whether its verdict is
        final.
        :attr:`quick` is allowed where no check it stands in for could find anything on a
        message it accepts: a depth limit of at least :attr:`quick_depth`, and a message
        within the size limits (the spec's and the settings') and small enough for
        :meth:`validate` to report in full. Where it is not, the plan's bound is -1, so that
        no message reaches its reader. Its verdict is final unless duplicate keys are looked
        for after the read.
        """
        final = settings.duplicate_keys == "allow"
        if self.quick is None or settings.max_depth < self.quick_depth:
            return (settings, _declined, -1, final)
        most = min(settings.max_message_bytes, FULL_REPORT_BYTES)
        if self.max_bytes is not None:
            most = min(most, self.max_bytes)
        return (settings, self.quick, most, final)

    def context_of(self, settings: Settings) -> dict[str, Any]:
        """The validation context the registry entry names, from ``settings``."""
        seen, context = self._context
        if seen is not settings or context is None:
            context = {field: getattr(settings, field) for field in self._fields}
            self._context = (settings, context)
        return context

    def validate(self, raw: bytes | str, settings: Settings) -> Verdict[Any]:
        """Validate one message already within the size and depth limits."""
        large = len(raw) > FULL_REPORT_BYTES
        if large and self.validate_large is not None:
            return self.validate_large(raw, settings)
        if not large and self.validate_small is not None:
            own = self.validate_small(raw, settings)
            if own is not None:
                return own
        read = self.read_large if large else self.read
        try:
            envelope = read(raw, self.context_of(settings)) if self._fields else read(raw)
        except ValidationError as exc:
            found = violations(exc, model=self.model, limit=settings.max_violations, partial=large)
            return Verdict(self.name, None, found)
        # envelope_warnings() is how every model makes its warnings; a model with nothing noted
        # while reading and no notes of its own (`__notes__`) is not asked: [] costs no call.
        if envelope.__pydantic_private__ or envelope.__notes__:
            return Verdict(self.name, envelope, [], envelope.envelope_warnings())
        return Verdict(self.name, envelope, [])

    @abc.abstractmethod
    def looks_like(self, document: Mapping[str, Any]) -> bool:
        """Whether a parsed JSON object has this spec's shape (for ``spec="auto"``)."""

    def signature(self, document: Mapping[str, Any]) -> bool:
        """Whether the object carries this spec's unmistakable signature.

        Checked before any :meth:`looks_like` (in :attr:`SpecEntry.signature_rank` order): an
        open spec tolerates unknown keys, so its messages may carry a key that another spec's
        shape test keys on.
        """
        return False


_LOADED: dict[str, Spec] = {}


def clean_reader(
    spec: str, settings: Settings
) -> tuple[Callable[[bytes], Any], int, SpecName] | None:
    """A quick reader that decides clean verdicts, the most bytes it may read, and their spec.

    Where ``check`` would return the reader's envelope as an ``ok`` verdict of that spec with
    nothing noted; ``None`` where it would not (a depth limit below the reader's). For a caller
    that only needs to know a message is clean (the command line's judge): a message of at most
    that many bytes that the reader takes (not ``None``, no ``ValidationError``) has exactly that
    verdict, with no ``Verdict`` built. For ``spec="auto"`` it is BabelQueue's reader, on a text
    holding ``"job"``, as ``check`` tries it (:func:`_clean_babelqueue`). Where duplicate keys
    are looked for, the reader also declines a message that may repeat a member name
    (:func:`may_repeat`, which ``check`` asks first too at that size).
    """
    found = spec_named("babelqueue" if spec == "auto" else spec)
    _, quick, most, _ = found.planned(settings)
    if most < 0:
        return None
    if settings.duplicate_keys != "allow":
        quick = partial(_without_repeats, quick)
    if spec == "auto":
        quick = partial(_with_job, quick)
    return quick, most, found.name


def _detected_shallowly(encoded: bytes) -> SpecName | None:
    """The spec detection names for ``encoded``, read without building its values, or ``None``.

    ``None`` when this reading cannot tell: detection then parses the text, as before. The
    members detection's tests read (:data:`_DETECTION_KEYS`) are read by a validator that
    ignores every other member, building nothing of it (pydantic-core's parser, as detection's:
    duplicates and escaped names read alike). About 55% of detection's parse on 1 MiB of
    integers, which builds every value. The specs' own tests then run on what was read
    (:class:`_ReadMembers`); one that asks of a member not read (``data``, ``payload``)
    cannot be answered, and the text is detected as before, at that 55% more. For texts over
    16 KiB only: on a 1 KB Matrix request the reading's calls cost 2 µs more than the parse.
    A ``ValidationError`` is raised as the reader raised it: the text is not JSON, or its
    top-level value is no object, or its ``meta`` no object either.
    """
    members = _ReadMembers(_detection_reader().validate_json(encoded))
    try:
        return detect(members)
    except _NotRead:
        return None


_DETECTION_KEYS: Final = ("job", "urn", "meta", "op", "ok", "error", "som_version", "message_type")
"""The members the specs' detection tests read besides ``data`` and ``payload`` (each spec's
``signature`` and ``looks_like``): small values in every message of the three."""


class _NotRead(Exception):
    """A detection test asked of a member :func:`_detected_shallowly` did not read."""


class _ReadMembers(dict[str, Any]):
    """The members read for detection: a key outside :data:`_DETECTION_KEYS` cannot be told."""

    def __contains__(self, key: object) -> bool:
        if key not in _DETECTION_KEYS:
            raise _NotRead
        return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in _DETECTION_KEYS:
            raise _NotRead
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        if key not in _DETECTION_KEYS:
            raise _NotRead
        return super().__getitem__(key)


@cache
def _detection_reader() -> SchemaValidator:
    """``{job?, urn?, meta?: {schema_version?}, op?, ok?, ...}``, every other member ignored."""
    meta = core_schema.typed_dict_schema(
        {"schema_version": core_schema.typed_dict_field(core_schema.any_schema(), required=False)},
        extra_behavior="ignore",
    )
    fields = {
        key: core_schema.typed_dict_field(
            meta if key == "meta" else core_schema.any_schema(), required=False
        )
        for key in _DETECTION_KEYS
    }
    return SchemaValidator(core_schema.typed_dict_schema(fields, extra_behavior="ignore"))


def _clean_babelqueue(encoded: bytes, settings: Settings) -> Verdict[Any] | None:
    """``check(encoded, "auto")`` where BabelQueue's quick reader takes the text, else ``None``.

    A message that reader takes has ``job``, and a ``meta`` object with ``schema_version``:
    the BabelQueue signature, which detection tries before any other test. So detection would
    name BabelQueue, whose validation would return this same clean verdict: the text need not
    be parsed for detection first.
    """
    target = _LOADED.get("babelqueue") or spec_named("babelqueue")
    seen, quick, most, final = target.quick_plan
    if seen is not settings:
        seen, quick, most, final = target.quick_plan = target.planned(settings)
    if len(encoded) > most:
        return None
    try:
        envelope = quick(encoded)
    except ValidationError:  # not JSON: detection reports it
        return None
    if envelope is None:
        return None
    verdict: Verdict[Any] = Verdict(target.name, envelope, [], [])
    return verdict if final else _completed(verdict, encoded, settings)


def _with_job(quick: Callable[[bytes], Any], raw: bytes) -> Any:
    """``quick(raw)``, or ``None`` for a text that does not hold ``"job"`` (``spec="auto"``)."""
    return quick(raw) if raw.find(b'"job"') != -1 else None


def _without_repeats(quick: Callable[[bytes], Any], raw: bytes) -> Any:
    """``quick(raw)``, or ``None`` for a message that may repeat a member name."""
    envelope = quick(raw)
    if envelope is None or may_repeat(raw):
        return None
    return envelope


def spec_named(name: str) -> Spec:
    """The spec called ``name`` (imported on first use, so ``import envelopekit`` stays light).

    Raises:
        ValueError: for a name that is not one of :data:`SPECS`.
    """
    found = _LOADED.get(name)
    if found is None:
        if not is_spec_name(name):
            raise ValueError(f"unknown spec {name!r}; expected one of {', '.join(SPECS)} or 'auto'")
        package = REGISTRY[name].package
        found = _LOADED[name] = importlib.import_module(f"{package}._spec").SPEC
    return found


def detect(document: Any) -> SpecName | None:
    """The spec whose shape a parsed JSON document has, or ``None``."""
    if not isinstance(document, dict):
        return None
    for name in _SIGNATURES:
        if spec_named(name).signature(document):
            return name
    for name in _SHAPES:
        if spec_named(name).looks_like(document):
            return name
    return None


def _encoded(raw: Raw) -> bytes:
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, str):
        # Validate the UTF-8 bytes: a str holding a lone surrogate becomes bytes that are not
        # UTF-8, which the parser refuses as json.invalid like any other undecodable input.
        return raw.encode("utf-8", "surrogatepass")
    if isinstance(raw, (bytearray, memoryview)):
        return bytes(raw)
    raise TypeError(
        f"check() takes bytes (or a bytearray or memoryview) or str, not {type(raw).__name__}"
    )


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
        raw: the message as received: JSON bytes (UTF-8; a ``bytearray`` or ``memoryview``
            of them too) or text.
        spec: ``"babelqueue"``, ``"som"``, ``"matrix"``, or ``"auto"`` to recognise the spec from
            the message's shape.
        settings: limits and modes; the environment's (:func:`get_settings`) when not given.

    Returns:
        A :class:`Verdict`: ``ok``, the parsed ``envelope``, ``violations`` and ``warnings``.

    Raises:
        ValueError: for an unknown ``spec`` name (a programming error, not bad input).
        TypeError: when ``raw`` is none of these, or ``settings`` are no :class:`Settings`.
    """
    # The order is the clean path's: most messages are valid bytes for a named spec, and what
    # runs before their verdict is a few percent of it (bench/run.py, ek.check).
    target = _LOADED.get(spec)  # "auto" is never a key
    if target is None and spec != "auto":
        target = spec_named(spec)
    if settings is None:
        settings = get_settings()
    elif settings.__class__ is not Settings:  # (one comparison where they are Settings)
        settings = given_settings(settings)
    encoded = raw if type(raw) is bytes else _encoded(raw)
    not_json = None
    if target is not None:
        # The spec's quick reader first, where these settings allow it (Spec.quick).
        seen, quick, most, final = target.quick_plan
        if seen is not settings:
            seen, quick, most, final = target.quick_plan = target.planned(settings)
        if len(encoded) <= most:
            try:
                envelope = quick(encoded)
            except ValidationError as exc:  # not JSON: the spec's validator reports it below
                envelope = None
                not_json = exc
            if envelope is not None:
                # Verdict(target.name, envelope, [], []) without the call into its __init__,
                # which CPython 3.11 does not inline: 2% of this path's instructions.
                verdict = _new_verdict(Verdict)
                verdict.spec = target.name
                verdict.envelope = envelope
                verdict.violations = []
                verdict.warnings = []
                return verdict if final else _completed(verdict, encoded, settings)
    elif len(encoded) <= FULL_REPORT_BYTES and encoded.find(b'"job"') != -1:
        # spec "auto", a text that may be BabelQueue's: what its quick reader takes needs no
        # detection first (_clean_babelqueue). Past the bound the reader takes nothing.
        clean = _clean_babelqueue(encoded, settings)
        if clean is not None:
            return clean
    return _judged(encoded, spec, target, settings, not_json)


def _judged(
    encoded: bytes,
    name: str,
    target: Spec | None,
    settings: Settings,
    not_json: ValidationError | None,
) -> Verdict[Any]:
    """``check``'s verdict on a message its quick reader did not take: the size limit first."""
    size = len(encoded)
    limit = settings.max_message_bytes
    if target is not None and target.max_bytes is not None and target.max_bytes < limit:
        limit = target.max_bytes
    if size > limit:
        return _refused(name, rules.MESSAGE_TOO_LARGE, f"{size} bytes exceeds {limit}.")
    if size > FULL_REPORT_BYTES:
        # Its depth scan, number proof and duplicate scan each read it outside its strings: its
        # escape pairs are neutralised, and its strings cut out, once for all of them.
        # Its trees (the parse, the model, the duplicate scan's) are built with the cyclic
        # collector paused: a JSON tree holds no cycle (_collector).
        numbers = target is not None and target.proves_numbers
        outline = settings.duplicate_keys != "allow"
        with CollectorPaused(), one_reading(encoded, numbers=numbers, outline=outline):
            return _within_limits(encoded, name, target, settings, size, not_json)
    return _within_limits(encoded, name, target, settings, size, not_json)


def check_as(
    raw: Raw, spec: SpecName, model: Any, *, settings: Settings | None = None
) -> Verdict[Any]:
    """:func:`check`, the message read by ``model``, a subclass of ``spec``'s envelope.

    The limits, the duplicate keys, the caps and the warnings are ``check``'s; the spec's own
    readers give way to ``model.model_validate_json`` (its fields, its validators), whose
    errors are mapped against ``model``: a field the user's class adds is its own, not an
    unknown key the spec's closed schema refuses. The caller has made sure ``model`` is such a
    subclass.
    """
    if settings is None:
        settings = get_settings()
    elif settings.__class__ is not Settings:
        settings = given_settings(settings)
    return _judged(_encoded(raw), spec, _read_by(spec, model), settings, None)


@cache
def _read_by(spec: SpecName, model: Any) -> Spec:
    """``spec`` as :func:`check_as` reads it with ``model``: one per model, built once."""
    base = spec_named(spec)
    validate = model.model_validate_json

    class ReadBy(Spec):
        name: ClassVar[SpecName] = spec

        def looks_like(self, document: Mapping[str, Any]) -> bool:
            return base.looks_like(document)

    read_by = ReadBy()
    read_by.model = model
    # The models read a message over FULL_REPORT_BYTES as `check` does, one error per array.
    read_by.read = read_by.read_large = partial(_read_with_context, validate)
    return read_by


def _read_with_context(
    validate: Callable[..., Any], raw: bytes | str, context: dict[str, Any] | None = None
) -> Any:
    return validate(raw, context=context)


def _within_limits(
    encoded: bytes,
    name: str,
    target: Spec | None,
    settings: Settings,
    size: int,
    not_json: ValidationError | None,
) -> Verdict[Any]:
    """The verdict on a message within the size limit: its depth, its repeated names, its spec."""
    depth = settings.max_depth
    # The bracket count bounds the depth: only a text with more brackets is scanned (past
    # COUNTED_BYTES, exceeds_depth finds the brackets one by one instead of counting them).
    if (
        size > COUNTED_BYTES or encoded.count(b"{") + encoded.count(b"[") > depth
    ) and exceeds_depth(encoded, depth):
        return _refused(
            name, rules.MESSAGE_TOO_DEEP, f"The JSON nests deeper than {settings.max_depth}."
        )
    repeated = None
    if settings.duplicate_keys != "allow":
        # Before validation, so that the scan's memory is freed before validation builds its own
        # (at the size limit, each is most of the peak).
        repeated = duplicate_keys(encoded, settings.max_violations)
    return _completed(_read(encoded, target, settings, size, not_json), encoded, settings, repeated)


def _read(
    encoded: bytes,
    target: Spec | None,
    settings: Settings,
    size: int,
    not_json: ValidationError | None = None,
) -> Verdict[Any]:
    """The verdict of ``target`` (``None`` to recognise the spec) on a message within limits.

    ``size`` is the message's, which the spec recognised must allow. A text with an integer
    too long for the parser is read again with a stand-in for it (:func:`without_long_integers`)
    at the message's size: within the limits, but for the spec's own. ``not_json`` is what the
    spec's quick reader raised for the text, if it did: where it says the parser stopped at
    such an integer, the spec's validator would stop there too, and the stand-in is read at
    once.
    """
    name = "auto" if target is None else target.name
    if target is not None and not_json is not None:
        error = not_json.errors(include_url=False, include_input=False)[0]
        parsed = error["type"] == "json_invalid"  # the parser's own, not a validator's
        named = _read_with_stand_in(encoded, error["msg"], target, settings, size, parsed)
        if named is not None:
            return named
    if target is None:
        # Past 16 KiB the members detection's tests read are read first (below, the parse
        # costs less than that reading's calls); where they cannot tell, the text is parsed.
        found = None
        if size > FULL_REPORT_BYTES:
            try:
                found = _detected_shallowly(encoded)
            except ValidationError as exc:
                # Its parser is the parse's: an integer too long for it is read with a
                # stand-in at once (a parse of a MiB that would stop at the same byte).
                named = _detection_refused(encoded, exc, settings, size)
                if named is not None:
                    return named
        if found is None:
            release_reading(encoded)  # the parse builds the whole tree: nothing of the text held
            try:
                # pydantic's own parser, so auto-detection reads exactly what validation will.
                document = from_json(encoded, allow_inf_nan=True)
            except ValueError as exc:
                named = _read_with_stand_in(encoded, str(exc), None, settings, size, True)
                if named is not None:
                    return named
                if "recursion limit" in str(exc):
                    return _refused(
                        name, rules.MESSAGE_TOO_DEEP, f"The JSON nests too deeply: {exc}."
                    )
                return _refused(name, rules.JSON_INVALID, f"Invalid JSON: {exc}.")
            found = detect(document)
            # Validation builds its own tree: this one, held, would double the peak.
            del document
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
    if size > FULL_REPORT_BYTES and not target.proves_numbers:
        # Validation builds its tree next: nothing of the text held (a spec that proves its
        # numbers first lets the reading go with that proof).
        release_reading(encoded)
    elif size > FULL_REPORT_BYTES and not plain_numbers(encoded):
        # Its proof (read once, for the spec's reading too) shows a number to note: one too
        # long for the parser is read with a stand-in at once, not after a parse of the MiB
        # that stops at it (a third of `check` on a MiB of strings dense with escapes).
        replaced = without_refused_integers(encoded)
        if replaced is not None:
            release_reading(encoded)
            named = _stand_in_read(*replaced, target, settings, size)
            if named is not None:
                return named
    verdict = target.validate(encoded, settings)
    if verdict.violations and verdict.violations[0].rule == rules.JSON_INVALID:
        message = verdict.violations[0].message
        # The parser's words alone: a validator's json.invalid quotes the input's keys.
        parsed = _PARSER_REFUSED.fullmatch(message) is not None
        named = _read_with_stand_in(encoded, message, target, settings, size, parsed)
        if named is not None:
            return named
    return verdict


# What `violations` writes for the parser's refusal of a too-long integer, and nothing else can.
_PARSER_REFUSED: Final = re.compile(
    r"Invalid JSON: number out of range at line [0-9]+ column [0-9]+\."
)


def _completed(
    verdict: Verdict[Any],
    encoded: bytes,
    settings: Settings,
    repeated: list[Violation] | None = None,
) -> Verdict[Any]:
    """The spec's verdict with what ``check`` adds: duplicate keys, the caps on findings.

    ``repeated`` is the duplicate-key findings when they were looked for already.
    """
    # What check adds to the spec's verdict makes a new one: a Verdict is never changed.
    if settings.duplicate_keys != "allow" and not _not_json(verdict):
        if repeated is None:
            # Capped as the verdict is: what the cap drops is counted, never built.
            repeated = duplicate_keys(encoded, settings.max_violations)
        if repeated and settings.duplicate_keys == "refuse":
            verdict = Verdict(
                verdict.spec, None, [*repeated, *verdict.violations], verdict.warnings
            )
        elif repeated:
            verdict = Verdict(
                verdict.spec, verdict.envelope, verdict.violations, [*repeated, *verdict.warnings]
            )
    if verdict.violations or verdict.warnings:
        limit = settings.max_violations
        if len(verdict.violations) > limit or len(verdict.warnings) > limit:
            verdict = Verdict(
                verdict.spec,
                verdict.envelope,
                cap(verdict.violations, limit),
                cap(verdict.warnings, limit),
            )
    return verdict


def _not_json(verdict: Verdict[Any]) -> bool:
    """Whether validation refused the text as JSON: no pointer into it then stands.

    The duplicate-key scan does not parse every innermost object it sets apart, so it may
    name a member of a text that is not JSON; the cap would then drop ``json.invalid``.
    """
    return bool(verdict.violations) and verdict.violations[0].rule == rules.JSON_INVALID


def _read_with_stand_in(
    encoded: bytes,
    error: str,
    target: Spec | None,
    settings: Settings,
    size: int,
    parsed: bool = False,
) -> Verdict[Any] | None:
    """The verdict of a text the parser refused, read again with 2^64 for each long integer.

    ``error`` is the parser's: pydantic's refuses an integer past its 4,300 digits for the
    whole document. ``None`` when that is not what it says, or when the copy shows no trace
    of a stand-in (``json.invalid`` then stands). ``parsed`` where ``error`` is the parser's
    own exception for ``encoded`` (not a violation's message, which a validator may write).
    """
    replaced = _stand_in_copy(encoded, error, parsed=parsed)
    if replaced is None:
        return None
    return _stand_in_read(*replaced, target, settings, size)


def _stand_in_copy(encoded: bytes, error: str, *, parsed: bool) -> tuple[bytes, bytes] | None:
    """The copy of a text the parser refused with ``error``, and its stand-in, or ``None``.

    The counterpart of ``_json.without_refused_integers`` where a parse has already refused
    the text: ``None`` unless ``error`` says it stopped at an integer too long for it.
    """
    if "number out of range" not in error:
        return None
    stood = stand_in_for(encoded)
    stand_in = without_long_integers(encoded, error, stood, parsed=parsed)
    return None if stand_in is None else (stand_in, stood)


def _stand_in_read(
    stand_in: bytes, stood: bytes, target: Spec | None, settings: Settings, size: int
) -> Verdict[Any] | None:
    """The verdict of a copy with ``stood`` for each long integer (:func:`_long_integers_named`)."""
    # The copy holds 2^64 or past it: its number proof is false without a reading of it again.
    with one_reading(stand_in, stood_in=True):
        if target is None:
            verdict = _read(stand_in, None, settings, size)
        else:
            verdict = target.validate(stand_in, settings)
    return _long_integers_named(verdict, stood.decode())


def _detection_refused(
    encoded: bytes, refused: ValidationError, settings: Settings, size: int
) -> Verdict[Any] | None:
    """The verdict of a text detection's reading refused at a too-long integer, or ``None``.

    The copy with its stand-ins (:func:`_stand_in_copy`) is read; where it holds no
    finding at all (a spec that reads 2^64 there, as SOM's free-form JSON), the text's parse
    would stop where the reading did, at its first such integer: ``json.invalid`` with the
    parser's words, without that parse.
    """
    error = refused.errors(include_url=False, include_input=False)[0]
    said = str(error.get("ctx", {}).get("error", ""))
    own = error["type"] == "json_invalid"  # the parser's own words, not a validator's
    replaced = _stand_in_copy(encoded, said, parsed=True) if own else None
    if replaced is None:
        return None
    named = _stand_in_read(*replaced, None, settings, size)
    if named is None:
        return _refused("auto", rules.JSON_INVALID, f"Invalid JSON: {said}.")
    return named


def _long_integers_named(stand_in: Verdict[Any], stood: str) -> Verdict[Any] | None:
    """The verdict on the stand-in copy, its findings naming the integers as they were.

    A stand-in that a spec reads with a warning (a wide integer in BabelQueue ``data``) is
    still refused: the original is too long to be read or written back. ``None`` when the
    copy shows no trace of a stand-in (``json.invalid`` then stands). ``stood`` is the
    stand-in, as a finding quotes it.
    """
    # The limit as it is now: Python's int-str limit where it is below the parser's.
    said = f"an integer of more than {long_integer_digits()} digits"
    negative = f"a negative {said[3:]}"  # where the message quotes the value, sign and all
    found = [
        replace(v, message=v.message.replace(f"-{stood}", negative).replace(stood, said))
        if stood in v.message
        else v
        for v in stand_in.violations
    ]
    warnings = []
    for warning in stand_in.warnings:
        if warning.rule == rules.NUMBER_BEYOND_INT64 and stood in warning.message:
            finding = f"A{said[1:]}: too long to read or write back."
            found.append(violation(rules.NUMBER_OUT_OF_RANGE, warning.pointer, finding))
        else:
            warnings.append(warning)
    if not found:
        return None
    return Verdict(stand_in.spec, None, found, warnings)


def _refused(name: str, rule: str, message: str) -> Verdict[Any]:
    found: list[Violation] = [violation(rule, "", message)]
    return Verdict(name, None, found)
