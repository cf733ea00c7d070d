"""The ``zarrbolt`` command line (also ``python -m zarrbolt``).

Each command is a module with ``add_parser(subparsers)`` (which makes its sub-parser and sets
``func=run``) and ``run(args) -> int``; :data:`COMMANDS` lists them in the order ``--help``
shows them.  A command module is imported when the parser is built, so it imports only
argparse-level things at the top and the rest inside ``run``."""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = (
    ("info", "zarrbolt.cli.info"),
    ("tree", "zarrbolt.cli.tree"),
    ("cp", "zarrbolt.cli.cp"),
    ("pyramid", "zarrbolt.cli.pyramid"),
    ("fsck", "zarrbolt.cli.fsck"),
    ("bench", "zarrbolt.cli.bench"),
    ("verify", "zarrbolt.cli.verify"),
    ("versions", "zarrbolt.cli.versions"),
    ("demo", "zarrbolt.cli.demo"),
    ("migrate", "zarrbolt.cli.migrate"),
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zarrbolt", description="zarrbolt command line: look at, copy, convert, check and time Zarr data "
        "(local paths and store URLs: s3://, gs://, az://, https://, memory://, file://)")
    p.add_argument("--version", action="store_true", help="print versions of zarrbolt and its C libraries")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    for _name, module in COMMANDS:
        importlib.import_module(module).add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); the exit status."""
    from ..errors import ZarrboltError

    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if args.version and func is None:
        from .versions import run as func

        args.cmd = "--version"
    if func is None:
        parser.print_help()
        return 0
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print(f"zarrbolt {args.cmd}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `zarrbolt tree x | head`
        sys.stderr.close()
        return 0
    except (ZarrboltError, OSError, MemoryError) as exc:
        print(f"zarrbolt {args.cmd}: error: {exc}", file=sys.stderr)
        return 1
