"""Every public model, every Python value a dict door carries that JSON cannot: refused or written.

The dict doors (``model_validate``, ``TypeAdapter(...).validate_python``) read Python data,
which may hold what no JSON text does: a lone surrogate (``json.loads('"\\ud800"')``) in a value
or a key, NaN and Infinity, an integer past 64 bits, bytes, a tuple, a set, dates, a
``Decimal``, an enum member, a subclass of ``str`` or ``int``, a model instance. Over every
public model class of the SDK (the generic ones parametrised with a user model and with
``Any``), with such a value put where the vendored corpus has a string, a number or an object,
each door either refuses it with a ``ValidationError`` whose violations carry a catalogued rule
id and a JSON pointer, or accepts it and then writes it (``model_dump_json()``,
``model_dump(mode="json")``, ``to_json()``) as JSON that reads back to an equal model: equal as
written, since free-form JSON keeps a tuple or an enum member as it was given, and reads back
the JSON value it was written as. ``Settings`` is configuration: its refusals name no wire rule.

A sample of the places, with a fixed seed: one test per class and value kind.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import importlib
import json
import random
from collections.abc import Iterator
from typing import Any, Final

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

import envelopekit as ek
from envelopekit import rules
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxRequest, MxResponse, Page, SuccessPayload, WriteArgs
from envelopekit.som import SomEnvelope, UnvalidatedPayload
from tests.babelqueue.conformance._manifest import ROOT as BQ_DATA
from tests.matrix.test_cases import CASES as MATRIX_CASES
from tests.som._corpus import positive_envelope, positive_files
from tests.som._maximal import maximal_envelopes

SEED: Final = 20261207
PLACES_PER_CASE: Final = 6
EXAMPLES: Final = BQ_DATA.parent.parent.parent / "examples" / "messages"

Path = tuple[str | int, ...]


class _User(BaseModel):
    """A user's model: what a generic is parametrised with (it takes any object)."""

    model_config = {"extra": "allow"}


class _Item(BaseModel):
    name: str


class _Args(BaseModel):
    path: str
    data: str
    idempotencyKey: str


class _Colour(enum.Enum):
    RED = "red"


class _Str(str):
    pass


class _Int(int):
    pass


class _Other(BaseModel):
    a: str = "x"


# --- the public model classes, and a corpus message for each ------------------------------------


def _public_models() -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()
    for name in ("envelopekit", "som", "matrix", "babelqueue", "cloudevents"):
        module = importlib.import_module(
            "envelopekit" if name == "envelopekit" else f"envelopekit.{name}"
        )
        for public in module.__all__:
            value = getattr(module, public)
            if isinstance(value, type) and issubclass(value, BaseModel):
                found.add(value)
    return found


def _nested(model: BaseModel, raw: Any, into: dict[type[BaseModel], list[Any]]) -> None:
    """Each model instance in ``model`` (read from ``raw``), with the data it was read from."""
    into.setdefault(type(model), []).append(raw)
    if not isinstance(raw, dict):
        return
    for name, field in type(model).model_fields.items():
        key = field.alias or name
        if key in raw:
            _nested_value(getattr(model, name), raw[key], into)


def _nested_value(value: Any, raw: Any, into: dict[type[BaseModel], list[Any]]) -> None:
    if isinstance(value, BaseModel):
        _nested(value, raw, into)
    elif isinstance(value, list) and isinstance(raw, list):
        for item, item_raw in zip(value, raw, strict=False):
            _nested_value(item, item_raw, into)
    elif isinstance(value, dict) and isinstance(raw, dict):
        for key, item in value.items():
            if key in raw:
                _nested_value(item, raw[key], into)


def _corpus() -> dict[str, tuple[type[BaseModel], list[Any]]]:
    """Each class (by a test id) and the corpus's Python data it reads."""
    found: dict[type[BaseModel], list[Any]] = {}
    typed: dict[str, tuple[type[BaseModel], list[Any]]] = {}

    def read(model: type[BaseModel], document: Any) -> None:
        _nested(model.model_validate_json(json.dumps(document)), document, found)

    som = [positive_envelope(path) for path in positive_files()]
    som += [
        *maximal_envelopes().values(),
        json.loads((EXAMPLES / "som/unknown-family.json").read_bytes()),
    ]
    for document in som:
        read(SomEnvelope, document)
        family = type(SomEnvelope.model_validate(document).payload)
        if family is UnvalidatedPayload:
            continue
        name = f"SomEnvelope[{family.__name__}]"
        typed.setdefault(name, (SomEnvelope[family], []))[1].append(document)  # type: ignore[valid-type]
    for path in sorted((BQ_DATA / "fixtures").glob("*.json")):
        if ek.check(path.read_bytes(), spec="babelqueue").ok:
            read(BabelEnvelope, json.loads(path.read_bytes()))
    for case in MATRIX_CASES:
        if case["valid"]:
            models: dict[str, type[BaseModel]] = {"request": MxRequest, "response": MxResponse}
            if case["kind"] in models:
                read(models[case["kind"]], case["doc"])
    for path in sorted((EXAMPLES / "matrix").glob("*.json")):
        document = json.loads(path.read_bytes())
        if path.name.startswith("response") and ek.check(path.read_bytes(), spec="matrix").ok:
            read(MxResponse, document)
        elif path.name.startswith("request") and ek.check(path.read_bytes(), spec="matrix").ok:
            read(MxRequest, document)
    story = next(document for document in som if document["message_type"] == "story.context")
    order = json.loads((BQ_DATA / "fixtures" / "order-created.json").read_bytes())
    page = json.loads((EXAMPLES / "matrix" / "response-list-page.json").read_bytes())
    write = json.loads((EXAMPLES / "matrix" / "request-write-idempotent.json").read_bytes())
    generics: dict[str, tuple[type[BaseModel], Any]] = {
        # SOM's payload is bound to its families (each one above): Any is the other.
        "SomEnvelope[Any]": (SomEnvelope[Any], story),
        "BabelEnvelope[User]": (BabelEnvelope[_User], order),
        "BabelEnvelope[Any]": (BabelEnvelope[Any], order),
        "MxRequest[WriteArgs]": (MxRequest[WriteArgs], write),
        "MxRequest[User]": (MxRequest[_Args], write),
        "MxRequest[Any]": (MxRequest[Any], write),
        "MxResponse[Page[User]]": (MxResponse[Page[_Item]], page),
        "MxResponse[Page[Any]]": (MxResponse[Page[Any]], page),
        "MxResponse[Any]": (MxResponse[Any], page),
        "Page[User]": (Page[_Item], page["payload"]),
        "Page[Any]": (Page[Any], page["payload"]),
        "Page": (Page, page["payload"]),
        "SuccessPayload": (SuccessPayload, page["payload"]),
        "WriteArgs": (WriteArgs, write["payload"]),
    }
    for name, (model, document) in generics.items():
        typed[name] = (model, [document])
    found.setdefault(ek.Settings, []).append(ek.Settings().model_dump(mode="json"))
    by_name = {model.__name__: (model, documents) for model, documents in found.items()}
    by_name.update(typed)
    return by_name


CORPUS: Final = _corpus()


def test_the_corpus_reaches_every_public_model() -> None:
    reached = {model for model, _ in CORPUS.values()}
    assert _public_models() - reached == set()


# --- the values ----------------------------------------------------------------------------------


def _places(document: Any, at: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every string, number and object of ``document`` (not the root), with its path."""
    if at and isinstance(document, (str, int, float, dict)) and type(document) is not bool:
        yield at, document
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _places(value, (*at, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _places(value, (*at, index))


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float)) else "x"


# Each kind: what it puts in place of the corpus's value (``None``: a key, added to an object).
KINDS: Final[dict[str, Any]] = {
    "lone-surrogate": lambda v: "\ud800" + (v if isinstance(v, str) else ""),
    "lone-surrogate-key": None,
    "nan": lambda v: float("nan"),
    "infinity": lambda v: float("-inf"),
    "int-past-64-bits": lambda v: 2**64 + 1,
    "bytes": lambda v: v.encode() if isinstance(v, str) else b"x",
    "tuple": lambda v: tuple(v) if isinstance(v, dict) else (v,),
    "set": lambda v: {_hashable(v)},
    "date": lambda v: datetime.date(2026, 9, 11),
    "datetime": lambda v: datetime.datetime(2026, 9, 11, 16, 41, tzinfo=datetime.timezone.utc),
    "decimal": lambda v: decimal.Decimal(str(v) if isinstance(v, (int, float)) else "1.5"),
    "enum-member": lambda v: enum.Enum("_Value", {"V": _hashable(v)}).V,  # type: ignore[attr-defined]
    "str-subclass": lambda v: _Str(v if isinstance(v, str) else "x"),
    "int-subclass": lambda v: _Int(v if type(v) is int else 1),
    "model-instance": lambda v: _Other(),
}


def _changed(document: Any, path: Path, kind: str) -> Any:
    copied = json.loads(json.dumps(document))
    target = copied
    for step in path[:-1]:
        target = target[step]
    if KINDS[kind] is None:
        target[path[-1]]["\udc80"] = 1
    else:
        target[path[-1]] = KINDS[kind](target[path[-1]])
    return copied


def _cases(model_id: str, kind: str) -> list[tuple[Path, Any]]:
    _, documents = CORPUS[model_id]
    places = [
        (index, path)
        for index, document in enumerate(documents)
        for path, value in _places(document)
        if KINDS[kind] is not None or isinstance(value, dict)
    ]
    rng = random.Random(f"{SEED} {model_id} {kind}")
    chosen = rng.sample(places, min(PLACES_PER_CASE, len(places)))
    return [(path, _changed(documents[index], path, kind)) for index, path in chosen]


DOORS: Final[dict[str, Any]] = {
    "model_validate": lambda model, document: model.model_validate(document),
    "TypeAdapter": lambda model, document: TypeAdapter(model).validate_python(document),
}


def _disagreement(model: type[BaseModel], document: Any, door: str) -> str | None:
    """What the door does that it must not, or ``None``."""
    try:
        found = DOORS[door](model, document)
    except ValidationError as exc:
        if model is ek.Settings:
            return None  # configuration, not a message: no wire rule to name
        try:
            refused = ek.violations(exc, model=model)
        except TypeError as mapping:
            return f"refused, and ek.violations cannot read it: {mapping}"
        if not refused:
            return "refused with no violation"
        for violation in refused:
            if not rules.is_rule(violation.rule) or not (
                violation.pointer == "" or violation.pointer.startswith("/")
            ):
                return f"refused with {violation.rule!r} at {violation.pointer!r}"
        return None
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"
    try:
        texts = {"model_dump_json()": found.model_dump_json().encode()}
        texts["model_dump(mode='json')"] = json.dumps(found.model_dump(mode="json")).encode()
        if hasattr(found, "to_json"):
            texts["to_json()"] = found.to_json()
    except Exception as exc:
        return f"accepted, then writing it raised {type(exc).__name__}: {exc}"
    for writer, text in texts.items():
        try:
            again = model.model_validate_json(text)
        except ValidationError as exc:
            return f"accepted, and {writer} is refused: {exc}"
        # Equal as a message: what free-form JSON keeps as it was given (a tuple, an enum
        # member) is read back as the JSON value it was written as.
        if again.model_dump_json() != texts["model_dump_json()"].decode():
            return f"accepted, and {writer} reads back otherwise: {text[:300]!r}"
    return None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("model_id", sorted(CORPUS))
def test_a_dict_door_refuses_or_writes_what_it_reads(model_id: str, kind: str) -> None:
    model, _ = CORPUS[model_id]
    found = [
        f"{door} with {kind} at /{'/'.join(map(str, path))}: {problem}"
        for path, document in _cases(model_id, kind)
        for door in DOORS
        if (problem := _disagreement(model, document, door)) is not None
    ]
    assert found == [], "\n".join(found)
