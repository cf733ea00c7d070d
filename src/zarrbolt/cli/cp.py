"""``zarrbolt cp SRC DST``: copy or convert an array or a whole hierarchy."""

from __future__ import annotations

import argparse
import json
import sys

from ._common import (
    Bar,
    add_progress_options,
    add_store_options,
    is_url,
    parse_bytes,
    storage_options,
    want_bar,
)

EPILOG = """examples:
  zarrbolt cp v2.zarr v3.zarr --format 3                      # Zarr v2 -> v3
  zarrbolt cp raw.zarr sharded.zarr --shards 256,512,512      # unsharded -> sharded (inner chunks kept)
  zarrbolt cp a.zarr b.zarr --chunks 64 --shards 256,512,512 --compressor blosc-zstd:3
  zarrbolt cp s3://bucket/vol.zarr local.zarr --threads 8 --max-memory 2G
  zarrbolt cp big.zarr out.zarr --shards 512 --resume         # finish an interrupted copy

memory: the copy streams in blocks of whole destination shards sized so that the block, plus
the codec threads' scratch (per thread about two destination shards: one padded to the full
shard shape and its encoded bytes), stays within --max-memory; never less than one shard (the
report says when --max-memory is too small for that: use a larger value or fewer --threads)."""


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    from ..convert import COMPRESSOR_NAMES

    p = sub.add_parser("cp", help="copy or convert an array or hierarchy (v2->v3, re-chunk, shard, re-compress)",
                       description="Copy an array or a whole hierarchy, converting its layout on the way.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src", help="source array or group (path or URL)")
    p.add_argument("dst", help="destination (path or URL; must not exist unless --overwrite/--resume)")
    p.add_argument("--chunks", default=None, help="(inner) chunk shape, e.g. 64,64,64 or 64 (default: the source's)")
    p.add_argument("--shards", default="keep",
                   help="shard shape, e.g. 256,512,512, or 'none' for unsharded (default: the source's)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--codec", default=None, metavar="JSON",
                   help='compressor codec(s) as JSON, e.g. \'{"name": "zstd", "configuration": {"level": 5}}\'')
    g.add_argument("--compressor", default=None, metavar="NAME[:LEVEL]",
                   help=f"compressor shorthand: {', '.join(COMPRESSOR_NAMES)} (default: the source's)")
    p.add_argument("--format", type=int, choices=(2, 3), default=None, dest="zarr_format",
                   help="Zarr format of the copy (default: the source's)")
    p.add_argument("--dtype", default=None, help="convert the values to this data type (each must fit)")
    p.add_argument("--threads", type=int, default=None, help="worker threads (default: all cores)")
    p.add_argument("--max-memory", default="1G", help="memory budget of the streaming blocks (default 1G)")
    p.add_argument("--resume", action="store_true", help="finish an interrupted copy: keep complete shards")
    p.add_argument("--overwrite", action="store_true", help="replace what is at the destination")
    p.add_argument("--skip-errors", action="store_true",
                   help="report and skip source nodes that cannot be read (default: stop)")
    add_progress_options(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_store_options(p, "dst")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import convert

    if args.threads is not None and args.threads < 1:
        print("zarrbolt cp: error: --threads must be at least 1", file=sys.stderr)
        return 2
    bar = Bar("shards", enabled=want_bar(args))
    try:
        report = convert.copy(
            args.src, args.dst, chunks=args.chunks, shards=args.shards, codecs=args.codec,
            compressor=args.compressor, zarr_format=args.zarr_format, dtype=args.dtype, threads=args.threads,
            max_memory=parse_bytes(args.max_memory), resume=args.resume, overwrite=args.overwrite,
            skip_errors=args.skip_errors, progress=bar,
            storage_options=storage_options(args) if is_url(args.src) else None,
            dst_storage_options=storage_options(args, "dst") if is_url(args.dst) else None)
    except KeyboardInterrupt:
        bar.close()
        print("zarrbolt cp: interrupted; the shards written are complete, unfinished arrays have no metadata yet: "
              "run the same command with --resume to finish", file=sys.stderr)
        return 130
    finally:
        bar.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.summary())
    return 0
