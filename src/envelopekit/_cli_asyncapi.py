"""``envelopekit asyncapi``: print or write the AsyncAPI 3.0 document of one spec or all three.

The BabelQueue document takes its URNs from a ``Router`` (``--router package.module:router``)
and from ``--urn URN[=package.module:Model]``, importable from the working directory as
``compat``'s models are. Exit status: 0 written, 2 usage (an import that fails, an option of
another spec, names that collide, an unwritable path).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO, Any, Final

from ._check import SPECS
from ._cli_input import UsageError, display, imported, why

__all__ = ["add_parser", "run"]

EXIT_WRITTEN: Final = 0


def add_parser(commands: Any) -> None:
    """Register ``asyncapi`` on the ``envelopekit`` sub-command parsers."""
    parser = commands.add_parser(
        "asyncapi",
        help="print or write the AsyncAPI 3.0 documents generated from the models",
        description=(
            "The AsyncAPI 3.0 document of a spec: BabelQueue queues and their dead-letter "
            "queues (a message per URN), the SOM bus (a message per message_type), Matrix ops "
            "with their replies. One spec is printed; --out DIR writes <DIR>/<spec>.asyncapi.json. "
            "Exit status: 0 done, 2 usage or I/O error (a module that does not import, an "
            "option of another spec, two names on one key)."
        ),
    )
    parser.add_argument(
        "--spec",
        choices=("all", *SPECS),
        default="all",
        help="the spec (default: all three, which needs --out)",
    )
    parser.add_argument("--out", metavar="DIR", help="write <DIR>/<spec>.asyncapi.json")
    parser.add_argument(
        "--router",
        metavar="MODULE:ATTR",
        help="babelqueue: a Router whose URNs (and data models) become messages",
    )
    parser.add_argument(
        "--urn",
        action="append",
        default=[],
        metavar="URN[=MODULE:MODEL]",
        help="babelqueue: a URN, optionally with its data model (repeatable)",
    )
    parser.add_argument(
        "--queue",
        action="append",
        default=[],
        metavar="NAME",
        help="babelqueue: a queue, a channel with its dead-letter queue (repeatable; "
        "default: the channel {queue})",
    )
    parser.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="TOPIC=TYPE[,TYPE...]",
        help="som: a topic and the message_type values it carries (repeatable; default: "
        "som.<message_type> per known type)",
    )
    parser.add_argument(
        "--op",
        action="append",
        default=[],
        metavar="OP",
        help="matrix: an op served, an operation with its reply (repeatable; default: any op)",
    )
    parser.add_argument(
        "--title", help="info.title (default: the spec's own title, such as 'SOM 1.0 bus')"
    )
    parser.add_argument(
        "--api-version", default="1.0.0", help="info.version of the API described (default 1.0.0)"
    )


def _import(reference: str) -> Any:
    module_name, colon, name = reference.partition(":")
    if not colon or not module_name or not name:
        raise UsageError(f"{reference!r} is not module:attribute")
    return imported(module_name, name)


def _writable(option: str, urn: str, model: Any) -> None:
    """Refuse a ``data`` model pydantic cannot write a JSON Schema for, naming its option."""
    from pydantic import TypeAdapter

    # The document writes all the models at once: an error there could name none of them.
    try:
        TypeAdapter(model).json_schema(by_alias=True)
    except Exception as exc:
        raise UsageError(
            f"{option}: cannot write the schema of the data model of {urn}: {why(exc)}"
        ) from exc


# The flag that gives each of `asyncapi_document`'s options.
_FLAGS: Final[dict[str, str]] = {
    "router": "--router",
    "urns": "--urn",
    "queues": "--queue",
    "topics": "--topic",
    "ops": "--op",
}


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {"title": args.title, "version": args.api_version}
    if args.router is not None:
        from .babelqueue import Router

        router = _import(args.router)
        if not isinstance(router, Router):
            raise UsageError(f"{args.router} is not an envelopekit.babelqueue.Router")
        for urn in router.urns():
            model = router.data_model(urn)
            if model is not None:
                _writable(f"--router {args.router}", urn, model)
        options["router"] = router
    if args.urn:
        urns: dict[str, Any] = {}
        for given in args.urn:
            urn, equals, reference = given.partition("=")
            if urn in urns:
                raise UsageError(f"--urn {urn} is given twice")
            model = _import(reference) if equals else None
            if model is not None:
                # Any type pydantic reads (a model, a dataclass, a TypedDict), as the library
                # takes it: a function or a plain class is one it has no schema for.
                _writable(f"--urn {given}", urn, model)
            urns[urn] = model
        options["urns"] = urns
    if args.queue:
        options["queues"] = list(args.queue)
    if args.topic:
        topics: dict[str, list[str]] = {}
        for given in args.topic:
            topic, equals, types = given.partition("=")
            if not equals:
                raise UsageError(f"--topic {given!r} is not TOPIC=TYPE[,TYPE...]")
            topics.setdefault(topic, []).extend(t.strip() for t in types.split(",") if t.strip())
        options["topics"] = topics
    if args.op:
        options["ops"] = list(args.op)
    return options


def run(args: argparse.Namespace, stdout: IO[bytes], stderr: IO[str]) -> int:
    """Run ``asyncapi`` with parsed ``args``; returns the exit status."""
    # Loaded here: `validate` never pays for the generator.
    from ._asyncapi import asyncapi_document, refuse_strays, render, write_asyncapi

    options = _options(args)
    specs = SPECS if args.spec == "all" else (args.spec,)
    try:
        refuse_strays(specs, options, _FLAGS)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.out is None:
        if len(specs) != 1:
            raise UsageError("--spec all writes three documents: give --out DIR")
        try:
            document = render(asyncapi_document(specs[0], **options))
        except (ValueError, TypeError) as exc:
            raise UsageError(str(exc)) from exc
        # Outside the try: the output's own failures are `main`'s to report (a full disk is
        # a message and 2, a reader gone away 141), not an OSError of the files written here.
        stdout.write(document)
        return EXIT_WRITTEN
    try:
        written = write_asyncapi(Path(args.out), specs, **options)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        where = display(exc.filename if exc.filename is not None else str(args.out))
        raise UsageError(f"cannot write {where}: {exc.strerror or exc}") from exc
    for path in written:
        stderr.write(f"wrote {display(path)}\n")
    return EXIT_WRITTEN
