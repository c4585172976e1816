"""Static typing of the raise-site helper: only a catalogued rule type-checks.

``rule_error`` takes a ``rules.Keyword`` or a ``rules.NamedId`` (``Literal`` types pinned to the
catalogue by ``tests/test_rule_identity.py``); each ``# type: ignore[<code>]`` line below is an
error mypy must report, and basedpyright must report on exactly those lines
(``tests/typing/test_checkers.py``). They sit under ``TYPE_CHECKING``, so pytest never runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic_core import PydanticCustomError
from typing_extensions import assert_type

from envelopekit import rules
from envelopekit._violations import rule_error


def test_catalogued_rules_type_check() -> None:
    assert_type(rule_error("required", "x", pointer="/a"), PydanticCustomError)
    assert_type(rule_error(rules.URN_MISSING, "x"), PydanticCustomError)
    assert_type(rule_error("anyOf", "x", also=("required", "type")), PydanticCustomError)
    keyword: rules.Keyword = "format.uuid"
    assert_type(rule_error(keyword, "x"), PydanticCustomError)
    if TYPE_CHECKING:
        # A misspelled keyword, a misspelled named id, a structural id (the mapper adds the
        # schema name), the fallback no validator may raise, any str.
        rule_error("requierd", "x")  # type: ignore[arg-type]
        rule_error("urn.mising", "x")  # type: ignore[arg-type]
        rule_error("envelope.required", "x")  # type: ignore[arg-type]
        rule_error("invalid", "x")  # type: ignore[arg-type]
        rule_error(str(keyword), "x")  # type: ignore[arg-type]
        # Related keywords are keywords, never named ids or one space-separated string.
        rule_error("anyOf", "x", also=("urn.missing",))  # type: ignore[arg-type]
        rule_error("anyOf", "x", also="required type")  # type: ignore[arg-type]
        # The pointer is a str.
        rule_error("required", "x", pointer=("a",))  # type: ignore[arg-type]
