"""``zarrbolt versions`` (also ``zarrbolt --version``)."""

from __future__ import annotations

import argparse


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("versions", help="print versions of zarrbolt and its C libraries")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import zarrbolt

    zarrbolt.show_versions()
    return 0
