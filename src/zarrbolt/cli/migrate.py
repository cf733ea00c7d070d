"""``zarrbolt migrate``: convert a Zarr v2 array or group to Zarr v3 (metadata only, chunks kept)."""

from __future__ import annotations

import argparse


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    m = sub.add_parser("migrate", help="convert a Zarr v2 array or group (and everything below it) to Zarr v3")
    m.add_argument("source", help="the v2 store (a path or file:// URI)")
    m.add_argument("dest", nargs="?", default=None, help="where to write the v3 copy (default: convert in place)")
    m.add_argument("--path", default=None, help="the node inside the source store (default: its root)")
    m.add_argument("--chunk-key-encoding", choices=("v2", "default"), default="v2",
                   help="keep the v2 chunk keys (default) or rename them to v3's c/... keys")
    m.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import zarrbolt

    node = zarrbolt.migrate(args.source, args.dest, path=args.path, chunk_key_encoding=args.chunk_key_encoding)
    print(f"converted to Zarr v3: {node!r}")
    return 0
