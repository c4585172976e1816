"""One error contract: every producing call refuses bad content with ``ProducerError``.

Each case is a producing call given content that no valid message holds; the refusal is a
``ProducerError`` (a ``ValueError``, never pydantic's ``ValidationError``) whose ``violations``
name the rule ids and JSON pointers a consumer's :func:`envelopekit.check` would use.
"""

from __future__ import annotations

import copy
import datetime
import importlib
import inspect
import json
import math
import pickle
import pkgutil
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import envelopekit
from envelopekit import _errors
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxErrorCode, MxErrorPayload, MxRequest
from envelopekit.som import SomEnvelope, TellingEvent
from tests.som._corpus import DATA as SOM_DATA

URN = "urn:babel:orders:created"
INT64_MAX = 2**63 - 1
W3C_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SOM_SETTINGS = envelopekit.Settings(som_system_id="ncs-nyc-01", som_system_type="ncs")
STORY = json.loads((SOM_DATA / "examples/story-context/tags.json").read_bytes())
TELLING = json.loads((SOM_DATA / "examples/telling/started.json").read_bytes())


class Holder(BaseModel):
    """A user's own payload model, holding whatever its field is given."""

    value: Any = None


class _BrokenZone(datetime.tzinfo):
    """A time zone whose offset is no ``timedelta``: ``utcoffset()`` raises ``TypeError``."""

    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return 5  # type: ignore[return-value]

    def dst(self, dt: datetime.datetime | None) -> None:
        return None

    def tzname(self, dt: datetime.datetime | None) -> str:
        return "broken"


def _babel() -> BabelEnvelope[dict[str, Any]]:
    return BabelEnvelope.create(URN, {"order_id": 1})


def _som() -> SomEnvelope[Any]:
    return SomEnvelope.create("story.context", STORY, settings=SOM_SETTINGS)


def _request() -> MxRequest[Any]:
    return MxRequest.create("fs.list", {}, expect_reply=True)


Call = Callable[[], object]
CASES: list[tuple[str, Call, list[tuple[str, str]]]] = [
    # BabelEnvelope.create
    (
        "create-nan",
        lambda: BabelEnvelope.create(URN, {"x": math.nan}),
        [("number.non_finite", "/data/x")],
    ),
    (
        "create-infinity-nested",
        lambda: BabelEnvelope.create(URN, {"a": {"b": [1, math.inf]}}),
        [("number.non_finite", "/data/a/b/1")],
    ),
    (
        "create-datetime",
        lambda: BabelEnvelope.create(URN, {"at": datetime.datetime(2026, 1, 2)}),
        [("json.invalid", "/data/at")],
    ),
    (
        "create-decimal",
        lambda: BabelEnvelope.create(URN, {"n": [Decimal("1.5")]}),
        [("json.invalid", "/data/n/0")],
    ),
    (
        "create-non-string-key",
        lambda: BabelEnvelope.create(URN, {"m": {1: "x"}}),
        [("json.invalid", "/data/m")],
    ),
    (
        "create-lone-surrogate",
        lambda: BabelEnvelope.create(URN, {"s": "\udcff"}),
        [("json.invalid", "/data/s")],
    ),
    (
        "create-beyond-int64",
        lambda: BabelEnvelope.create(URN, {"x": 2**64}),
        [("number.out_of_range", "/data/x")],
    ),
    (
        "create-bad-trace-id",
        lambda: BabelEnvelope.create(URN, {}, trace_id="trace-xyz"),
        [("message-envelope.format.uuid", "/trace_id")],
    ),
    (
        "create-trace-id-not-a-string",
        lambda: BabelEnvelope.create(URN, {}, trace_id=7),  # type: ignore[call-overload]
        [("message-envelope.type", "/trace_id")],
    ),
    (
        "create-queue-not-a-string",
        lambda: BabelEnvelope.create(URN, {}, queue=3),  # type: ignore[call-overload]
        [("message-envelope.type", "/meta/queue")],
    ),
    ("create-blank-urn", lambda: BabelEnvelope.create(" \t", {}), [("urn.missing", "/job")]),
    (
        "create-typed-data-no-json-writes",
        lambda: BabelEnvelope[Holder].create(URN, Holder(value=object())),
        [("json.invalid", "/data")],
    ),
    (
        "create-typed-data-bytes-not-utf8",
        lambda: BabelEnvelope[Holder].create(URN, Holder(value=b"\xff\xfe")),
        [("json.invalid", "/data")],
    ),
    # BabelEnvelope.child
    (
        "child-nan",
        lambda: _babel().child("urn:babel:orders:shipped", {"x": -math.inf}),
        [("number.non_finite", "/data/x")],
    ),
    (
        "child-non-json",
        lambda: _babel().child("urn:babel:orders:shipped", {"x": {1, 2}}),
        [("json.invalid", "/data/x")],
    ),
    (
        "child-data-not-a-mapping",
        lambda: _babel().child("urn:babel:orders:shipped", [1, 2]),  # type: ignore[arg-type]
        [("message-envelope.type", "/data")],
    ),
    (
        "child-data-none",
        lambda: _babel().child("urn:babel:orders:shipped", None),  # type: ignore[arg-type]
        [("message-envelope.type", "/data")],
    ),
    # BabelEnvelope.retried
    (
        "retried-past-int64",
        lambda: _babel().model_copy(update={"attempts": INT64_MAX}).retried(),
        [("message-envelope.maximum", "/attempts")],
    ),
    # BabelEnvelope.dead_lettered
    (
        "dead_lettered-unknown-reason",
        lambda: _babel().dead_lettered("max_attempts"),  # type: ignore[arg-type]
        [("message-envelope.enum", "/dead_letter/reason")],
    ),
    (
        "dead_lettered-nan-failed-at",
        lambda: _babel().dead_lettered("failed", failed_at=math.nan),  # type: ignore[arg-type]
        [("message-envelope.type", "/dead_letter/failed_at")],
    ),
    (
        "dead_lettered-queue-not-a-string",
        lambda: _babel().dead_lettered("failed", original_queue=3),  # type: ignore[arg-type]
        [("message-envelope.type", "/dead_letter/original_queue")],
    ),
    (
        "dead_lettered-reason-not-a-string",
        lambda: _babel().dead_lettered(["failed"]),  # type: ignore[arg-type]
        [("message-envelope.type", "/dead_letter/reason")],
    ),
    (
        "dead_lettered-error-not-a-string",
        lambda: _babel().dead_lettered("failed", error=404),  # type: ignore[arg-type]
        [("message-envelope.type", "/dead_letter/error")],
    ),
    (
        "dead_lettered-exception-not-a-string",
        lambda: _babel().dead_lettered("failed", exception=["KeyError"]),  # type: ignore[arg-type]
        [("message-envelope.type", "/dead_letter/exception")],
    ),
    (
        "dead_lettered-queue-lone-surrogate",
        lambda: _babel().dead_lettered("failed", original_queue="orders-\udcff"),
        [("json.invalid", "/dead_letter/original_queue")],
    ),
    # SomEnvelope.create
    (
        "som-create-message-type-not-a-string",
        lambda: SomEnvelope.create(5, STORY, settings=SOM_SETTINGS),  # type: ignore[call-overload]
        [("envelope.type", "/message_type")],
    ),
    (
        "som-create-message-type-a-list",
        lambda: SomEnvelope.create(  # type: ignore[call-overload]
            ["story.context"], STORY, settings=SOM_SETTINGS, allow_unknown=True
        ),
        [("envelope.type", "/message_type")],
    ),
    (
        "som-create-payload-not-an-object",
        lambda: SomEnvelope.create("story.context", 5, settings=SOM_SETTINGS),  # type: ignore[call-overload]
        [("envelope.type", "/payload")],
    ),
    (
        "som-create-unknown-payload-not-an-object",
        lambda: SomEnvelope.create("x.custom", [1], settings=SOM_SETTINGS, allow_unknown=True),  # type: ignore[call-overload]
        [("envelope.type", "/payload")],
    ),
    (
        "som-create-payload-of-another-family",
        lambda: SomEnvelope.create(  # type: ignore[call-overload]
            "story.context", TellingEvent.model_validate(TELLING), settings=SOM_SETTINGS
        ),
        [("payload.family_unexpected", "/payload")],
    ),
    (
        "som-create-timestamp-of-a-broken-zone",
        lambda: SomEnvelope.create(
            "story.context",
            STORY,
            settings=SOM_SETTINGS,
            timestamp=datetime.datetime(2026, 1, 2, tzinfo=_BrokenZone()),
        ),
        [("envelope.format.date-time", "/timestamp")],
    ),
    (
        "som-follow-up-message-type-not-a-string",
        lambda: _som().follow_up(5, STORY, settings=SOM_SETTINGS),  # type: ignore[call-overload]
        [("envelope.type", "/message_type")],
    ),
    # MxRequest.create
    (
        "mx-create-op-not-a-string",
        lambda: MxRequest.create(None, {}),  # type: ignore[call-overload]
        [("request.type", "/op")],
    ),
    (
        "mx-create-typed-payload-no-json-writes",
        lambda: MxRequest.create("fs.list", Holder(value=object())),
        [("json.invalid", "/payload")],
    ),
    (
        "mx-create-typed-payload-beyond-int64",
        lambda: MxRequest.create("fs.list", Holder(value=[1, 2**70])),
        [("number.out_of_range", "/payload/value/1")],
    ),
    (
        "mx-create-typed-payload-nan",
        lambda: MxRequest.create("fs.list", Holder(value=math.nan)),
        [("number.non_finite", "/payload/value")],
    ),
    (
        "mx-create-parametrised-payload-infinity",
        lambda: MxRequest[Holder].create("fs.list", Holder(value=-math.inf)),
        [("number.non_finite", "/payload/value")],
    ),
    (
        "mx-create-correlation-id-not-a-string",
        lambda: MxRequest.create("fs.list", {}, expect_reply=True, correlation_id=7),  # type: ignore[call-overload]
        [("request.type", "/correlationId")],
    ),
    (
        "mx-create-nan",
        lambda: MxRequest.create("fs.list", {"x": math.nan}),
        [("number.non_finite", "/payload/x")],
    ),
    (
        "mx-create-non-json",
        lambda: MxRequest.create("fs.list", {"x": [object()]}),  # type: ignore[list-item]
        [("json.invalid", "/payload/x/0")],
    ),
    (
        "mx-create-out-of-range",
        lambda: MxRequest.create("fs.list", {"x": 2**70}),
        [("number.out_of_range", "/payload/x")],
    ),
    (
        "mx-create-negative-lamport",
        lambda: MxRequest.create("fs.list", {}, lamport=-1),
        [("request.minimum", "/lamport")],
    ),
    (
        "mx-create-reply-to-not-a-string",
        lambda: MxRequest.create("fs.list", {}, expect_reply=True, reply_to=3),  # type: ignore[call-overload]
        [("request.type", "/replyTo")],
    ),
    (
        "mx-create-bad-trace-id",
        lambda: MxRequest.create("fs.list", {}, trace_id=W3C_TRACE.upper()),
        [("trace_context.format", "/traceId")],
    ),
    (
        "mx-create-zero-parent-span",
        lambda: MxRequest.create("fs.list", {}, trace_id=W3C_TRACE, parent_span_id="0" * 16),
        [("trace_context.format", "/parentSpanId")],
    ),
    # MxRequest.reply
    (
        "mx-reply-infinity",
        lambda: _request().reply({"ok": True, "size": math.inf}),
        [("number.non_finite", "/payload/size")],
    ),
    (
        "mx-reply-non-json",
        lambda: _request().reply({"ok": True, "at": datetime.date(2026, 1, 2)}),  # type: ignore[dict-item]
        [("json.invalid", "/payload/at")],
    ),
    (
        "mx-reply-typed-payload-infinity",
        lambda: _request().reply(Holder(value={"size": math.inf})),
        [("number.non_finite", "/payload/value/size")],
    ),
    (
        "mx-reply-typed-payload-bytes-not-utf8",
        lambda: _request().reply(Holder(value=b"\xff")),
        [("json.invalid", "/payload")],
    ),
    (
        "mx-reply-from-not-a-string",
        lambda: _request().reply({"ok": True}, from_=3),  # type: ignore[call-overload]
        [("response.type", "/from")],
    ),
    # MxRequest.fail
    (
        "mx-fail-nan-details",
        lambda: _request().fail(MxErrorCode.NOT_FOUND, "gone", details={"a": math.nan}),
        [("number.non_finite", "/payload/details/a")],
    ),
    (
        "mx-fail-non-json-details",
        lambda: _request().fail(MxErrorCode.NOT_FOUND, "gone", details=[b"raw"]),  # type: ignore[list-item]
        [("json.invalid", "/payload/details/0")],
    ),
    (
        "mx-fail-unknown-code",
        lambda: _request().fail("NOT_A_CODE", "gone"),  # type: ignore[arg-type]
        [("error-payload.enum", "/payload/code")],
    ),
    (
        "mx-fail-code-not-a-string",
        lambda: _request().fail(404, "gone"),  # type: ignore[arg-type]
        [("error-payload.enum", "/payload/code")],
    ),
    (
        "mx-fail-ok",
        lambda: _request().fail(MxErrorCode.OK, "fine"),
        [("error_code.inconsistent", "/payload/code")],
    ),
    (
        "mx-fail-status-above-599",
        lambda: _request().fail(MxErrorCode.INTERNAL, "x", status_code=600),
        [("error-payload.maximum", "/payload/statusCode")],
    ),
    (
        "mx-fail-status-below-100",
        lambda: _request().fail(MxErrorCode.INTERNAL, "x", status_code=99),
        [("error-payload.minimum", "/payload/statusCode")],
    ),
    (
        "mx-fail-status-a-bool",
        lambda: _request().fail(MxErrorCode.INTERNAL, "x", status_code=True),
        [("error-payload.type", "/payload/statusCode")],
    ),
    (
        "mx-fail-status-a-string",
        lambda: _request().fail(MxErrorCode.INTERNAL, "x", status_code="500"),  # type: ignore[arg-type]
        [("error-payload.type", "/payload/statusCode")],
    ),
    (
        "mx-error-payload-status-above-599",
        lambda: MxErrorPayload.of(MxErrorCode.INTERNAL, "x", status_code=1000),
        [("error-payload.maximum", "/statusCode")],
    ),
    (
        "mx-fail-error-not-a-string",
        lambda: _request().fail(MxErrorCode.NOT_FOUND, 3),  # type: ignore[arg-type]
        [("error-payload.type", "/payload/error")],
    ),
]


@pytest.mark.parametrize(("call", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_producing_call_refuses_bad_content_with_rules_and_pointers(
    call: Call, expected: list[tuple[str, str]]
) -> None:
    with pytest.raises(envelopekit.ProducerError) as caught:
        call()
    refused = caught.value
    assert isinstance(refused, ValueError) and not isinstance(refused, ValidationError)
    assert [(v.rule, v.pointer) for v in refused.violations] == expected
    for found in refused.violations:
        assert envelopekit.rules.is_rule(found.rule), found.rule
        assert found.pointer in str(refused) or found.message in str(refused)


def test_the_valid_counterparts_produce() -> None:
    # The same calls with good content pass, so each refusal above is about the content.
    env = BabelEnvelope.create(URN, {"x": 1.5, "a": {"b": [1, 2]}}, trace_id=None, queue="q")
    env.child("urn:babel:orders:shipped", {"x": 0}).retried().dead_lettered("failed").redriven()
    request = MxRequest.create("fs.list", {"x": 2**53 - 1}, lamport=0, trace_id=W3C_TRACE)
    answered = _request()
    answered.reply({"ok": True, "size": 1})
    answered.fail(MxErrorCode.NOT_FOUND, "gone", details={"a": 1})
    assert envelopekit.check(env.to_json(), spec="babelqueue").ok
    assert envelopekit.check(request.to_json(), spec="matrix").ok


# --- the exceptions, in one module --------------------------------------------------------------

# Raised and caught inside the command line (each becomes exit status 2); never public.
# Exceptions that never leave the SDK: the command line's own (caught by its main) and control
# flow inside one private function (each has a test that it does not escape).
INTERNAL = {
    "envelopekit._cli_input.UsageError",
    "envelopekit._cli_input.InputError",
    "envelopekit._cli_input.InputChanged",
    "envelopekit._cli_jobs.WorkerError",
    "envelopekit._cli.OutputError",
    "envelopekit._cli_redrive.RedriveUsageError",
    "envelopekit._cli_redrive._KeptGone",  # a BrokenPipeError carried out of the reading
    "envelopekit._duplicates._NotJson",  # the scan stops: no finding (test_duplicates)
    "envelopekit._json._Spent",  # a walk spent its budget: the text is proven (test_json_numbers)
    "envelopekit._check._NotRead",  # detection asked of a member not read: the text is parsed
}


def _defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    modules = [envelopekit.__name__] + [
        info.name
        for info in pkgutil.walk_packages(envelopekit.__path__, envelopekit.__name__ + ".")
        if info.name != "envelopekit.__main__"
    ]
    for name in modules:
        for value in vars(importlib.import_module(name)).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{value.__qualname__}"] = value
    return found


def test_every_exception_lives_in_errors_and_is_exported() -> None:
    defined = _defined_exceptions()
    public = {name: cls for name, cls in defined.items() if name not in INTERNAL}
    assert set(defined) >= INTERNAL
    assert public, "no exception found: the walk is broken"
    for name, cls in public.items():
        assert cls.__module__ == "envelopekit._errors", f"{name} is defined outside _errors.py"
        assert cls.__name__ in vars(envelopekit)["__all__"], (
            f"{name} is not exported from envelopekit"
        )
        assert getattr(envelopekit, cls.__name__) is cls
        assert issubclass(cls, envelopekit.EnvelopekitError)
        assert cls.__name__ in (_errors.__doc__ or ""), f"{name} is missing from the tree"
    assert set(_errors.__all__) == {cls.__name__ for cls in public.values()}


def test_cli_internal_errors_are_not_public() -> None:
    packages = ["envelopekit", "envelopekit.babelqueue", "envelopekit.som", "envelopekit.matrix"]
    exported = {n for p in packages for n in importlib.import_module(p).__all__}
    assert not {name.rsplit(".", 1)[1] for name in INTERNAL} & exported


@pytest.mark.parametrize(
    "name",
    [
        "DecryptError",
        "InvalidEnvelopeError",
        "InvalidPayloadError",
        "SchemaRegistryError",
        "SeenStoreUnavailable",
        "UnknownUrnError",
    ],
)
def test_babelqueue_still_exports_its_exceptions(name: str) -> None:
    # The exports are read at run time (envelopekit/_exports.py): `__all__` is not static.
    bq = importlib.import_module("envelopekit.babelqueue")
    assert name in bq.__all__
    assert getattr(bq, name) is getattr(envelopekit, name)


_VIOLATION = envelopekit.Violation("data.decrypt_failed", "/data/email", "cannot open", "policy")
# Each public exception as envelopekit raises it (the walk below holds the list complete).
RAISED: dict[str, envelopekit.EnvelopekitError] = {
    "ProducerError": envelopekit.ProducerError.of([_VIOLATION]),
    "InvalidPayloadError": envelopekit.InvalidPayloadError(URN, [_VIOLATION]),
    "InvalidEnvelopeError": envelopekit.InvalidEnvelopeError(URN, "Tenanted", [_VIOLATION]),
    "SchemaRegistryError": envelopekit.SchemaRegistryError("no schema for urn:a"),
    "DecryptError": envelopekit.DecryptError(_VIOLATION),
    "UnknownUrnError": envelopekit.UnknownUrnError(URN),
    "SeenStoreUnavailable": envelopekit.SeenStoreUnavailable(
        "claim", "m-1", ConnectionError("refused")
    ),
    "EnvelopekitError": envelopekit.EnvelopekitError("boom"),
}


def test_every_public_exception_is_in_the_pickling_cases() -> None:
    assert set(RAISED) == set(_errors.__all__)


@pytest.mark.parametrize("name", sorted(RAISED))
@pytest.mark.parametrize(
    "how",
    [
        pytest.param(lambda error: pickle.loads(pickle.dumps(error)), id="pickle"),
        pytest.param(copy.copy, id="copy"),
        pytest.param(copy.deepcopy, id="deepcopy"),
    ],
)
def test_an_exception_survives_pickling_and_copying_whole(
    name: str, how: Callable[[Any], Any]
) -> None:
    error = RAISED[name]
    vars(error)["__notes__"] = ["while sending order 7"]  # add_note's list (3.11+)
    try:
        again = how(error)
    finally:
        del vars(error)["__notes__"]
    assert type(again) is type(error)
    assert again.args == error.args and str(again) == str(error)
    assert {**vars(again)} == {**vars(error), "__notes__": ["while sending order 7"]}


def _produce_in_a_worker(urn: str) -> None:
    BabelEnvelope.create(urn, {"order_id": 1})


def test_a_producer_error_raised_in_a_process_pool_reaches_the_caller_whole() -> None:
    with ProcessPoolExecutor(max_workers=1) as pool:
        future = pool.submit(_produce_in_a_worker, "   ")
        with pytest.raises(envelopekit.ProducerError) as caught:
            future.result(timeout=60)
    with pytest.raises(envelopekit.ProducerError) as here:
        _produce_in_a_worker("   ")
    assert caught.value.violations == here.value.violations != []
    assert str(caught.value) == str(here.value)
