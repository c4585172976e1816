"""Payload-schema evolution: the registry's compat rules, each both ways, with pointers."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field

from envelopekit.babelqueue import Sensitive, breaking_changes
from tests.conftest import DATA

SCHEMAS = DATA / "babelqueue" / "registry" / "examples" / "schemas"
V1 = json.loads((SCHEMAS / "orders-created.json").read_text())
V2 = json.loads((SCHEMAS / "orders-created.v2-breaking.json").read_text())


def obj(props: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **more}


S = {"type": "string"}

# (id, old, new, [(rule, pointer)]): the breaking direction; the reverse must be compatible
# unless listed in ONE_WAY_ONLY (a change that breaks both ways, such as a retype).
CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[tuple[str, str]]]] = [
    (
        "required-added",
        obj({"a": S}),
        obj({"a": S}, required=["a"]),
        [("compat.required_added", "/required/0")],
    ),
    (
        "required-new-field",
        obj({"a": S}),
        obj({"a": S, "b": S}, required=["b"]),
        [("compat.required_added", "/required/0")],
    ),
    (
        "property-removed",
        obj({"a": S, "b": S}, additionalProperties=False),
        obj({"a": S}, additionalProperties=False),
        [("compat.property_removed", "/properties/b")],
    ),
    (
        "property-removed-open",
        obj({"a": S, "b": S}),
        obj({"a": S}),
        [("compat.property_removed", "/properties/b")],
    ),
    (
        "property-renamed",
        obj({"zip": S}, required=["zip"]),
        obj({"postcode": S}, required=["postcode"]),
        [("compat.property_removed", "/properties/zip"), ("compat.required_added", "/required/0")],
    ),
    (
        "retyped",
        obj({"a": S}),
        obj({"a": {"type": "integer"}}),
        [("compat.type_changed", "/properties/a/type")],
    ),
    (
        "nested-retyped",
        obj({"addr": obj({"zip": S})}),
        obj({"addr": obj({"zip": {"type": "integer"}})}),
        [("compat.type_changed", "/properties/addr/properties/zip/type")],
    ),
    (
        "items-retyped",
        obj({"tags": {"type": "array", "items": S}}),
        obj({"tags": {"type": "array", "items": {"type": "integer"}}}),
        [("compat.type_changed", "/properties/tags/items/type")],
    ),
    (
        "items-property-removed",
        obj({"lines": {"type": "array", "items": obj({"sku": S, "qty": {"type": "integer"}})}}),
        obj({"lines": {"type": "array", "items": obj({"sku": S})}}),
        [("compat.property_removed", "/properties/lines/items/properties/qty")],
    ),
    (
        "additional-properties-tightened",
        {"type": "object", "additionalProperties": True},
        {"type": "object", "additionalProperties": False},
        [("compat.additional_properties_tightened", "/additionalProperties")],
    ),
    (
        "additional-properties-absent-tightened",
        {"type": "object"},
        {"type": "object", "additionalProperties": False},
        [("compat.additional_properties_tightened", "/additionalProperties")],
    ),
    (
        "enum-value-removed",
        obj({"s": {"enum": ["a", "b"]}}),
        obj({"s": {"enum": ["a"]}}),
        [("compat.enum_value_removed", "/properties/s/enum")],
    ),
    (
        "enum-value-retyped",
        obj({"n": {"enum": [1, True]}}),
        obj({"n": {"enum": [1.0, True, 1]}}),
        [],  # 1 kept (1.0 added): compatible; the reverse drops 1.0
    ),
    (
        "enum-added",
        obj({"s": S}),
        obj({"s": {"type": "string", "enum": ["a", "b"]}}),
        [("compat.enum_added", "/properties/s/enum")],
    ),
    (
        "min-length-added",
        obj({"s": S}),
        obj({"s": {"type": "string", "minLength": 3}}),
        [("compat.min_length_tightened", "/properties/s/minLength")],
    ),
    (
        "minimum-raised",
        obj({"n": {"type": "integer", "minimum": 0}}),
        obj({"n": {"type": "integer", "minimum": 5}}),
        [("compat.minimum_tightened", "/properties/n/minimum")],
    ),
    (
        "type-added",
        obj({"v": {}}),
        obj({"v": S}),
        [("compat.type_changed", "/properties/v/type")],
    ),
    (
        "null-type-added",  # `x: Any = None` becoming `x: None = None`
        obj({"v": {}}),
        obj({"v": {"type": "null"}}),
        [("compat.type_changed", "/properties/v/type")],
    ),
    # `const` is an `enum` of one value (what pydantic writes for a one-value `Literal`).
    (
        "const-added",
        obj({"s": S}),
        obj({"s": {"type": "string", "const": "a"}}),
        [("compat.enum_added", "/properties/s/const")],
    ),
    (
        "const-narrows-enum",
        obj({"s": {"type": "string", "enum": ["a", "b"]}}),
        obj({"s": {"type": "string", "const": "a"}}),
        [("compat.enum_value_removed", "/properties/s/const")],
    ),
    (
        "const-changed",
        obj({"s": {"const": "a"}}),
        obj({"s": {"const": "b"}}),
        [("compat.enum_value_removed", "/properties/s/const")],
    ),
]
ONE_WAY_ONLY = {"retyped", "nested-retyped", "items-retyped", "property-renamed", "const-changed"}


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_each_rule_breaks_one_way(name: str) -> None:
    _, old, new, expected = next(c for c in CASES if c[0] == name)
    found = [(c.rule, c.pointer) for c in breaking_changes(old, new)]
    assert found == sorted(expected)
    for change in breaking_changes(old, new):
        assert change.source == "policy" and change.message


@pytest.mark.parametrize("name", [c[0] for c in CASES if c[0] not in ONE_WAY_ONLY])
def test_each_rule_reversed(name: str) -> None:
    _, old, new, _ = next(c for c in CASES if c[0] == name)
    reverse = breaking_changes(new, old)
    if name == "enum-value-retyped":
        assert [(c.rule, c.message) for c in reverse] == [
            ("compat.enum_value_removed", "n: enum value 1.0 removed")
        ]
    elif name == "required-new-field":  # the reverse removes `b`
        assert [c.rule for c in reverse] == ["compat.property_removed"]
    else:
        assert reverse == [], name


def test_the_registry_example_breaks_for_the_registry_reason() -> None:
    (change,) = breaking_changes(V1, V2)
    assert change.rule == "compat.required_added"
    assert change.pointer == "/required/2"
    assert change.message == 'property "customer_id" is now required'
    # Back: customer_id leaves the properties, which the registry counts as a removal...
    assert [c.rule for c in breaking_changes(V2, V1)] == ["compat.property_removed"]
    # ...while only dropping it from `required` is compatible.
    relaxed = {**V2, "required": ["order_id", "amount"]}
    assert breaking_changes(V2, relaxed) == []
    assert breaking_changes(V1, V1) == []


def test_adding_an_optional_field_widening_and_gdpr_marks_are_compatible() -> None:
    wider = json.loads(json.dumps(V1))
    wider["properties"]["note"] = {"type": "string"}
    wider["properties"]["currency"]["enum"].append("GBP")
    wider["properties"]["amount"]["minimum"] = -10
    wider["properties"]["order_id"]["x-gdpr-sensitive"] = "id"
    assert breaking_changes(V1, wider) == []
    marked = json.loads(json.dumps(V1))
    marked["properties"]["amount"]["x-gdpr-sensitive"] = True
    assert breaking_changes(V1, marked) == breaking_changes(marked, V1) == []


def test_nested_paths_are_the_registrys() -> None:
    old = obj({"customer": obj({"id": {"type": "integer"}, "email": S})})
    new = obj({"customer": obj({"id": {"type": "integer"}})})
    (change,) = breaking_changes(old, new)
    assert change.message == "customer.email: property removed"
    assert change.pointer == "/properties/customer/properties/email"


def test_pointers_escape_names() -> None:
    (change,) = breaking_changes(obj({"a/b~c": S}), obj({}))
    assert change.pointer == "/properties/a~1b~0c"


# --- two versions of a data model ------------------------------------------------------------


class OrderV1(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: Annotated[int, Field(ge=1)]
    amount: Annotated[float, Field(ge=0)]
    note: str | None = None


class Priced(BaseModel):
    currency: Literal["USD", "EUR"] = "USD"


class PricedInUsd(BaseModel):
    currency: Literal["USD"] = "USD"  # pydantic writes a one-value Literal as `const`


class OrderV1Marked(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: Annotated[int, Field(ge=1)]
    amount: Annotated[float, Field(ge=0)]
    note: Annotated[str | None, Sensitive("free_text")] = None
    coupon: str | None = None


class OrderV2(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: Annotated[int, Field(ge=1)]
    amount: Annotated[float, Field(ge=0)]
    note: int | None = None
    customer_id: str


class OrderNoNull(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: Annotated[int, Field(ge=1)]
    amount: Annotated[float, Field(ge=0)]
    note: str = ""


def test_model_versions() -> None:
    assert breaking_changes(OrderV1, OrderV1Marked) == []  # optional field + a mark
    found = [(c.rule, c.pointer) for c in breaking_changes(OrderV1, OrderV2)]
    assert found == [
        ("compat.type_changed", "/properties/note/anyOf/0/type"),
        ("compat.required_added", "/required/2"),
    ]
    (narrowed,) = breaking_changes(Priced, PricedInUsd)
    assert (narrowed.rule, narrowed.pointer) == (
        "compat.enum_value_removed",
        "/properties/currency/const",
    )
    assert narrowed.message == "currency: enum value EUR removed (const USD)"
    assert breaking_changes(PricedInUsd, Priced) == []
    (no_null,) = breaking_changes(OrderV1, OrderNoNull)
    assert no_null.rule == "compat.type_changed" and "null" in no_null.message
    assert breaking_changes(OrderNoNull, OrderV1) == []  # accepting null too is wider


def test_hostile_schemas_cost_bounded_and_fail_clearly() -> None:
    from envelopekit.babelqueue import SchemaRegistryError

    many = list(range(20_000))
    # Type-strict and linear: 20,000 values against 20,000 (a quadratic compare would take
    # minutes); 1 and 1.0 are different enum values, as the validators compare them.
    (dropped,) = breaking_changes({"enum": [*many, 1.0]}, {"enum": many[::-1]})
    assert dropped.message == "enum value 1.0 removed"
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(200):
        node["properties"] = {"n": {}}
        node = node["properties"]["n"]
    with pytest.raises(SchemaRegistryError, match="deeper than 128"):
        breaking_changes(deep, deep)


def test_hostile_values_are_read_not_crashed_on() -> None:
    from envelopekit.babelqueue import SchemaRegistryError

    # Bounds compare as floats, and exactly past any float, as PayloadSchemas compares a value.
    huge = 10**400
    raised = breaking_changes({"minimum": huge}, {"minimum": huge + 1})
    assert [c.rule for c in raised] == ["compat.minimum_tightened"]
    assert breaking_changes({"minimum": huge}, {"minimum": huge}) == []
    assert breaking_changes({"minimum": 0}, {"minimum": -huge}) == []
    assert breaking_changes({"minimum": 2**53}, {"minimum": 2**53 + 1}) == []  # the same float
    # An enum value nested past any reader is refused clearly, not a RecursionError.
    nested: Any = []
    for _ in range(900):
        nested = [nested]
    with pytest.raises(SchemaRegistryError, match="deeper than 128"):
        breaking_changes({"enum": [nested]}, {"enum": [1]})
    # `required` holding what is no property name counts for nothing, old or new.
    assert breaking_changes({"required": [["a"], {}]}, {"required": []}) == []


def test_names_that_are_no_unicode_text_are_escaped() -> None:
    # json.loads decodes the escape "\ud800" into a lone surrogate, which no output can write.
    old = json.loads('{"properties": {"\\ud800": {}, "a\\udfff": {"enum": ["x\\udc80"]}}}')
    found = breaking_changes(old, {"properties": {"a\udfff": {"enum": []}}})
    assert [(c.rule, c.pointer) for c in found] == [
        ("compat.property_removed", "/properties/\\ud800"),
        ("compat.enum_value_removed", "/properties/a\\udfff/enum"),
    ]
    assert [c.message for c in found] == [
        "\\ud800: property removed",
        "a\\udfff: enum value x\\udc80 removed",
    ]
    orjson.dumps([c.to_dict() for c in found])


def test_enum_values_compare_as_json_values() -> None:
    old = {"enum": [{"a": 1, "b": [True]}, None, "x"]}
    assert breaking_changes(old, {"enum": ["x", None, {"b": [True], "a": 1}]}) == []
    found = breaking_changes(old, {"enum": [{"a": 1, "b": [1]}, None, "x"]})
    assert [c.rule for c in found] == ["compat.enum_value_removed"]


# A `false` subschema refuses every value (PayloadSchemas: `payload-schema.false_schema`).
FALSE_CASES = {
    "property-false": (obj({"a": S}), obj({"a": False}), "/properties/a", "a"),
    "property-true-false": (obj({"a": True}), obj({"a": False}), "/properties/a", "a"),
    "items-false": ({"items": S}, {"items": False}, "/items", "[]"),
    "items-absent-false": ({"type": "array"}, {"type": "array", "items": False}, "/items", "[]"),
    "nested-false": (
        obj({"lines": {"type": "array", "items": obj({"qty": S})}}),
        obj({"lines": {"type": "array", "items": obj({"qty": False})}}),
        "/properties/lines/items/properties/qty",
        "lines[].qty",
    ),
}


@pytest.mark.parametrize("name", FALSE_CASES)
def test_a_subschema_turned_false_breaks(name: str) -> None:
    old, new, at, path = FALSE_CASES[name]
    found = breaking_changes(old, new)
    assert [(c.rule, c.pointer, c.message) for c in found] == [
        ("compat.type_changed", at, f"{path}: no value allowed (schema false)")
    ]
    assert breaking_changes(new, old) == []  # from nothing allowed, to anything: compatible


@pytest.mark.parametrize("schema", [None, "object", [], 5, False], ids=repr)
def test_a_schema_that_is_no_object_or_model_is_a_type_error(schema: Any) -> None:
    with pytest.raises(TypeError, match="JSON object"):
        breaking_changes(schema, {"type": "object"})
    with pytest.raises(TypeError, match="JSON object"):
        breaking_changes({"type": "object"}, schema)
