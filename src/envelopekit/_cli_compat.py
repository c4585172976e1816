"""``envelopekit compat OLD NEW``: is a change to a URN's payload schema backward-compatible?

``OLD`` and ``NEW`` are JSON Schema files, or ``package.module:Model`` data models (their
generated payload schemas are compared), importable from the working directory. Each breaking
change is printed with its rule id and the JSON pointer of the schema location. Exit status:
0 compatible, 1 breaking, 2 usage.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import IO, Any, Final

import orjson
from pydantic import BaseModel

from ._cli_input import UsageError, imported, one_line, one_line_json, why

__all__ = ["add_parser", "run"]

EXIT_COMPATIBLE: Final = 0
EXIT_BREAKING: Final = 1
EXIT_USAGE: Final = 2


def add_parser(commands: Any) -> None:
    """Register ``compat`` on the ``envelopekit`` sub-command parsers."""
    parser = commands.add_parser(
        "compat",
        help="check that a payload schema change is backward-compatible",
        description=(
            "Apply the BabelQueue registry's compatibility rules to two payload schemas (JSON "
            "files) or two data models (package.module:Model). Exit status: 0 compatible, "
            "1 breaking (mint a new URN), 2 usage or I/O error."
        ),
    )
    parser.add_argument("old", metavar="OLD", help="the schema in use: FILE or module:Model")
    parser.add_argument("new", metavar="NEW", help="the proposed schema: FILE or module:Model")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output (default: text)"
    )


def _not_json(constant: str) -> Any:
    # `json.loads` reads NaN and Infinity, which are no JSON (nor any bound a schema can mean).
    raise ValueError(f"{constant} is not JSON")


def _load(reference: str) -> dict[str, Any]:
    path = Path(reference)
    if path.is_file():
        try:
            schema = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_json)
        except (OSError, ValueError, RecursionError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from exc
        if not isinstance(schema, dict):
            raise UsageError(f"{path} is not a JSON Schema object")
        return schema
    module_name, colon, name = reference.partition(":")
    if not colon or not module_name or not name:
        raise UsageError(f"no such file: {reference} (a model is module:Model)")
    found = imported(module_name, name)
    if not (isinstance(found, type) and issubclass(found, BaseModel)):
        raise UsageError(f"{reference} is not a pydantic model")
    from .babelqueue._sensitive import payload_schema

    # The schema is written here, not by breaking_changes, so that a model pydantic cannot
    # write (a field of an arbitrary type) is named with the reason.
    try:
        return payload_schema(found)
    except Exception as exc:
        raise UsageError(f"cannot write the schema of {reference}: {why(exc)}") from exc


def run(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    """Run ``compat`` with parsed ``args``; returns the exit status."""
    # Imported here: every other command (``validate`` above all) starts without them.
    from .babelqueue._evolution import breaking_changes
    from .babelqueue._payload_schema import SchemaRegistryError

    try:
        old, new = _load(args.old), _load(args.new)
        changes = breaking_changes(old, new)
    except (UsageError, SchemaRegistryError, TypeError) as exc:
        stderr.write(f"envelopekit compat: {one_line(str(exc))}\n")  # it may name an input
        return EXIT_USAGE
    if args.format == "json":
        report = {"compatible": not changes, "breaking": [c.to_dict() for c in changes]}
        stdout.write(one_line_json(orjson.dumps(report)) + b"\n")
    else:
        # Names from the schema printed raw could end a line and forge the next (as validate's).
        lines = [
            f"{c.rule:<40} {one_line(c.pointer) or '(root)':<32} {one_line(c.message)}\n"
            for c in changes
        ]
        verdict = (
            f"breaking: {len(changes)} change{'s' if len(changes) != 1 else ''}; "
            "mint a new URN (e.g. ...:created.v2)\n"
            if changes
            else "compatible\n"
        )
        stdout.write(("".join(lines) + verdict).encode("utf-8"))
    return EXIT_BREAKING if changes else EXIT_COMPATIBLE
