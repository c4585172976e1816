"""``ek.check`` across the three specs: auto-detection, and no exception on any input."""

from __future__ import annotations

import contextlib
import inspect
import re
import typing
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import _check, _json, rules
from envelopekit._check import detect
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxRequest, MxResponse
from envelopekit.som import SomEnvelope
from tests._calls import peak_memory
from tests.conftest import DATA

EXAMPLES = Path(__file__).parent.parent / "examples" / "messages"
SINGLE = sorted(EXAMPLES.glob("*/*.json"))
MODELS: dict[str, Any] = {"babelqueue": BabelEnvelope, "som": SomEnvelope, "matrix": MxRequest}
# A message text should never show a template placeholder that was not filled in.
UNFILLED = re.compile(r"\{[a-z_]+(!r)?\}")


@pytest.mark.parametrize("path", SINGLE, ids=[f"{p.parent.name}/{p.name}" for p in SINGLE])
def test_auto_detects_the_spec_of_every_example(path: Path) -> None:
    raw = path.read_bytes()
    auto = ek.check(raw)
    assert auto.spec == path.parent.name
    named = ek.check(raw, spec=path.parent.name)
    assert auto.violations == named.violations
    assert auto.warnings == named.warnings
    for finding in auto.violations + auto.warnings:
        assert rules.is_rule(finding.rule)
        assert not UNFILLED.search(finding.message), finding.message


def test_auto_refuses_what_no_spec_recognises() -> None:
    assert ek.check(b'{"hello": "world"}').rules() == [rules.SPEC_UNRECOGNISED]
    assert ek.check(b"[1, 2]").rules() == [rules.SPEC_UNRECOGNISED]
    assert ek.check(b"{oops").rules() == [rules.JSON_INVALID]


def test_unknown_spec_name_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        ek.check(b"{}", spec="soap")
    with pytest.raises(TypeError):
        ek.check(123, spec="som")  # type: ignore[call-overload]


def test_text_and_buffers_are_accepted() -> None:
    raw = (EXAMPLES / "babelqueue" / "order-created.json").read_bytes()
    assert ek.check(raw.decode("utf-8"), spec="babelqueue").ok
    assert ek.check(bytearray(raw), spec="babelqueue").ok
    assert ek.check(memoryview(raw), spec="babelqueue").ok


def test_som_bus_size_limit() -> None:
    big = b'{"som_version":"1.0.0","pad":"' + b"x" * 240_001 + b'"}'
    assert ek.check(big, spec="som").rules() == [rules.MESSAGE_TOO_LARGE]
    assert ek.check(big).rules() == [rules.MESSAGE_TOO_LARGE]


def _exercise(raw: bytes) -> None:
    for spec, model in MODELS.items():
        verdict = ek.check(raw, spec=spec)
        assert verdict.ok is (verdict.envelope is not None)
        assert all(rules.is_rule(v.rule) for v in verdict.violations + verdict.warnings)
        try:
            model.model_validate_json(raw)
        except ValidationError as exc:
            if spec != "matrix":  # matrix's check classifies; the request model alone may differ
                found = [v.rule for v in ek.violations(exc)]
                assert list(dict.fromkeys(found)) == verdict.rules()
    verdict = ek.check(raw)
    assert verdict.ok is (verdict.envelope is not None)
    try:
        MxResponse.model_validate_json(raw)
    except ValidationError as exc:
        ek.violations(exc)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)
shaped = st.fixed_dictionaries(
    {},
    optional=dict.fromkeys(
        (
            "som_version",
            "message_type",
            "payload",
            "topic",
            "op",
            "correlationId",
            "replyTo",
            "job",
            "meta",
            "data",
        ),
        json_values,
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    _exercise(raw)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values | shaped)
def test_arbitrary_json_never_raises(document: Any) -> None:
    try:
        raw = orjson.dumps(document)
    except TypeError:  # beyond 64-bit integers: write them as Python does
        import json

        raw = json.dumps(document).encode("utf-8", "surrogatepass")
    _exercise(raw)


DUPLICATED = (
    b'{"job":"urn:babel:a:b","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"x":1,'
    b'"x":2,"a/b":[{"k":1,"k":2}],"a/b":[{"k":1,"k":2}]},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-'
    b'cdef01234567","queue":"q","lang":"go","schema_version":1,"created_at":1749132727000},'
    b'"attempts":0}'
)


def test_duplicate_keys_are_allowed_by_default() -> None:
    verdict = ek.check(DUPLICATED, spec="babelqueue")
    assert verdict.ok
    assert not verdict.warnings


def test_duplicate_keys_warn() -> None:
    verdict = ek.check(DUPLICATED, spec="babelqueue", settings=ek.Settings(duplicate_keys="warn"))
    assert verdict.ok
    # In document order: `data`'s own names as they first appear, then what its members hold.
    assert [(w.rule, w.pointer) for w in verdict.warnings] == [
        (rules.JSON_DUPLICATE_KEY, "/data/x"),
        (rules.JSON_DUPLICATE_KEY, "/data/a~1b"),
        (rules.JSON_DUPLICATE_KEY, "/data/a~1b/0/k"),
    ]


def test_duplicate_keys_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_DUPLICATE_KEYS", "refuse")
    ek.get_settings.cache_clear()
    verdict = ek.check(DUPLICATED, spec="babelqueue")
    assert not verdict.ok
    assert verdict.envelope is None
    assert verdict.rules() == [rules.JSON_DUPLICATE_KEY]
    assert ek.check(DUPLICATED.replace(b'"x":2,', b""), spec="babelqueue").rules() == [
        rules.JSON_DUPLICATE_KEY
    ]
    clean = DUPLICATED.replace(b'"x":2,', b"").replace(b',"k":2', b"")
    clean = clean.replace(b',"a/b":[{"k":1}]', b"")
    assert ek.check(clean, spec="babelqueue").ok


def test_duplicate_keys_in_text_that_is_not_json() -> None:
    settings = ek.Settings(duplicate_keys="refuse")
    assert ek.check(b'{"a":1,"a":', spec="som", settings=settings).rules() == [rules.JSON_INVALID]


@pytest.mark.parametrize(
    "extra",
    [{"op": "x"}, {"som_version": "1.0.0"}, {"ok": False, "error": "x"}, {"message_type": "a"}],
    ids=["op", "som_version", "error-payload", "message_type"],
)
def test_auto_keeps_babelqueue_messages_with_foreign_extras(extra: dict[str, Any]) -> None:
    # BabelQueue tolerates unknown keys, so a key another spec keys on may ride along.
    document = orjson.loads((EXAMPLES / "babelqueue" / "order-created.json").read_bytes())
    document.update(extra)
    verdict = ek.check(orjson.dumps(document))
    assert verdict.spec == "babelqueue"
    assert verdict.ok


@pytest.mark.parametrize(
    "extra",
    [{"som_version": "1.0.0"}, {"message_type": "fs.list", "payload": {}}, {"job": "urn:a:b"}],
    ids=["som_version", "message_type", "job"],
)
@pytest.mark.parametrize(
    "document",
    [
        {"op": "$reply", "correlationId": "c-1", "payload": {"ok": True, "count": 0}},
        {"ok": False, "error": "no such directory", "code": "NOT_FOUND"},
    ],
    ids=["reply", "error-payload"],
)
def test_auto_keeps_open_matrix_messages_with_foreign_extras(
    document: dict[str, Any], extra: dict[str, Any]
) -> None:
    # A reply is a response whatever else it carries (matrix.md §14.9); responses and error
    # payloads are open, so a key another spec keys on may ride along.
    raw = orjson.dumps({**document, **extra})
    assert ek.check(raw, spec="matrix").ok
    verdict = ek.check(raw)
    assert (verdict.spec, verdict.rules()) == ("matrix", [])


def test_auto_detects_without_parsing_where_the_members_it_reads_tell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A message BabelQueue's quick reader takes carries the signature detection tries first: it
    # is not parsed for detection. Nor is any text whose members detection's tests read
    # (read by a validator that builds nothing else: the duplicate that wins and escaped names
    # read as detection reads them) tell the spec. Detection parses the text, as before, where
    # they cannot: a test asks of `data` or `payload`, or the text is not JSON.
    from pydantic_core import from_json

    parsed: list[object] = []

    def counted(raw: bytes, **options: Any) -> Any:
        parsed.append(raw)
        return from_json(raw, **options)

    monkeypatch.setattr("envelopekit._check.from_json", counted)
    good = orjson.loads((EXAMPLES / "babelqueue" / "order-created.json").read_bytes())
    story = orjson.dumps(
        orjson.loads(
            (
                DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"
            ).read_bytes()
        )
    )
    with_urn = {**good, "urn": good["job"]}
    del with_urn["job"]
    reply = orjson.loads((EXAMPLES / "matrix" / "response-list-page.json").read_bytes())
    request = orjson.dumps(
        orjson.loads((EXAMPLES / "matrix" / "request-join-tell.json").read_bytes())
    )
    large = {**good, "data": {f"k{i}": "v" * 16 for i in range(1200)}}  # past the quick reader
    led = orjson.dumps({"job": "urn:a:b", "op": "$reply", "correlationId": "c", "payload": 1})
    unversioned = {k: v for k, v in orjson.loads(story).items() if k != "som_version"}

    def big(raw: bytes) -> bytes:  # past 16 KiB, where the members are read before a parse
        return raw[:-1] + b',"pad":"' + b"x" * 17_000 + b'"}'

    cases: list[tuple[bytes | str, int, str]] = [
        (orjson.dumps(good), 0, "babelqueue"),
        (orjson.dumps(good).decode(), 0, "babelqueue"),  # a str: encoded, then read alike
        # Past 16 KiB, what the quick reader declines: the members read tell the spec.
        (orjson.dumps(large), 0, "babelqueue"),
        (big(orjson.dumps({**good, "op": "$reply"})), 0, "babelqueue"),  # the signature first
        (big(orjson.dumps(with_urn)), 0, "babelqueue"),
        (orjson.dumps({**large, "attempts": -1}), 0, "babelqueue"),
        (
            big(orjson.dumps(good)[:-1] + rb',"me\u0074a":{"schema\u005fversion":1}}'),
            0,
            "babelqueue",
        ),
        (big(story), 0, "som"),
        (big(request), 0, "matrix"),
        (big(led), 0, "matrix"),
        (big(led[:-1] + b',"meta":{"schema_version":1},"meta":{}}'), 0, "matrix"),
        # BabelQueue's words inside another spec's message.
        (
            big(orjson.dumps({"op": "fs.write", "payload": {"job": "a", "schema_version": 1}})),
            0,
            "matrix",
        ),
        # BabelQueue's signature spelled with escapes in an open reply.
        (
            big(
                orjson.dumps(reply)[:-1]
                + rb',"j\u006fb":"urn:a:b","meta":{"schema\u005fversion":1}}'
            ),
            0,
            "babelqueue",
        ),
        # Detected by parsing, as before: within 16 KiB (the parse costs less there), a test
        # asks of `payload` or `data`, `meta` is no object, nothing matches, not JSON.
        (orjson.dumps({**good, "attempts": -1}), 1, "babelqueue"),
        (story, 1, "som"),
        (led, 1, "matrix"),
        (big(orjson.dumps(unversioned)), 1, "som"),
        (big(b'{"message_type":"system.audit","payload":{},"op":"x"}'), 1, "som"),
        (big(orjson.dumps({"meta": {}, "data": {}})), 1, "babelqueue"),
        (big(orjson.dumps({**good, "meta": 5})), 1, "babelqueue"),
        (big(b'{"a":1}'), 1, "auto"),
        (orjson.dumps(large)[:-1], 1, "auto"),
    ]
    for raw, parses, spec in cases:
        parsed.clear()
        verdict = ek.check(raw)
        assert (len(parsed), verdict.spec) == (parses, spec), raw[:80]
        named = ek.check(raw, spec)
        assert (verdict.ok, verdict.violations, verdict.warnings) == (
            named.ok,
            named.violations,
            named.warnings,
        )
        assert verdict.envelope == named.envelope


_AUTO_BASES = [
    orjson.loads((EXAMPLES / "babelqueue" / "order-created.json").read_bytes()),
    orjson.loads((EXAMPLES / "som" / "telling-started.json").read_bytes()),
    orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    ),
    orjson.loads((EXAMPLES / "matrix" / "request-join-tell.json").read_bytes()),
    orjson.loads((EXAMPLES / "matrix" / "response-list-page.json").read_bytes()),
]
# The keys the three specs' detection tests and readers key on, and any other.
_AUTO_KEYS = st.sampled_from(
    ["job", "urn", "meta", "data", "op", "ok", "error", "som_version", "message_type", "payload"]
) | st.text(max_size=6)
_AUTO_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    [1, -1, "x", "urn:a:b", "1.0.0", "$reply", False, None, {}, {"schema_version": 1}, []]
)


@settings(max_examples=400, deadline=None)
@given(
    base=st.sampled_from(_AUTO_BASES),
    extra=st.dictionaries(_AUTO_KEYS, _AUTO_VALUES, max_size=3),
    gone=st.sets(_AUTO_KEYS, max_size=2),
    mode=st.sampled_from(["strict", "tolerant"]),
    first=st.sampled_from([None, "job", "urn"]),
    escaped=st.booleans(),
    padded=st.booleans(),
)
def test_auto_is_detection_then_the_named_spec(
    base: dict[str, Any],
    extra: dict[str, Any],
    gone: set[str],
    mode: str,
    first: str | None,
    escaped: bool,
    padded: bool,
) -> None:
    # What auto reads before detection (BabelQueue's quick reader; past 16 KiB, only the
    # members detection's tests read) must never change its verdict: it is detection's spec's,
    # or spec.unrecognised. The member named `first` leads the text (added where there is
    # none); `escaped` writes the other specs' keys' first letter as an escape, which
    # detection reads as the key; `padded` takes the text past 16 KiB.
    config = ek.Settings(som_version_mode=mode)  # type: ignore[arg-type]
    document = {k: v for k, v in {**base, **extra}.items() if k not in gone}
    if first is not None:
        document = {first: document.get(first, "urn:a:b"), **document}
    if padded:
        document = {**document, "pad": "x" * 17_000}
    raw = orjson.dumps(document)
    if escaped:
        for key in (b"op", b"ok", b"som_version", b"message_type"):
            raw = raw.replace(b'"' + key + b'"', b'"\\u%04x' % key[0] + key[1:] + b'"')
    auto = ek.check(raw, settings=config)
    found = detect(document)
    if found is None:
        assert auto.rules() == [rules.SPEC_UNRECOGNISED]
        return
    named = ek.check(raw, found, settings=config)
    assert auto.spec == found
    assert (auto.violations, auto.warnings) == (named.violations, named.warnings)
    assert auto.envelope == named.envelope


def test_str_with_a_lone_surrogate_is_invalid_json_for_every_spec() -> None:
    for spec in ("auto", "babelqueue", "som", "matrix"):
        assert ek.check('{"op":"a","job":"\ud800","payload":"x"}', spec=spec).rules() == [
            rules.JSON_INVALID
        ]


def test_depth_counts_past_a_string_ending_in_an_escape() -> None:
    # Found by envelopekit.testing: `"\u001f"` left a lone backslash before the closing quote
    # in the depth scan's skeleton, which then read the rest of the text as one string.
    deep = "[" * 70 + "0" + "]" * 70
    raw = '{"job":"\\u001f","data":{},"zz":' + deep + "}"
    assert ek.check(raw.encode(), spec="babelqueue").rules() == ["message.too_deep"]


# --- the spec registry (envelopekit._check.REGISTRY) ------------------------------------------


def test_the_registry_is_the_list_of_specs() -> None:
    from envelopekit import _check

    assert typing.get_args(_check.SpecName) == tuple(_check.REGISTRY) == ek.SPECS
    for name, entry in _check.REGISTRY.items():
        spec = _check.spec_named(name)
        assert type(spec).__module__ == f"{entry.package}._spec"
        assert spec.name == name
        assert spec.max_bytes == entry.max_bytes
        # `validate` is written once, in Spec; a spec supplies how to read its messages.
        assert type(spec).validate is _check.Spec.validate
        assert (
            entry.rule_schemas
            == {
                "babelqueue": rules.BABELQUEUE_SCHEMAS,
                "som": rules.SOM_SCHEMAS,
                "matrix": rules.MATRIX_SCHEMAS,
            }[name]
        )


def test_each_spec_has_its_typed_overload() -> None:
    from typing_extensions import get_overloads

    from envelopekit import _check

    said = [
        re.sub(r"['\"]", "", inspect.signature(one).parameters["spec"].annotation)
        for one in get_overloads(ek.check)
    ]
    assert said == [f"Literal[{name}]" for name in _check.REGISTRY] + ["str"]


def test_detection_orders_come_from_the_entries() -> None:
    from envelopekit import _check

    # Signatures: the open specs' unmistakable marks, BabelQueue's first; then the shapes,
    # the most particular first.
    assert _check._SIGNATURES == ("babelqueue", "matrix")
    assert _check._SHAPES == ("som", "matrix", "babelqueue")
    assert _check.spec_named("matrix").looks_like({"op": "x"})
    assert _check.spec_named("babelqueue").signature(
        {"op": "x", "job": "urn:a:b", "meta": {"schema_version": 1}}
    )


def test_the_generated_schema_tables_come_from_the_entries() -> None:
    import importlib

    from envelopekit import _check, _schema

    derived = {name: tuple(entry.schemas) for name, entry in _check.REGISTRY.items()}
    assert derived == _schema.SCHEMA_NAMES
    for entry in _check.REGISTRY.values():
        package = importlib.import_module(entry.package)
        for model in entry.schemas.values():
            # Every generated schema's errors carry one of the spec's rule schemas.
            assert getattr(package, model).__schema_name__ in entry.rule_schemas, model
    # The spec's own file name (the rule ids' `<schema>`) reaches the same schema as ours.
    assert ek.json_schema("babelqueue", "message-envelope") == ek.json_schema(
        "babelqueue", "envelope"
    )
    with pytest.raises(ValueError, match="no schema babelqueue/payload-schema"):
        ek.json_schema("babelqueue", "payload-schema")


def test_the_validation_context_is_the_entry_s_settings_fields() -> None:
    from envelopekit import _check

    assert _check.REGISTRY["som"].context == ("som_version_mode",)
    example = DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"
    raw = orjson.dumps({**orjson.loads(example.read_bytes()), "som_version": "1.1.0"})
    strict = ek.check(raw, spec="som", settings=ek.Settings(som_version_mode="strict"))
    tolerant = ek.check(raw, spec="som", settings=ek.Settings(som_version_mode="tolerant"))
    assert strict.rules() == [rules.SOM_VERSION_UNSUPPORTED_MINOR]
    assert tolerant.ok
    assert [w.rule for w in tolerant.warnings] == [rules.SOM_VERSION_UNSUPPORTED_MINOR]
    # Alternating settings objects never hands one the other's context.
    assert ek.check(raw, spec="som", settings=ek.Settings(som_version_mode="strict")).rules() == [
        rules.SOM_VERSION_UNSUPPORTED_MINOR
    ]


class _Sealed(ek.Verdict[Any]):
    """A verdict that refuses any change once built: attributes and lists alike."""

    def __init__(
        self,
        spec: str,
        envelope: Any,
        violations: list[ek.Violation] | None = None,
        warnings: list[ek.Violation] | None = None,
    ) -> None:
        # Tuples, so an in-place change of a list (`violations[:0] = ...`) raises too.
        super().__init__(spec, envelope, tuple(violations or ()), tuple(warnings or ()))  # type: ignore[arg-type]
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value: object) -> None:
        if getattr(self, "_sealed", False):
            raise AttributeError(f"a verdict is read-only: {name} was set after it was built")
        object.__setattr__(self, name, value)


@pytest.mark.parametrize(
    ("raw", "overrides"),
    [
        (DUPLICATED, {"duplicate_keys": "warn"}),
        (DUPLICATED, {"duplicate_keys": "refuse"}),
        (b'{"job": 1, "meta": 2, "data": 3, "x": {"a": 1, "a": 2}}', {"duplicate_keys": "refuse"}),
        (b'{"job": "", "meta": {"schema_version": 1}, "a": 1, "b": 2}', {"max_violations": 1}),
        (b'{"job": "urn:a:b", "data": {"n": 1' + b"0" * 5000 + b"}}", {}),
        (b"{", {}),
    ],
    ids=["duplicates-warn", "duplicates-refuse", "refuse-invalid", "capped", "long-int", "json"],
)
def test_check_never_changes_a_verdict_once_built(
    monkeypatch: pytest.MonkeyPatch, raw: bytes, overrides: dict[str, Any]
) -> None:
    from envelopekit import _check

    settings = ek.Settings(**overrides)
    expected = ek.check(raw, settings=settings)
    monkeypatch.setattr(_check, "Verdict", _Sealed)
    sealed = ek.check(raw, settings=settings)
    assert type(sealed) is _Sealed
    assert (sealed.spec, sealed.envelope) == (expected.spec, expected.envelope)
    assert list(sealed.violations) == expected.violations
    assert list(sealed.warnings) == expected.warnings


def test_the_clean_verdict_is_the_one_its_init_builds() -> None:
    """``check`` builds the verdict of a message its quick reader takes without ``__init__``."""
    clean: set[str] = set()
    for path in SINGLE:
        spec = path.parent.name
        raw = path.read_bytes()
        first, second = ek.check(raw, spec=spec), ek.check(raw, spec=spec)
        if not first.ok or first.warnings:
            continue
        clean.add(spec)
        assert type(first) is ek.Verdict
        assert first == ek.Verdict(spec, first.envelope, [], [])
        # Each verdict has lists of its own: a caller's append changes no other verdict.
        assert first.violations is not second.violations
        assert first.warnings is not second.warnings
        first.warnings.append(ek.Violation("x.y", "", "z", "policy"))
        assert second.warnings == []
        assert ek.check(raw, spec=spec).warnings == []
    assert clean == {"babelqueue", "som", "matrix"}


_BABELQUEUE_JSON = sorted((DATA / "babelqueue").rglob("*.json"))
_EVERY_JSON = sorted(DATA.rglob("*.json")) + SINGLE


@pytest.mark.parametrize("spec", ["babelqueue", "auto"])
@pytest.mark.parametrize("duplicates", ["allow", "warn", "refuse"])
def test_what_the_clean_reader_takes_check_finds_clean(duplicates: str, spec: str) -> None:
    from envelopekit._check import clean_reader

    config = ek.Settings(duplicate_keys=duplicates)  # type: ignore[arg-type]
    found = clean_reader(spec, config)
    assert found is not None
    quick, most, vouched = found
    assert vouched == "babelqueue"
    taken = declined = 0
    for path in _BABELQUEUE_JSON if spec == "babelqueue" else _EVERY_JSON:
        raw = path.read_bytes()
        # A refusal case of the corpus (not JSON to orjson) is read as it is.
        with suppress(orjson.JSONDecodeError):
            raw = orjson.dumps(orjson.loads(raw))
        try:
            envelope = quick(raw) if len(raw) <= most else None
        except ValidationError:
            envelope = None
        verdict = ek.check(raw, spec=spec, settings=config)
        if envelope is None:
            declined += 1
            continue
        taken += 1
        assert verdict.ok and not verdict.warnings, path
        assert verdict.envelope == envelope
        # Detection, which the reader stands in for, names the same spec.
        assert verdict.spec == detect(orjson.loads(raw)) == "babelqueue"
    assert taken and declined  # both kinds are in the corpus


def test_the_clean_reader_is_offered_only_where_check_would_use_it() -> None:
    from envelopekit._check import clean_reader

    assert clean_reader("babelqueue", ek.Settings(max_depth=3)) is None
    assert clean_reader("auto", ek.Settings(max_depth=3)) is None
    small = clean_reader("babelqueue", ek.Settings(max_message_bytes=300))
    assert small is not None and small[1] == 300


@pytest.mark.parametrize("duplicates", ["warn", "refuse"])
def test_where_duplicate_keys_are_looked_for_the_clean_reader_declines_a_repeat(
    duplicates: str,
) -> None:
    from envelopekit._check import clean_reader

    settings = ek.Settings(duplicate_keys=duplicates)  # type: ignore[arg-type]
    found = clean_reader("babelqueue", settings)
    assert found is not None
    quick, _, _ = found
    clean = DUPLICATED.replace(b'"x":2,', b"").replace(b',"k":2', b"")
    clean = clean.replace(b',"a/b":[{"k":1}]', b"")
    assert quick(clean) is not None
    assert ek.check(clean, "babelqueue", settings=settings).ok
    # Valid to the spec, so the spec's own reader takes it: only the repeat is declined.
    assert ek.check(DUPLICATED, "babelqueue").ok
    assert quick(DUPLICATED) is None
    assert ek.check(DUPLICATED, "babelqueue", settings=settings).rules() == (
        [rules.JSON_DUPLICATE_KEY] if duplicates == "refuse" else []
    )


_ESCAPED_HEAD = (
    b'{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
    b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php",'
    b'"schema_version":1,"created_at":1749132727000},"attempts":0,"data":{"a":['
)


@pytest.mark.parametrize("duplicates", ["allow", "warn", "refuse"])
def test_a_large_text_is_read_outside_its_strings_once_for_all_its_readers(
    monkeypatch: pytest.MonkeyPatch, duplicates: str
) -> None:
    # Its depth scan, number proof and duplicate scan each read it outside its strings (before: a
    # neutral copy each, two passes over the text apiece, and a split at its quotes each); the
    # verdict is the one without.
    objects = (b'{"\\u0061":%d,"a\\"":%d,"a":0}' % (i, i) for i in range(4_000))
    text = _ESCAPED_HEAD + b",".join(objects) + b',{"b":9007199254740993}]}}'
    assert len(text) > 100_000
    settings_ = ek.Settings(duplicate_keys=duplicates)  # type: ignore[arg-type]
    with monkeypatch.context() as patched:
        patched.setattr(_check, "one_reading", lambda raw, **_: contextlib.nullcontext())
        expected = ek.check(text, "babelqueue", settings=settings_)
    copies: list[int] = []
    cuts: list[int] = []
    real_copy, real_cut = _json._neutral_copy, _json._cut_out

    def copied(raw: bytes) -> bytes:
        copies.append(len(raw))
        return real_copy(raw)

    def cut(raw: bytes, table: bytes | None, delete: bytes) -> bytes:
        cuts.append(len(raw))
        return real_cut(raw, table, delete)

    monkeypatch.setattr(_json, "_neutral_copy", copied)
    monkeypatch.setattr(_json, "_cut_out", cut)
    verdict = ek.check(text, "babelqueue", settings=settings_)
    assert copies.count(len(text)) == 1
    assert cuts.count(len(text)) == 1
    assert (verdict.ok, verdict.violations, verdict.warnings) == (
        expected.ok,
        expected.violations,
        expected.warnings,
    )
    assert verdict.warnings or verdict.violations
    assert _json._READING.get() is None  # the reading ends with the check


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='a"\\1eN{}[]:, \n', max_size=80), st.booleans())
def test_a_reading_s_readers_read_what_each_would_alone(text: str, outline: bool) -> None:
    # Any text (JSON or not): what each reader a reading knows reads of it within the reading
    # (the strings cut out once, of the bytes any reader keeps) is what it reads alone.
    raw = ('"\\",' + text).encode() * 300  # past the few strings cut at their quotes
    readers = [
        (None, _json._STRUCTURE_ONLY),
        (_json._NUMBER_SKELETON, _json._NOT_NUMBER_SKELETON),
    ]
    if outline:
        readers.append((None, _json.OUTLINE_ONLY))
    alone = [_json._outside(raw, table, delete) for table, delete in readers]
    with _json.one_reading(raw, numbers=True, outline=outline):
        shared = [_json._outside(raw, table, delete) for table, delete in readers]
    assert shared == alone


@pytest.mark.parametrize("spec", ["babelqueue", "matrix", "auto"])
def test_a_large_text_s_reading_holds_nothing_while_validation_builds_its_tree(
    monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    # Deep arrays: what the readers keep outside the strings is nearly all of the text. The
    # reading lets its copy go before validation builds its tree (the number proof, else
    # check, releases it), so the peak is the one without the reading.
    items = b",".join([b"[[[[[[[[1]]]]]]]]"] * 30_000)
    if spec == "matrix":
        raw = b'{"op":"fs.write","payload":{"a":[' + items + b"]}}"
    else:
        raw = _ESCAPED_HEAD + items + b"]}}"
    assert ek.check(raw, spec).ok
    shared = peak_memory(lambda: ek.check(raw, spec))
    with monkeypatch.context() as patched:
        patched.setattr(_check, "one_reading", lambda raw, **_: contextlib.nullcontext())
        alone = peak_memory(lambda: ek.check(raw, spec))
    assert shared < alone + len(raw) // 4


@pytest.mark.parametrize("duplicates", ["allow", "refuse"])
def test_under_auto_a_large_text_s_escapes_are_neutralised_once(
    monkeypatch: pytest.MonkeyPatch, duplicates: str
) -> None:
    # Detection's shallow reading builds little, so the reading is kept through it: the number
    # proof of the BabelQueue message it names shares the depth scan's neutral copy.
    objects = (b'{"\\u0061":%d,"a\\"":%d,"a":0}' % (i, i) for i in range(4_000))
    text = _ESCAPED_HEAD + b",".join(objects) + b',{"b":9007199254740993}]}}'
    settings_ = ek.Settings(duplicate_keys=duplicates)  # type: ignore[arg-type]
    expected = ek.check(text, "babelqueue", settings=settings_)
    copies: list[int] = []
    real_copy = _json._neutral_copy

    def copied(raw: bytes) -> bytes:
        copies.append(len(raw))
        return real_copy(raw)

    monkeypatch.setattr(_json, "_neutral_copy", copied)
    verdict = ek.check(text, "auto", settings=settings_)
    assert copies.count(len(text)) == 1
    assert (verdict.spec, verdict.violations, verdict.warnings) == (
        "babelqueue",
        expected.violations,
        expected.warnings,
    )
