"""zarr-python 3.4.2 on an icechunk repository with zarrbolt's codec pipeline against its default
(BatchedCodecPipeline), on the same repository and the same data: a fluorescence-like uint16
volume (benchmarks/realistic_volumes.py), sharded (64^3 chunks in shards of 256^3, blosc zstd) and
unsharded (64^3 chunks, zstd).

- write: ``z[...] = data`` in a writable session (the commit that follows is timed apart: it is
  icechunk's own work, the same for both);
- full read: ``z[...]`` in a read-only session at the snapshot;
- 64^3 blocks: ``z[block]`` for every 64^3 block of the volume in a fixed random order.

Both pipelines read the array zarr-python's own pipeline wrote (and each writes its own copy); the
first repetition reads it once untimed first (and checks the values).
The repository is on the local file system (reads come from the page cache: the data were just
written) or, with ``--s3-endpoint``, in an S3 bucket.

    python benchmarks/icechunk_bench.py /data/icechunk_bench --shape 256,1024,1024 --repeat 5
    python benchmarks/icechunk_bench.py /tmp/ic_smoke --shape 64,128,128 --repeat 1     # smoke test
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PIPELINES = {"zarrbolt": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline",
             "zarr-python": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


def _layouts(shape: tuple[int, ...]) -> dict[str, dict]:
    import zarr

    chunk = tuple(min(64, n) for n in shape)
    shard = tuple(min(256, -(-n // c) * c) for n, c in zip(shape, chunk))
    return {
        "sharded": dict(chunks=chunk, shards=shard,
                        compressors=[zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")]),
        "unsharded": dict(chunks=chunk, compressors=[zarr.codecs.ZstdCodec(level=3)]),
    }


def _storage(args: argparse.Namespace, name: str):
    import icechunk

    if args.s3_endpoint:
        return icechunk.s3_storage(bucket=args.s3_bucket, prefix=f"{args.path.strip('/')}/{name}",
                                   endpoint_url=args.s3_endpoint, allow_http=args.s3_endpoint.startswith("http:"),
                                   region=args.s3_region, from_env=True, force_path_style=True)
    root = Path(args.path) / name
    if root.exists():
        shutil.rmtree(root)
    return icechunk.local_filesystem_storage(str(root))


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(args: argparse.Namespace) -> list[dict]:
    import icechunk
    import zarr

    sys.path.insert(0, str(HERE))
    import realistic_volumes

    import zarrbolt.codec_pipeline as cp

    shape = tuple(int(s) for s in args.shape.split(","))
    t = time.perf_counter()
    data = np.asarray(realistic_volumes.fluorescence(shape, seed=1))  # type: ignore[arg-type]
    print(f"data {shape} uint16 {data.nbytes / 2**20:.0f} MiB made in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    blocks = [tuple(slice(i, min(i + 64, n)) for i, n in zip(start, shape))
              for start in itertools.product(*(range(0, n, 64) for n in shape))]
    random.Random(0).shuffle(blocks)
    rows = []
    for layout, spec in _layouts(shape).items():
        repo = icechunk.Repository.create(_storage(args, layout))
        snaps = {}
        for rep in range(args.repeat):
            order = list(PIPELINES) if rep % 2 == 0 else list(reversed(PIPELINES))
            for name in order:  # write: each pipeline its own array, one commit each
                session = repo.writable_session("main")
                with zarr.config.set({"codec_pipeline.path": PIPELINES[name]}):
                    z = zarr.create_array(session.store, name=f"{name}", shape=shape, dtype="uint16", fill_value=0,
                                          overwrite=True, **spec)
                    tw = _timed(lambda: z.__setitem__(Ellipsis, data))
                tc = _timed(lambda: snaps.__setitem__(name, session.commit(f"{name} write {rep}")))
                rows.append({"layout": layout, "pipeline": name, "op": "write", "rep": rep, "s": tw, "commit_s": tc})
            for name in order:  # reads: the array zarr-python's pipeline wrote, at its snapshot
                ro = repo.readonly_session(snapshot_id=snaps["zarr-python"])
                with zarr.config.set({"codec_pipeline.path": PIPELINES[name]}):
                    z = zarr.open_array(ro.store, path="zarr-python", mode="r")
                    if rep == 0:  # untimed: the first read of a session loads icechunk's manifests
                        assert np.array_equal(z[...], data), f"{name} read other values"
                    tr = _timed(lambda: z[...])
                    tb = _timed(lambda: [z[b] for b in blocks])
                rows.append({"layout": layout, "pipeline": name, "op": "full read", "rep": rep, "s": tr})
                rows.append({"layout": layout, "pipeline": name, "op": f"{len(blocks)} blocks of 64^3", "rep": rep,
                             "s": tb})
        assert not cp.fallback_counts and not cp.delegated_counts, (dict(cp.fallback_counts), dict(cp.delegated_counts))
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| layout | operation | zarrbolt | zarr-python | speedup |", "|---|---|---:|---:|---:|"]
    keys = sorted({(r["layout"], r["op"]) for r in rows}, key=lambda k: (k[0], ["write", "full read"].index(k[1])
                                                                          if k[1] in ("write", "full read") else 2))
    for layout, op in keys:
        med = {p: statistics.median(r["s"] for r in rows if (r["layout"], r["op"], r["pipeline"]) == (layout, op, p))
               for p in PIPELINES}
        lines.append(f"| {layout} | {op} | {med['zarrbolt']:.3f} s | {med['zarr-python']:.3f} s | "
                     f"{med['zarr-python'] / med['zarrbolt']:.2f}x |")
    commits = [r["commit_s"] for r in rows if r["op"] == "write"]
    lines.append(f"\n(commits, not in the write times: median {statistics.median(commits):.3f} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="repository directory (removed and made again), or the prefix in --s3-bucket")
    ap.add_argument("--shape", default="256,1024,1024")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--s3-endpoint", help="an S3 endpoint URL (credentials from the environment)")
    ap.add_argument("--s3-bucket", default="icechunk-bench")
    ap.add_argument("--s3-region", default="us-east-1")
    ap.add_argument("--json", help="write every timing here")
    args = ap.parse_args(argv)
    rows = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
