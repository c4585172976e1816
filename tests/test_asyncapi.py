"""The AsyncAPI 3.0 documents: valid against the official schema, current, and typing the messages.

Every document is validated against the AsyncAPI 3.0.0 JSON Schema of ``@asyncapi/specs``
(vendored in ``tests/data/asyncapi``), which refuses broken ones. Its message payloads are
then used as schemas on real messages (the BabelQueue fixtures and routed envelopes, the SOM
corpus, the Matrix cases): each valid message matches exactly one message of its channel, the
one its URN, ``message_type`` or op names, and is judged as the shipped Draft-07 schema judges
it. The components are the shipped Draft-07 schemas, lifted and nothing else.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator
from pydantic import BaseModel
from referencing import Registry
from referencing.jsonschema import DRAFT7

import envelopekit as ek
from envelopekit import _asyncapi, _schema
from envelopekit._cli import main
from envelopekit.babelqueue import BabelEnvelope, Router
from envelopekit.som import PAYLOAD_MODELS
from tests.som._corpus import negative_envelope, negative_files, positive_envelope, positive_files
from tests.som._corpus import wrap as som_wrap
from tests.support import asyncapi_routes
from tests.test_cli import run
from tests.test_schema import DATA, FIXTURES, ROOT

SPECS = list(_asyncapi.ASYNCAPI_SPECS)
SHIPPED = ROOT / "src" / "envelopekit" / "asyncapi"
DRAFT_07 = ROOT / "src" / "envelopekit" / "schemas" / "draft-07"
ASYNCAPI_SCHEMA = json.loads((DATA / "asyncapi" / "schemas" / "3.0.0.json").read_bytes())
ASYNCAPI = Draft7Validator(ASYNCAPI_SCHEMA, format_checker=Draft7Validator.FORMAT_CHECKER)
MATRIX_CASES = json.loads((DATA / "matrix" / "cases.json").read_bytes())["cases"]


def _problems(document: dict[str, Any]) -> list[str]:
    return [
        f"{error.json_path}: {error.message[:200]}"
        for error in ASYNCAPI.iter_errors(json.loads(_asyncapi.render(document)))
    ]


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for token in ref[2:].split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


class Judge:
    """The message payloads of one document as Draft-07 validators, by message key."""

    URI = "urn:envelopekit-test:asyncapi"

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.registry: Registry[Any] = Registry().with_resource(
            self.URI, DRAFT7.create_resource(document)
        )
        self._validators: dict[str, Draft7Validator] = {}

    def validator(self, key: str) -> Draft7Validator:
        if key not in self._validators:
            self._validators[key] = Draft7Validator(
                {"$ref": f"{self.URI}#/components/messages/{key}/payload"},
                registry=self.registry,
                format_checker=Draft7Validator.FORMAT_CHECKER,
            )
        return self._validators[key]

    def accepts(self, key: str, instance: Any) -> bool:
        return self.validator(key).is_valid(instance)

    def matching(self, instance: Any, channel: str | None = None) -> list[str]:
        """The keys of the messages (of ``channel``, else all) that accept ``instance``."""
        if channel is None:
            keys = list(self.document["components"]["messages"])
        else:
            refs = self.document["channels"][channel]["messages"].values()
            keys = [ref["$ref"].rpartition("/")[2] for ref in refs]
        return [key for key in keys if self.accepts(key, instance)]


def _shipped_07(spec: str, name: str) -> Draft7Validator:
    schema = json.loads((DRAFT_07 / spec / f"{name}.schema.json").read_bytes())
    return Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)


# --- the documents against the official AsyncAPI 3.0.0 schema --------------------------------


def _routed() -> dict[str, Any]:
    return ek.asyncapi_document(
        "babelqueue",
        router=asyncapi_routes.router,
        urns={"urn:babel:extra:address": asyncapi_routes.Address, "urn:babel:extra:any": None},
        queues=["orders", "users"],
    )


def _topics() -> dict[str, Any]:
    return ek.asyncapi_document(
        "som",
        topics={
            "som.newsroom": ["story.context", "telling.started", "telling.ended"],
            "som.assets": ["asset.ingested"],
        },
    )


def _ops() -> dict[str, Any]:
    return ek.asyncapi_document("matrix", ops=["ExpandDir", "fs.list", "$join"])


DOCUMENTS: dict[str, Callable[[], dict[str, Any]]] = {
    **{spec: functools.partial(ek.asyncapi_document, spec) for spec in SPECS},
    "babelqueue-routed": _routed,
    "som-topics": _topics,
    "matrix-ops": _ops,
}


@pytest.mark.parametrize("name", DOCUMENTS)
def test_document_is_valid_asyncapi_3_0_0(name: str) -> None:
    document = DOCUMENTS[name]()
    assert document["asyncapi"] == "3.0.0"
    assert _problems(document) == []


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_reference_resolves_inside_the_document(name: str) -> None:
    document = DOCUMENTS[name]()
    refs = set(_refs(document))
    assert refs
    for ref in refs:
        assert _resolve(document, ref) is not None, ref
    # An operation's messages are its channel's (AsyncAPI 3.0: a subset of them).
    for operation in document["operations"].values():
        channel = operation["channel"]["$ref"]
        for message in operation["messages"]:
            assert message["$ref"].startswith(channel + "/messages/")
        if "reply" in operation:
            reply = operation["reply"]
            for message in reply["messages"]:
                assert message["$ref"].startswith(reply["channel"]["$ref"] + "/messages/")


def _mutate(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(document: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = document
        for token in parents:
            node = node[token]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return apply


_DELETE = object()
BROKEN: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "no-info": ("matrix", _mutate("info", _DELETE)),
    "info-without-version": ("som", _mutate("info/version", _DELETE)),
    "asyncapi-2": ("som", _mutate("asyncapi", "2.6.0")),
    "action-publish": ("matrix", _mutate("operations/request/action", "publish")),
    "operation-without-channel": ("babelqueue", _mutate("operations/receive/channel", _DELETE)),
    "reply-address-not-an-expression": (
        "matrix",
        _mutate("operations/request/reply/address/location", "replyTo"),
    ),
    "correlation-id-location-off": (
        "matrix",
        _mutate("components/correlationIds/correlationId/location", "$message.body#/x"),
    ),
    "message-with-unknown-key": ("babelqueue", _mutate("components/messages/envelope/body", {})),
    "channel-with-unknown-key": ("som", _mutate("channels/other/subscribe", {})),
    "payload-not-a-schema": (
        "babelqueue",
        _mutate("components/messages/envelope/payload", {"type": 5}),
    ),
    "schema-not-a-schema": (
        "som",
        _mutate("components/schemas/som.StoryContext/required", "headline"),
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_document_is_refused(case: str) -> None:
    spec, breaking = BROKEN[case]
    document = copy.deepcopy(ek.asyncapi_document(spec))
    assert _problems(document) == []
    breaking(document)
    assert _problems(document), f"{case} was not refused"


# --- shipped, deterministic, the components the schemas -------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_shipped_document_is_current(spec: str) -> None:
    path = SHIPPED / f"{spec}.asyncapi.json"
    assert path.is_file(), f"{path} is missing: run `make schemas`"
    assert path.read_bytes() == _asyncapi.render(ek.asyncapi_document(spec)), (
        f"{path.relative_to(ROOT)} is stale: run `make schemas`"
    )


def test_shipped_documents_are_exactly_the_specs() -> None:
    shipped = {p.name for p in SHIPPED.iterdir()}
    assert shipped == {f"{spec}.asyncapi.json" for spec in SPECS}


@pytest.mark.parametrize("name", DOCUMENTS)
def test_same_models_same_bytes(name: str) -> None:
    assert _asyncapi.render(DOCUMENTS[name]()) == _asyncapi.render(DOCUMENTS[name]())


LIFTED = {"babelqueue": ["envelope"], "som": ["envelope"], "matrix": ["request", "response"]}


def _unroot(node: Any, spec: str) -> Any:
    if isinstance(node, list):
        return [_unroot(item, spec) for item in node]
    if not isinstance(node, dict):
        return node
    prefix = f"#/components/schemas/{spec}."
    return {
        key: (
            "#/definitions/" + value.removeprefix(prefix)
            if key == "$ref" and isinstance(value, str) and value.startswith(prefix)
            else _unroot(value, spec)
        )
        for key, value in node.items()
    }


@pytest.mark.parametrize("spec", SPECS)
def test_components_are_the_shipped_draft_07_schemas(spec: str) -> None:
    schemas = ek.asyncapi_document(spec)["components"]["schemas"]
    expected_keys: set[str] = set()
    for name in LIFTED[spec]:
        shipped = json.loads((DRAFT_07 / spec / f"{name}.schema.json").read_bytes())
        component = dict(schemas[f"{spec}.{name}"])
        assert component.pop("$comment") == f"envelopekit's {shipped['$id']}"
        rebuilt = _unroot(component, spec)
        definitions = shipped.get("definitions", {})
        if definitions:
            rebuilt["definitions"] = {d: _unroot(schemas[f"{spec}.{d}"], spec) for d in definitions}
        del shipped["$schema"], shipped["$id"]
        assert rebuilt == shipped
        expected_keys |= {f"{spec}.{name}"} | {f"{spec}.{d}" for d in definitions}
    # Nothing hand-written among them.
    assert set(schemas) == expected_keys


# --- BabelQueue ------------------------------------------------------------------------------


def test_babelqueue_generic_document_takes_every_fixture_envelope() -> None:
    judge = Judge(ek.asyncapi_document("babelqueue"))
    envelope = _shipped_07("babelqueue", "envelope")
    for path in FIXTURES:
        fixture = json.loads(path.read_bytes())
        document = fixture.get("input", fixture)
        if not isinstance(document, dict):
            continue
        assert judge.accepts("envelope", document) == envelope.is_valid(document), path.name
        assert judge.accepts("deadLetter", document) == (
            envelope.is_valid(document) and "dead_letter" in document
        ), path.name


def test_babelqueue_channels_are_the_queues_and_their_dead_letter_queues() -> None:
    document = _routed()
    assert {key: channel["address"] for key, channel in document["channels"].items()} == {
        "orders": "orders",
        "orders.dlq": "orders.dlq",
        "users": "users",
        "users.dlq": "users.dlq",
    }
    urns = [m["name"] for m in document["components"]["messages"].values()]
    assert urns == [
        "urn:babel:orders:created",
        "urn:babel:users:registered",
        "urn:babel:audit:ping",
        "urn:babel:extra:address",
        "urn:babel:extra:any",
        "deadLetter",
    ]
    assert set(document["channels"]["orders.dlq"]["messages"]) == {"deadLetter"}
    assert "`dead_letter`" in document["operations"]["receive.orders"]["summary"]
    assert "5 deliveries" in document["operations"]["receive.orders"]["summary"]


def test_babelqueue_generic_channels_are_parameterised() -> None:
    channels = ek.asyncapi_document("babelqueue")["channels"]
    assert channels["queue"]["address"] == "{queue}"
    assert channels["queue.dlq"]["address"] == "{queue}.dlq"
    suffixed = ek.asyncapi_document("babelqueue", router=Router(dlq_suffix="-dead"))
    assert suffixed["channels"]["queue-dead"]["address"] == "{queue}-dead"


class Pair(BaseModel):
    pair: tuple[int, str]  # prefixItems: no Draft-07 spelling in our converter


def _order(**data: Any) -> dict[str, Any]:
    body = {"order_id": 7, "total_cents": 1250, "ship_to": {"city": "Lyon", "postcode": "69001"}}
    body.update(data)
    wire: dict[str, Any] = BabelEnvelope.create(
        "urn:babel:orders:created", body, queue="orders"
    ).to_wire()
    return wire


def test_babelqueue_data_is_typed_by_the_urn_model() -> None:
    judge = Judge(_routed())
    assert judge.matching(_order(), "orders") == ["urn.babel.orders.created"]
    # The model's own constraints, nested model included, judge `data`.
    assert judge.matching(_order(order_id=0), "orders") == []
    assert judge.matching(_order(ship_to={"city": "Lyon", "postcode": "x"}), "orders") == []
    assert judge.matching(_order(total_cents="12"), "orders") == []
    # The `urn` alias of `job` is held to the same URN.
    aliased = _order()
    aliased["urn"] = aliased.pop("job")
    assert judge.matching(aliased, "orders") == ["urn.babel.orders.created"]


ORDERS, PING = "urn:babel:orders:created", "urn:babel:audit:ping"


@pytest.mark.parametrize(
    ("identity", "routed"),
    [
        pytest.param({"job": ORDERS}, ORDERS, id="job"),
        pytest.param({"urn": ORDERS}, ORDERS, id="urn-alias"),
        pytest.param({"job": "", "urn": ORDERS}, ORDERS, id="empty-job-and-urn"),
        pytest.param({"job": " \t\r\n", "urn": ORDERS}, ORDERS, id="blank-job-and-urn"),
        pytest.param({"job": ORDERS, "urn": PING}, ORDERS, id="job-over-another-urn"),
        pytest.param({"job": PING, "urn": ORDERS}, PING, id="another-job-over-urn"),
        pytest.param({"job": "\u00a0", "urn": ORDERS}, "\u00a0", id="job-not-ascii-blank"),
    ],
)
def test_babelqueue_message_is_the_one_of_the_urn_the_envelope_is_routed_by(
    identity: dict[str, str], routed: str
) -> None:
    wire = _order()
    del wire["job"]
    wire.update(identity)
    verdict = ek.check(json.dumps(wire), spec="babelqueue")
    assert verdict.envelope is not None and verdict.envelope.job == routed
    keys = {ORDERS: "urn.babel.orders.created", PING: "urn.babel.audit.ping"}
    expected = [keys[routed]] if routed in keys else []
    assert Judge(_routed()).matching(wire, "orders") == expected


def test_babelqueue_untyped_urn_takes_any_object_and_other_urns_match_nothing() -> None:
    judge = Judge(_routed())
    ping = BabelEnvelope.create("urn:babel:audit:ping", {"anything": [1, 2]}).to_wire()
    assert judge.matching(ping, "orders") == ["urn.babel.audit.ping"]
    stranger = BabelEnvelope.create("urn:babel:nobody:home", {}).to_wire()
    assert judge.matching(stranger, "orders") == []


def test_babelqueue_dead_letter_message_is_the_envelope_with_its_block() -> None:
    judge = Judge(_routed())
    failed = BabelEnvelope.create("urn:babel:nobody:home", {"x": 1}, queue="orders")
    dead = failed.dead_lettered("unknown_urn", original_queue="orders").to_wire()
    assert judge.matching(dead, "orders.dlq") == ["deadLetter"]
    assert judge.matching(failed.to_wire(), "orders.dlq") == []


def test_babelqueue_router_without_models_and_urns_alone() -> None:
    document = ek.asyncapi_document("babelqueue", urns=["urn:babel:a:b", "urn:babel:c:d"])
    assert _problems(document) == []
    assert set(document["components"]["messages"]) == {
        "urn.babel.a.b",
        "urn.babel.c.d",
        "deadLetter",
    }


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"urns": ["urn:babel:a:b"], "router": asyncapi_routes.router}, None),
        ({"urns": ["urn:babel:orders:created"], "router": asyncapi_routes.router}, "twice"),
        ({"urns": [" "]}, "non-blank"),
        ({"queues": ["a", "a"]}, "twice"),
        ({"queues": ["a", "a.dlq"]}, "two channels"),
        ({"queues": ["{a}"]}, "braces"),
        ({"urns": ["urn:a", "urn.a"]}, "two messages"),
        ({"urns": {"urn:babel:pairs:made": Pair}}, "cannot be written in Draft-07"),
        ({"queues": ["orders", ""]}, "cannot be empty"),
    ],
)
def test_babelqueue_options_are_checked(options: dict[str, Any], match: str | None) -> None:
    if match is None:
        assert _problems(ek.asyncapi_document("babelqueue", **options)) == []
        return
    with pytest.raises(ValueError, match=match):
        ek.asyncapi_document("babelqueue", **options)


@pytest.mark.parametrize(
    "options",
    [
        {"queues": "orders"},
        {"urns": "urn:babel:a:b"},
        {"ops": "fs.list"},
        {"topics": {"som.x": "story.context"}},
    ],
    ids=["queues", "urns", "ops", "topics"],
)
def test_one_string_where_names_go_is_refused(options: dict[str, Any]) -> None:
    spec = "som" if "topics" in options else "matrix" if "ops" in options else "babelqueue"
    with pytest.raises(TypeError, match=r"not one string|not a string"):
        ek.asyncapi_document(spec, **options)


_NAMES = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


@settings(max_examples=15, deadline=None)
@given(
    urns=st.lists(_NAMES.filter(str.strip), min_size=1, max_size=3, unique=True),
    queues=st.lists(
        _NAMES.filter(lambda q: "{" not in q and "}" not in q), max_size=2, unique=True
    ),
)
def test_any_urns_and_queues_give_a_valid_document_or_a_clear_refusal(
    urns: list[str], queues: list[str]
) -> None:
    # Keys are sanitised and pointers escaped: `/`, `~`, spaces and non-ASCII in a name.
    try:
        document = ek.asyncapi_document("babelqueue", urns=urns, queues=queues)
    except ValueError as exc:
        assert "two " in str(exc)  # two names met on one key
        return
    assert _problems(document) == []
    judge = Judge(document)
    channel = next(iter(document["channels"]))
    for urn in urns:
        envelope = {**BabelEnvelope.create("urn:babel:a:b", {}).to_wire(), "job": urn}
        matched = judge.matching(envelope, channel)
        assert [document["components"]["messages"][key]["name"] for key in matched] == [urn]


# --- SOM -------------------------------------------------------------------------------------


def test_som_one_channel_and_message_per_known_type_and_the_other_families() -> None:
    document = ek.asyncapi_document("som")
    channels = document["channels"]
    assert {c["address"] for c in channels.values()} == {
        *(f"som.{t}" for t in PAYLOAD_MODELS),
        "som.{message_type}",
    }
    assert set(document["components"]["messages"]) == {*PAYLOAD_MODELS, "other"}
    assert channels["other"]["parameters"]["message_type"]["location"] == (
        "$message.payload#/message_type"
    )


@pytest.mark.parametrize("path", positive_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_som_corpus_message_matches_exactly_its_message_type(path: Path) -> None:
    envelope = positive_envelope(path)
    assert _SOM.matching(envelope) == [envelope["message_type"]]


@pytest.mark.parametrize("path", negative_files(), ids=lambda p: p.name)
def test_som_corpus_negative_is_judged_as_the_shipped_schema_judges_it(path: Path) -> None:
    envelope = negative_envelope(path)
    message_type = envelope.get("message_type")
    shipped = _SOM_ENVELOPE.is_valid(envelope)
    if message_type in PAYLOAD_MODELS:
        assert _SOM.accepts(message_type, envelope) == shipped
    assert bool(_SOM.matching(envelope)) == shipped


def test_som_unknown_family_is_the_open_message() -> None:
    envelope = som_wrap({"asset": {"id": 1}, "anything": [True]}, "asset.ingested")
    assert _SOM.matching(envelope) == ["other"]
    not_an_object = som_wrap([1], "asset.ingested")
    assert _SOM.matching(not_an_object) == []


def test_som_topics_group_message_types() -> None:
    document = _topics()
    assert {k: c["address"] for k, c in document["channels"].items()} == {
        "som.newsroom": "som.newsroom",
        "som.assets": "som.assets",
    }
    judge = Judge(document)
    story = positive_envelope(sorted(p for p in positive_files() if "story" in p.parent.name)[0])
    assert judge.matching(story, "som.newsroom") == ["story.context"]
    asset = som_wrap({"anything": 1}, "asset.ingested")
    assert judge.matching(asset, "som.assets") == ["asset.ingested"]
    assert judge.matching(asset, "som.newsroom") == []


@pytest.mark.parametrize(
    ("topics", "match"),
    [
        ({"news": ["story.context"]}, "begins with 'som.'"),
        ({"som.x": []}, "no message_type"),
        ({"som.x": ["Story.Context"]}, "not a SOM message_type"),
    ],
)
def test_som_topics_are_checked(topics: dict[str, list[str]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ek.asyncapi_document("som", topics=topics)


_SOM = Judge(ek.asyncapi_document("som"))
_SOM_ENVELOPE = _shipped_07("som", "envelope")


# --- Matrix ----------------------------------------------------------------------------------


def test_matrix_operation_reply_and_correlation_id() -> None:
    document = _ops()
    assert list(document["operations"]) == ["ExpandDir", "fs.list", "_join"]
    for operation in document["operations"].values():
        assert operation["action"] == "receive"
        assert operation["channel"] == {"$ref": "#/channels/requests"}
        reply = operation["reply"]
        assert reply["address"]["location"] == "$message.payload#/replyTo"
        assert reply["channel"] == {"$ref": "#/channels/replies"}
        assert reply["messages"] == [
            {"$ref": "#/channels/replies/messages/reply"},
            {"$ref": "#/channels/replies/messages/error"},
        ]
    # With an address on the reply, the reply channel's own address must be null (3.0.0 §Reply).
    assert document["channels"]["replies"]["address"] is None
    correlation = document["components"]["correlationIds"]["correlationId"]
    assert correlation["location"] == "$message.payload#/correlationId"
    for message in document["components"]["messages"].values():
        assert message["correlationId"] == {"$ref": "#/components/correlationIds/correlationId"}


_MATRIX = Judge(ek.asyncapi_document("matrix"))
_REQUEST = _shipped_07("matrix", "request")
_RESPONSE = _shipped_07("matrix", "response")
_DOC_CASES = [case for case in MATRIX_CASES if "doc" in case and case["kind"] != "error-payload"]


@pytest.mark.parametrize("case", _DOC_CASES, ids=[case["id"] for case in _DOC_CASES])
def test_matrix_case_is_judged_as_the_shipped_schemas_judge_it(case: dict[str, Any]) -> None:
    document = case["doc"]
    if case["kind"] == "request":
        is_reply = isinstance(document, dict) and document.get("op") == "$reply"
        expected = [] if is_reply or not _REQUEST.is_valid(document) else ["request"]
        assert _MATRIX.matching(document, "requests") == expected
        return
    matched = _MATRIX.matching(document, "replies")
    if not _RESPONSE.is_valid(document):
        assert matched == []
        return
    payload = document["payload"]
    failed = isinstance(payload, dict) and payload.get("ok") is False
    assert matched == (["error"] if failed else ["reply"])


def test_matrix_op_message_holds_its_op() -> None:
    judge = Judge(_ops())
    request = {"op": "ExpandDir", "payload": {"path": "/"}, "correlationId": "c-1"}
    assert judge.matching(request, "requests") == ["request.ExpandDir"]
    assert judge.matching({**request, "op": "$join"}, "requests") == ["request._join"]
    assert judge.matching({**request, "op": "fs.other"}, "requests") == []


@pytest.mark.parametrize(
    ("ops", "match"), [(["$reply"], "is the reply"), (["a b", "a_b"], "two messages")]
)
def test_matrix_ops_are_checked(ops: list[str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ek.asyncapi_document("matrix", ops=ops)


# --- entry points ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("som", {"ops": ["fs.list"]}, "ops (a matrix option) given for a som document"),
        ("matrix", {"queues": ["q"]}, "queues (a babelqueue option) given for a matrix document"),
        (
            "babelqueue",
            {"topics": {"som.x": ["a"]}, "ops": []},
            "topics (a som option), ops (a matrix option) given for a babelqueue document",
        ),
        ("nope", {}, "unknown spec 'nope'"),
    ],
    ids=["som", "matrix", "babelqueue", "unknown-spec"],
)
def test_an_option_of_another_spec_is_refused(
    spec: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        ek.asyncapi_document(spec, **options)
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize(
    "model", [list[int], int, Pair | None], ids=["array", "integer", "or-null"]
)
def test_a_data_model_of_no_json_object_is_refused(model: Any) -> None:
    # Its messages would be documented with a `data` no valid message holds.
    with pytest.raises(ValueError, match=r"\(for 'urn:a'\) takes values that are not JSON objects"):
        ek.asyncapi_document("babelqueue", urns={"urn:a": model})


def test_write_asyncapi_refuses_an_option_of_no_spec_it_writes(tmp_path: Path) -> None:
    # Given to no document, it was dropped unsaid.
    with pytest.raises(ValueError, match=r"^ops \(a matrix option\) given for som, babelqueue"):
        ek.write_asyncapi(tmp_path, ["som", "babelqueue"], ops=["fs.list"], queues=["q"])
    assert list(tmp_path.iterdir()) == []


def test_write_asyncapi_gives_each_spec_its_options(tmp_path: Path) -> None:
    written = ek.write_asyncapi(tmp_path, queues=["orders"], ops=["fs.list"], title="Shop")
    assert [p.name for p in written] == [f"{spec}.asyncapi.json" for spec in SPECS]
    for path in written:
        document = json.loads(path.read_bytes())
        assert document["info"]["title"] == "Shop"
        assert _problems(document) == []
    assert "orders" in json.loads(written[0].read_bytes())["channels"]
    with pytest.raises(TypeError, match="unknown options"):
        ek.write_asyncapi(tmp_path, ["som"], queue="orders")


def test_the_cli_prints_the_shipped_bytes() -> None:
    done = run("asyncapi", "--spec", "som")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (SHIPPED / "som.asyncapi.json").read_bytes()


def test_the_cli_writes_the_shipped_bytes(tmp_path: Path) -> None:
    done = run("asyncapi", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for spec in SPECS:
        name = f"{spec}.asyncapi.json"
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes()
        assert f"wrote {tmp_path / name}".encode() in done.stderr


def test_the_cli_reads_a_router_and_urns() -> None:
    done = run(
        "asyncapi",
        "--spec",
        "babelqueue",
        "--router",
        "tests.support.asyncapi_routes:router",
        "--urn",
        "urn:babel:extra:address=tests.support.asyncapi_routes:Address",
        "--urn",
        "urn:babel:extra:any",
        "--queue",
        "orders",
        "--queue",
        "users",
        "--title",
        "Shop",
        "--api-version",
        "2.1.0",
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert _problems(document) == []
    assert document["info"] == {**_routed()["info"], "title": "Shop", "version": "2.1.0"}
    assert document["components"] == _routed()["components"]
    assert document["channels"] == _routed()["channels"]


def test_the_cli_reads_a_data_model_that_is_no_pydantic_model() -> None:
    # As asyncapi_document takes it: any type pydantic writes a schema for.
    urn = "urn:babel:geo:point"
    done = run(
        "asyncapi", "--spec", "babelqueue", "--urn", f"{urn}=tests.support.asyncapi_routes:Point"
    )
    assert done.returncode == 0, done.stderr
    expected = ek.asyncapi_document("babelqueue", urns={urn: asyncapi_routes.Point})
    assert json.loads(done.stdout) == expected
    assert "lat" in json.dumps(expected["components"])


def test_the_cli_reads_topics_and_ops(tmp_path: Path) -> None:
    done = run(
        "asyncapi",
        "--out",
        str(tmp_path),
        "--topic",
        "som.newsroom=story.context,telling.started",
        "--topic",
        "som.newsroom=telling.ended",
        "--topic",
        "som.assets=asset.ingested",
        "--op",
        "ExpandDir",
        "--op",
        "fs.list",
        "--op",
        "$join",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "som.asyncapi.json").read_bytes()) == _topics()
    assert json.loads((tmp_path / "matrix.asyncapi.json").read_bytes()) == _ops()


# Every flag of a spec, with a value it takes.
SPEC_FLAGS: dict[str, list[list[str]]] = {
    "babelqueue": [
        ["--router", "tests.support.asyncapi_routes:router"],
        ["--urn", "urn:babel:orders:created"],
        ["--queue", "orders"],
    ],
    "som": [["--topic", "som.newsroom=story.context"]],
    "matrix": [["--op", "fs.list"]],
}
STRAYS: list[tuple[str, list[str], str]] = [
    (spec, flag, owner)
    for spec in SPECS
    for owner, flags in SPEC_FLAGS.items()
    if owner != spec
    for flag in flags
]


@pytest.mark.parametrize("out", [False, True], ids=["printed", "written"])
@pytest.mark.parametrize(
    ("spec", "flag", "owner"),
    STRAYS,
    ids=[f"{spec}{flag[0]}" for spec, flag, _ in STRAYS],
)
def test_the_cli_names_the_option_of_another_spec(
    spec: str,
    flag: list[str],
    owner: str,
    out: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    written = ["--out", str(tmp_path)] if out else []
    status = main(["asyncapi", "--spec", spec, *flag, *written])
    assert status == 2
    assert capsys.readouterr().err == (
        f"envelopekit: {flag[0]} (a {owner} option) given for a {spec} document\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_cli_names_every_option_of_another_spec(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["asyncapi", "--spec", "som", "--queue", "q", "--op", "a", "--op", "b"])
    assert status == 2
    assert capsys.readouterr().err == (
        "envelopekit: --queue (a babelqueue option), --op (a matrix option) given for a som "
        "document\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--router", "tests.support.asyncapi_routes:not_a_router"], "is not an envelopekit"),
        (["--router", "tests.support.no_such_module:router"], "cannot import"),
        (["--router", "no-colon"], "is not module:attribute"),
        (["--urn", "urn:a=tests.support.asyncapi_routes:Nope"], "cannot import"),
        (["--spec", "all"], "give --out DIR"),
        (["--spec", "babelqueue", "--queue", "a", "--queue", "a"], "twice"),
        (["--spec", "som", "--topic", "som.x"], "TOPIC=TYPE"),
        (["--spec", "matrix", "--op", "$reply"], "is the reply"),
        (["--spec", "babelqueue", "--urn", "urn:a", "--urn", "urn:a"], "given twice"),
        (
            ["--urn", "urn:a=os:getcwd"],
            "--urn urn:a=os:getcwd: cannot write the schema of the data model of urn:a: "
            "PydanticSchemaGenerationError: Unable to generate pydantic-core schema for <built-in "
            "function getcwd>.",
        ),
        (
            ["--urn", "urn:a=json:JSONDecoder"],
            "PydanticSchemaGenerationError: Unable to generate pydantic-core schema for <class "
            "'json.decoder.JSONDecoder'>.",
        ),
        (
            ["--urn", "urn:a=tests.support.cli_models:Opaque"],
            "--urn urn:a=tests.support.cli_models:Opaque: cannot write the schema of the data "
            "model of urn:a: PydanticInvalidForJsonSchema: ",
        ),
        (
            ["--router", "tests.support.cli_models:router"],
            "--router tests.support.cli_models:router: cannot write the schema of the data model "
            "of urn:babel:opaque:made: PydanticInvalidForJsonSchema: ",
        ),
        (["--spec", "babelqueue", "--queue", ""], "a queue name cannot be empty"),
        (
            ["--urn", "urn:a=builtins:int"],
            "data int (for 'urn:a') takes values that are not JSON objects (type 'integer')",
        ),
    ],
)
def test_the_cli_refuses_bad_options_with_status_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # In-process (the real executable's exit path is test_the_cli_refuses_an_import_...).
    status = main(["asyncapi", *(args if "--spec" in args else ["--spec", "babelqueue", *args])])
    captured = capsys.readouterr()
    assert status == 2
    assert message in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_the_cli_refuses_an_import_that_fails_with_status_2() -> None:
    done = run("asyncapi", "--spec", "babelqueue", "--router", "tests.support.nothing:router")
    assert done.returncode == 2
    assert b"cannot import tests.support.nothing:router" in done.stderr
    assert b"Traceback" not in done.stderr
    assert done.stdout == b""


def test_the_cli_refuses_a_model_that_fails_to_import_or_to_write_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not Python, so no checker may read it: written here, importable by PYTHONPATH.
    (tmp_path / "ek_syntax_error.py").write_text("def (:\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    for reference, said in (
        ("ek_syntax_error:A", b"cannot import ek_syntax_error:A: SyntaxError: "),
        ("tests.support.cli_models:Opaque", b"PydanticInvalidForJsonSchema: "),
    ):
        done = run("asyncapi", "--spec", "babelqueue", "--urn", f"urn:babel:a:b={reference}")
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(b"envelopekit: ") and said in done.stderr
        assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
        assert done.stdout == b""


def test_what_a_module_prints_while_imported_goes_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ek_noisy_data.py").write_text(
        'from pydantic import BaseModel\nprint("loading")\nclass A(BaseModel):\n    a: int\n'
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    done = run("asyncapi", "--spec", "babelqueue", "--urn", "urn:babel:a:b=ek_noisy_data:A")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["asyncapi"]
    assert done.stderr == b"loading\n"


def test_the_cli_reports_an_unwritable_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["asyncapi", "--out", str(blocker / "sub")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_schema_module_render_is_the_one_used() -> None:
    # The documents are indented and terminated as the schema files are.
    assert _asyncapi.render is _schema.render
