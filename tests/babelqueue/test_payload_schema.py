"""Per-URN payload schemas: the agreed keyword subset on jsonschema, and the registry loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envelopekit import rules
from envelopekit.babelqueue import (
    InvalidPayloadError,
    PayloadSchemas,
    SchemaRegistryError,
    _payload_schema,
    check_payload,
)
from tests.conftest import DATA
from tests.test_duplicates import _lines_run

REGISTRY = DATA / "babelqueue" / "registry" / "examples"


def verdict(schema: dict[str, Any], data: Any) -> list[tuple[str, str]]:
    return [
        (v.rule.removeprefix("payload-schema."), v.pointer) for v in check_payload(schema, data)
    ]


def test_registry_examples_validate() -> None:
    schemas = PayloadSchemas.from_registry(REGISTRY / "registry.json")
    assert schemas.urns() == ["urn:babel:orders:created", "urn:babel:users:registered"]
    for name in ("order-created.json", "user-registered.json"):
        message = json.loads((REGISTRY / "messages" / name).read_text(encoding="utf-8"))
        assert schemas.check(message["job"], message["data"]) == []
    assert schemas.check("urn:babel:unregistered:thing", {"anything": True}) == []


def test_the_breaking_v2_schema_refuses_v1_data() -> None:
    schema = json.loads((REGISTRY / "schemas/orders-created.v2-breaking.json").read_text())
    data = {"order_id": 1, "amount": 2}
    assert verdict(schema, data) == [("required", "/data/customer_id")]


@pytest.mark.parametrize(
    ("schema", "data", "expected"),
    [
        ({"type": "integer"}, 1.0, []),  # a whole-valued float is an integer
        ({"type": "integer"}, 1.5, [("type", "/data")]),
        ({"type": "number"}, True, [("type", "/data")]),  # bool is never a number
        ({"enum": [1]}, True, [("enum", "/data")]),  # type-strict
        ({"enum": [1]}, 1.0, [("enum", "/data")]),
        ({"const": {"a": [1]}}, {"a": [True]}, [("const", "/data")]),
        ({"const": {"a": [1]}}, {"a": [1]}, []),
        ({"type": ["string", "null"]}, 3, []),  # type lists are not in the agreed subset
        ({"type": "string", "maxLength": 1, "pattern": "^z", "format": "email"}, "abc", []),
        ({"oneOf": [{"type": "string"}]}, 3, []),
        (
            {"type": "string", "x-gdpr-sensitive": True, "minLength": 1},
            "",
            [("minLength", "/data")],
        ),
        ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": 1}, []),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": False,
            },
            {"a": "x", "b": 1, "c/d": 2},
            [("additionalProperties", "/data/b"), ("additionalProperties", "/data/c~1d")],
        ),
        (
            {"type": "object", "required": ["a", "b"]},
            {},
            [("required", "/data/a"), ("required", "/data/b")],
        ),
        (
            {
                "type": "array",
                "items": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
            },
            [{"n": 1}, {"n": -1}],
            [("minimum", "/data/1/n")],
        ),
        # `minimum` compares as a float, as the Python reference does (babelqueue.md §10).
        ({"type": "integer", "minimum": 2**53 + 1}, 2**53, []),
        ({"type": "number", "minimum": 0.5}, 0, [("minimum", "/data")]),
        ({"type": "integer", "minimum": 1}, 1.0, []),
        ({"type": "integer", "minimum": 0}, 10**400, []),
        ({"type": "integer", "minimum": 10**400}, 10**399, [("minimum", "/data")]),
        ({"type": "number", "minimum": 0}, True, [("type", "/data")]),
        ({"type": "array", "items": [{"type": "string"}]}, [1], []),
        ({"type": "object", "properties": {"x": False}}, {"x": 1}, []),
        (
            {"type": "object", "properties": {"x": False}, "additionalProperties": False},
            {"x": 1},
            [("additionalProperties", "/data/x")],
        ),
    ],
)
def test_keyword_semantics(schema: dict[str, Any], data: Any, expected: list[Any]) -> None:
    assert verdict(schema, data) == expected


DRAFT_07 = "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize(
    ("schema", "data", "expected"),
    [
        # A node's own `$schema` does not bring in another dialect's keywords.
        ({"properties": {"n": {"$schema": DRAFT_07, "maxLength": 1}}}, {"n": "abc"}, []),
        ({"properties": {"n": {"$schema": DRAFT_07, "pattern": "^x$"}}}, {"n": "abc"}, []),
        # ... nor its backtracking pattern (seconds per character before), nor a remote `$ref`.
        ({"items": {"$schema": DRAFT_07, "pattern": "^(a+)+$"}}, ["a" * 40 + "!"], []),
        ({"items": {"$schema": DRAFT_07, "$ref": "http://127.0.0.1:9/x.json"}}, [1], []),
        (
            {
                "items": {"$schema": DRAFT_07, "$ref": "#/definitions/s"},
                "definitions": {"s": False},
            },
            [1],
            [],
        ),
        ({"type": "array", "items": {"$schema": 5, "type": "string"}}, [1], [("type", "/data/0")]),
        ({"$id": 5, "type": "string"}, 1, [("type", "/data")]),
        (
            {"type": "array", "items": {"$id": ["x"], "type": "integer", "minimum": 2}},
            [1],
            [("minimum", "/data/0")],
        ),
        # Keyword values of the wrong type constrain nothing, as in the other SDKs.
        ({"type": "string", "minLength": "3"}, "ab", []),
        ({"type": "string", "minLength": None}, "ab", []),
        ({"type": "string", "minLength": [1]}, "ab", []),
        ({"type": "string", "minLength": True}, "", []),
        ({"type": "string", "minLength": 2.5}, "a", [("minLength", "/data")]),
        ({"properties": {"n": 5}}, {"n": 1}, []),
        ({"properties": {"n": [{"type": "string"}]}}, {"n": 1}, []),
        ({"properties": {"n": None}}, {"n": 1}, []),
    ],
)
def test_what_is_outside_the_subset_never_reaches_jsonschema(
    schema: dict[str, Any], data: Any, expected: list[Any]
) -> None:
    assert verdict(schema, data) == expected


@pytest.mark.parametrize("schema", [None, [], "object", 5], ids=repr)
def test_a_schema_that_is_no_object_is_a_registry_error(schema: Any) -> None:
    with pytest.raises(SchemaRegistryError, match="JSON object"):
        check_payload(schema, {})


@pytest.mark.timeout(20)  # each item was compared with every value: 50,000 x 2,000 took 35 s
def test_an_enum_is_read_once_per_check_not_once_per_item() -> None:
    values: list[Any] = [*range(2000), {"a": [1]}, "x"]
    schema = {"type": "array", "items": {"enum": values}}
    kinds = [True, 1.0, {"a": [1]}, "x", 1, {"a": [True]}]  # type-strict, as the validators
    found = check_payload(schema, [-1] * 50_000 + kinds)
    assert len(found) == 50_003
    assert [v.pointer for v in found if int(v.pointer.rpartition("/")[2]) >= 50_000] == [
        "/data/50000",  # true is not 1
        "/data/50001",  # 1.0 is not 1
        "/data/50005",  # {"a": [true]} is not {"a": [1]}
    ]
    # The values are quoted a few at a time, however many there are.
    assert found[0].message == "-1 is not one of [0, 1, 2, 3, 4, 5, 6, 7, ...]"


@pytest.mark.timeout(5)  # each level's value was written out whole to quote it: 15 s
def test_a_value_refused_at_every_level_is_quoted_a_few_levels_deep() -> None:
    data: Any = "x" * 2_000_000
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(190):
        data, schema = {"a": data}, {"type": "object", "properties": {"a": schema}, "enum": [1]}
    found = check_payload(schema, data)
    assert len(found) == 190
    assert found[0].message == "{'a': {'a': {'a': {'a': {...}}}}} is not one of [1]"


def test_every_violation_is_catalogued() -> None:
    schema = json.loads((REGISTRY / "schemas/users-registered.json").read_text())
    data = {"user_id": 0, "email": "a", "profile": {"marketing_opt_in": "yes"}, "x": 1}
    found = check_payload(schema, data)
    assert {v.rule for v in found} == {
        "payload-schema.minimum",
        "payload-schema.minLength",
        "payload-schema.type",
        "payload-schema.additionalProperties",
    }
    assert all(rules.is_rule(v.rule) and v.source == "schema" for v in found)


def test_validate_raises_with_the_violations() -> None:
    schemas = PayloadSchemas({"urn:babel:a:b": {"type": "object", "required": ["id"]}})
    with pytest.raises(InvalidPayloadError, match="/data/id") as raised:
        schemas.validate("urn:babel:a:b", {})
    assert raised.value.urn == "urn:babel:a:b"
    assert [v.rule for v in raised.value.violations] == ["payload-schema.required"]


def test_bad_registries_fail_at_load(tmp_path: Path) -> None:
    with pytest.raises(SchemaRegistryError):
        PayloadSchemas.from_registry(tmp_path / "missing.json")
    (tmp_path / "registry.json").write_text('{"schemas": [{"urn": "u", "schema": "s.json"}]}')
    with pytest.raises(SchemaRegistryError, match=r"s\.json"):
        PayloadSchemas.from_registry(tmp_path / "registry.json")
    (tmp_path / "s.json").write_text("[]")
    with pytest.raises(SchemaRegistryError, match="not a JSON object"):
        PayloadSchemas.from_registry(tmp_path / "registry.json")
    (tmp_path / "registry.json").write_text('{"schemas": [{"urn": ""}]}')
    with pytest.raises(SchemaRegistryError):
        PayloadSchemas.from_registry(tmp_path / "registry.json")
    with pytest.raises(SchemaRegistryError):
        PayloadSchemas({"u": []})  # type: ignore[dict-item]


def test_a_schema_file_nesting_past_the_parser_is_a_registry_error(tmp_path: Path) -> None:
    (tmp_path / "registry.json").write_text('{"schemas": [{"urn": "u", "schema": "s.json"}]}')
    (tmp_path / "s.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    with pytest.raises(SchemaRegistryError, match=r"s\.json"):
        PayloadSchemas.from_registry(tmp_path / "registry.json")


def test_a_missing_jsonschema_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from envelopekit.babelqueue import _payload_schema

    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(ImportError, match=r"envelopekit\[schemas\]"):
        _payload_schema._jsonschema()


# What the Python, Go and PHP reference validators agree on (babelqueue.md §10: "PY, GO, PHP and
# REG agree"; "GO agrees on verdicts"): a keyword applies only under the single `type` it belongs
# to (`required`, `properties`, `additionalProperties` under "object", `items` under "array",
# `minLength` under "string", `minimum` under "integer"/"number"); a node with no such `type`
# checks `const` and `enum` only; a subschema that is no JSON object is no schema (a member it
# names is then an additional one); `minLength` is read as an integer, truncated.
@pytest.mark.parametrize(
    ("schema", "data"),
    [
        pytest.param({"required": ["a"]}, {}, id="untyped-required"),
        pytest.param({"additionalProperties": False}, {"a": 1}, id="untyped-additional"),
        pytest.param({"properties": {"a": {"type": "string"}}}, {"a": 1}, id="untyped-properties"),
        pytest.param({"items": {"type": "string"}}, [1], id="untyped-items"),
        pytest.param({"minLength": 3}, "ab", id="untyped-minLength"),
        pytest.param({"minimum": 1}, 0, id="untyped-minimum"),
        pytest.param({"type": "float", "minimum": 1}, 0, id="unknown-type-minimum"),
        pytest.param({"type": ["object", "null"], "required": ["a"]}, {}, id="type-list-required"),
        pytest.param({"type": "string", "minimum": 5}, "a", id="string-ignores-minimum"),
        pytest.param({"type": "integer", "minLength": 5}, 1, id="integer-ignores-minLength"),
        pytest.param({"type": "array", "required": ["a"]}, [], id="array-ignores-required"),
        pytest.param(
            {"type": "object", "items": {"type": "string"}}, {"a": 1}, id="object-ignores-items"
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"required": ["b"]}}},
            {"a": {}},
            id="nested-untyped-required",
        ),
        pytest.param({"type": "object", "properties": {"a": False}}, {"a": 1}, id="false-property"),
        pytest.param(
            {"type": "object", "properties": {"a": True}, "additionalProperties": False},
            {"a": 1},
            id="true-property-with-closed-object",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": 5}, "additionalProperties": False},
            {"a": 1},
            id="number-property-with-closed-object",
        ),
        pytest.param({"type": "array", "items": False}, [1], id="false-items"),
        pytest.param({"type": "string", "minLength": 2.5}, "ab", id="fractional-minLength"),
        pytest.param({"type": "string", "minLength": 2.5}, "a", id="fractional-minLength-short"),
        pytest.param({"type": "integer", "minimum": 1}, 0, id="typed-minimum"),
        pytest.param({"type": "object", "required": ["a"]}, {}, id="typed-required"),
        pytest.param({"enum": [1]}, True, id="untyped-enum"),
        pytest.param({"type": "float", "const": 1}, 1.0, id="unknown-type-const"),
    ],
)
def test_verdicts_are_the_reference_validators(schema: dict[str, Any], data: Any) -> None:
    from babelqueue.schema import validate_schema

    assert (check_payload(schema, data) == []) is (validate_schema(schema, data) is None)


@pytest.mark.parametrize(
    "row", [{"p0": "a", "p1": "b"}, {"p0": "a", "q": 1}, {"p0": 1, "p1": True}], ids=str
)
def test_a_wide_object_schema_costs_each_row_its_own_members(row: dict[str, Any]) -> None:
    # The subschemas of `properties` were picked out for each object read (20,000 rows against
    # 1,000 properties: 7.9 s, 0.7 s before): each row's members are looked up instead.
    properties = {f"p{i}": {"type": "string"} for i in range(1_000)}
    item = {"type": "object", "properties": properties, "additionalProperties": False}
    schema = {"type": "array", "items": item}
    data = [row] * 200
    found = check_payload(schema, data)
    expected = check_payload(item, row)
    each = [(v.rule, v.pointer.removeprefix("/data")) for v in expected]
    assert {(v.rule, v.pointer) for v in found} == {
        (rule, f"/data/{i}{at}") for i in range(200) for rule, at in each
    }
    assert len(found) == 200 * len(each)
    assert _lines_run(lambda: check_payload(schema, data), _payload_schema.__file__) < 20_000
