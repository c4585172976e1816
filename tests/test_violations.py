"""The rule catalogue and the one mapping from pydantic errors to violations."""

from __future__ import annotations

from typing import Any

import pytest

import envelopekit as ek
from envelopekit import rules
from envelopekit._violations import MAX_MESSAGE_CHARS, pointer, shown, violation


def test_pointer_escapes() -> None:
    assert pointer() == ""
    assert pointer("a", 0, "b") == "/a/0/b"
    assert pointer("a/b", "m~n") == "/a~1b/m~0n"


def test_structural_ids_are_checked() -> None:
    assert rules.structural("envelope", "format.uuid") == "envelope.format.uuid"
    with pytest.raises(ValueError):
        rules.structural("envelop", "required")
    with pytest.raises(ValueError):
        rules.structural("envelope", "requires")


def test_every_named_rule_has_a_source_and_summary() -> None:
    for rule in rules.NAMED.values():
        assert rule.source in {"json", "schema", "conformance", "policy", "sequence"}
        assert rule.summary
        assert rules.is_rule(rule.id)


def test_named_ids_and_schema_names_do_not_collide() -> None:
    for rule_id in rules.NAMED:
        schema, _, keyword = rule_id.partition(".")
        assert not (schema in rules.SCHEMAS and keyword in rules.KEYWORDS), rule_id


def test_violation_takes_its_source_from_the_catalogue() -> None:
    assert violation("json.invalid", "", "x").source == "json"
    assert violation("envelope.required", "/a", "x").source == "schema"
    with pytest.raises(ValueError):
        violation("made.up", "", "x")


def test_violation_is_a_value() -> None:
    one = ek.Violation("json.invalid", "", "m", "json")
    assert one == ek.Violation("json.invalid", "", "m", "json")
    assert one.to_dict() == {
        "rule": "json.invalid",
        "pointer": "",
        "message": "m",
        "source": "json",
    }
    assert hash(one)


def test_verdict_rules_dedupes_in_order() -> None:
    a = violation("envelope.required", "/a", "x")
    b = violation("envelope.required", "/b", "x")
    c = violation("envelope.enum", "/c", "x")
    verdict: ek.Verdict[Any] = ek.Verdict("som", None, [a, c, b])
    assert verdict.rules() == ["envelope.required", "envelope.enum"]
    assert not verdict.ok


def test_a_message_quotes_a_long_string_by_its_head() -> None:
    """``shown`` reads a long string's first characters only: a message holds no more."""
    long = "a'b" + "x" * 1_000_000
    assert shown(long) == repr(long[:MAX_MESSAGE_CHARS])
    assert shown("short") == "'short'"
    assert shown(5) == "5"
    message = violation("message.too_large", "", f"{shown(long)} is long").message
    assert message == violation("message.too_large", "", f"{long!r} is long").message


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (ValueError("not json"), r"^violations\(\) maps a pydantic .*, not ValueError$"),
        (KeyError("job"), r"^violations\(\) maps a pydantic ValidationError, not KeyError$"),
        (
            ek.ProducerError("refused", [ek.Violation("urn.missing", "/job", "no URN", "policy")]),
            r"^violations\(\) maps .* not ProducerError; its \.violations are the list$",
        ),
    ],
    ids=["value-error", "key-error", "producer-error"],
)
def test_violations_of_another_exception_is_a_type_error_saying_what_it_takes(
    error: Exception, message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        ek.violations(error)  # type: ignore[arg-type]  # a user's mistake, refused clearly
