"""Every property of a generated SOM schema is described, in the official words where they exist.

Field docstrings become property descriptions. Every property of every generated SOM schema (the
root's and each ``$defs`` entry's) must have one; and every property the official schema describes
must carry exactly the official text, matched by property path from the root (following ``$ref``,
array ``items`` and ``anyOf``/``oneOf``/``allOf`` branches), so ``$defs`` names need not agree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import envelopekit as ek
from envelopekit import _schema

OFFICIAL = Path(__file__).resolve().parent.parent / "data" / "som" / "schema"
NAMES = _schema.SCHEMA_NAMES["som"]


def _official(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((OFFICIAL / f"{name}.schema.json").read_text("utf-8"))
    return document


def _resolve(root: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _described(
    root: dict[str, Any], node: Any, path: str, seen: frozenset[str]
) -> Iterator[tuple[str, str]]:
    """(property path, description) for every described property reachable from ``node``.

    Paths read ``/assets[]/media_refs[]/source``. Conditional branches (``if``/``then``/``else``,
    ``not``) restate constraints and are not followed.
    """
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if ref is not None and ref not in seen:
        yield from _described(root, _resolve(root, ref), path, seen | {ref})
    for keyword in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(keyword, ()):
            yield from _described(root, branch, path, seen)
    if "items" in node:
        yield from _described(root, node["items"], f"{path}[]", seen)
    for key, prop in node.get("properties", {}).items():
        here = f"{path}/{key}"
        if isinstance(prop, dict) and "description" in prop:
            yield here, prop["description"]
        yield from _described(root, prop, here, seen)


def _descriptions(document: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, text in _described(document, document, "", frozenset()):
        found.setdefault(path, set()).add(text)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_every_property_is_described(name: str) -> None:
    document = ek.json_schema("som", name)
    defs = document.get("$defs", {})
    objects = {"(root)": document, **{f"$defs/{k}": v for k, v in defs.items()}}
    missing = []
    for where, schema in objects.items():
        for key, prop in schema.get("properties", {}).items():
            if prop is False:  # a retired key the schema refuses: nothing to describe
                continue
            text = prop.get("description")
            if not (isinstance(text, str) and text.strip()):
                missing.append(f"{where}.{key}")
    assert not missing, f"undescribed properties in som/{name}: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_every_model_is_described(name: str) -> None:
    document = ek.json_schema("som", name)
    assert document["description"].strip()
    for key, schema in document.get("$defs", {}).items():
        assert schema.get("description", "").strip(), f"$defs/{key} of som/{name}"


@pytest.mark.parametrize("name", NAMES)
def test_official_descriptions_are_kept_verbatim(name: str) -> None:
    official = _descriptions(_official(name))
    generated = _descriptions(ek.json_schema("som", name))
    differing = {
        path: (texts, generated.get(path))
        for path, texts in official.items()
        if generated.get(path) != texts
    }
    assert not differing, json.dumps(
        {
            p: {"official": sorted(o), "generated": sorted(g or ())}
            for p, (o, g) in differing.items()
        },
        indent=2,
        ensure_ascii=False,
    )


def test_the_official_schemas_are_compared() -> None:
    # Guards the walk itself: the official pack describes these many property paths (a property
    # reached by several paths, like review.reviewer, counts once per path).
    counts = {name: len(_descriptions(_official(name))) for name in NAMES}
    assert counts == {
        "envelope": 10,
        "story-context": 35,
        "telling-event": 6,
        "link-event": 0,
        "delivery-media-available": 4,
        "system-audit": 0,
        "skill-warning": 5,
    }


def test_envelope_descriptions_reach_the_payload_families() -> None:
    # Known payloads sit behind the envelope's message_type dispatch (allOf/if/then), which the
    # walk does not follow; each family is compared on its own schema above. The envelope's own
    # $defs carry the same family models, so their descriptions are the same texts.
    envelope = ek.json_schema("som", "envelope")["$defs"]
    for name in NAMES:
        if name == "envelope":
            continue
        family = ek.json_schema("som", name)
        title = family["title"]
        assert envelope[title]["properties"] == family["properties"], name
