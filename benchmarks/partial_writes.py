"""Partial writes into sharded arrays: zarrbolt against zarr-python (default and fused pipelines),
zarrs and tensorstore, in interleaved rounds, each system in its own worker process.

    PYTHONPATH=src .venv-ref/bin/python benchmarks/partial_writes.py [--size 256x1024x1024]
        [--rounds 5] [--threads 2] [--systems ...] [--workloads inner,slab,append] [--dir DIR]

The array is layout b of the anchors harness (shards 256x512x512 of 64^3 inner chunks,
[bytes, blosc zstd clevel 3 bitshuffle], index [bytes, crc32c]) holding a synthetic volume;
each system works on its own copy.  Workloads (times per call):

* ``inner``: one 64^3 inner chunk rewritten (aligned, random positions) inside an existing shard;
* ``slab``: a z-slab 8 planes deep across all shards (``a[z:z+8] = ...``, z inside inner chunks);
* ``append``: a growing stack: ``resize`` by 8 planes, then write them (the acquisition pattern),
  from 8 planes up to 64 (the time is per step).

Besides the time, the bytes each call wrote to the store are measured from the shard files
(a file replaced by rename counts whole, a file extended in place by its growth), and the raw
codec work of one call (numcodecs Blosc, same threads: the floor no system can beat) is timed
for the write efficiency = floor / time.
"zarrbolt" is the default ``shard_update="rewrite"``, "zarrbolt-append" the ``"append"`` mode.
Prints per workload the median per call, bytes written per call, and fastest reference / zarrbolt
(goal >= 1.5)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

BLOSC = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2,
                                            "blocksize": 0}}
SYSTEMS = ("zarrbolt", "zarrbolt-append", "tensorstore", "zarrs", "zarr-python", "zarr-python-fused")


def metadata(shape: tuple[int, ...]) -> dict:
    return {
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 512, 512]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [64, 64, 64],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, BLOSC],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}],
        "attributes": {},
    }


def volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Smooth background plus noise (compresses about 2x with blosc zstd, like the harness's)."""
    rng = np.random.default_rng(seed)
    z, y, x = (np.linspace(0, 3, n, dtype=np.float32) for n in shape)
    base = 800 + 300 * np.sin(z)[:, None, None] * np.cos(y)[None, :, None] + 200 * np.sin(2 * x)[None, None, :]
    return (base + rng.normal(0, 20, size=shape).astype(np.float32)).astype(np.uint16)


# ---------------------------------------------------------------------------- the systems (worker side)
class System:
    def __init__(self, name: str, threads: int):
        self.name = name
        if name.startswith("zarrbolt"):
            import zarrbolt

            zarrbolt.config.set(threads=threads, shard_update="append" if name == "zarrbolt-append" else "rewrite")
            self.zb = zarrbolt
        elif name == "tensorstore":
            import tensorstore as ts

            self.ts = ts
            self.ctx = ts.Context({"data_copy_concurrency": {"limit": threads}, "file_io_concurrency": {"limit": threads},
                                   "file_io_sync": False, "cache_pool": {"total_bytes_limit": 0}})
        else:
            import zarr

            path = {"zarr-python": "zarr.core.codec_pipeline.BatchedCodecPipeline",
                    "zarr-python-fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
                    "zarrs": "zarrs.ZarrsCodecPipeline"}[name]
            if name == "zarrs":
                import zarrs  # noqa: F401
            zarr.config.set({"threading.max_workers": threads, "codec_pipeline.path": path})
            self.zarr = zarr

    def open(self, path: str):
        if self.name.startswith("zarrbolt"):
            return self.zb.open_array(path, mode="r+")
        if self.name == "tensorstore":
            return self.ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}, open=True,
                                context=self.ctx).result()
        return self.zarr.open_array(path, mode="r+")

    def write(self, h, sel, v) -> None:
        if self.name == "tensorstore":
            h[sel].write(v).result()
        else:
            h[sel] = v

    def resize(self, h, shape):
        if self.name == "tensorstore":
            return h.resize(exclusive_max=shape, expand_only=True).result()
        h.resize(shape)
        return h


def snapshot(path: str) -> dict[str, tuple[int, int]]:
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            if f != "zarr.json":
                st = os.stat(os.path.join(root, f))
                out[os.path.join(root, f)] = (st.st_ino, st.st_size)
    return out


def written(before: dict, after: dict) -> int:
    """Bytes written between two snapshots: new or replaced files whole, extended files' growth."""
    n = 0
    for f, (ino, size) in after.items():
        old = before.get(f)
        if old is None or old[0] != ino:
            n += size
        elif size != old[1]:
            n += max(size - old[1], 0)
    return n


def worker(name: str, threads: int, base: str, work: str) -> None:
    sysm = System(name, threads)
    mine = os.path.join(work, name)
    shutil.rmtree(mine, ignore_errors=True)
    shutil.copytree(base, mine)
    with open(os.path.join(base, "zarr.json")) as f:
        meta = json.load(f)
    shape = tuple(meta["shape"])
    rng = np.random.default_rng(7)
    block = volume((64, 64, 64), 1)
    slab = volume((8,) + shape[1:], 2)
    print(json.dumps({"ready": name}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        wl, n = cmd["workload"], cmd["n"]
        times, nbytes = [], []
        if wl in ("inner", "slab"):
            h = sysm.open(mine)
            for _ in range(n):
                if wl == "inner":
                    c = [int(rng.integers(0, s // 64)) * 64 for s in shape]
                    sel = tuple(slice(k, k + 64) for k in c)
                    v = block
                else:
                    z = int(rng.integers(0, shape[0] // 64)) * 64 + 8 * int(rng.integers(1, 7))
                    sel = (slice(z, z + 8), slice(None), slice(None))
                    v = slab
                snap = snapshot(mine)
                t = time.perf_counter()
                sysm.write(h, sel, v)
                times.append(time.perf_counter() - t)
                nbytes.append(written(snap, snapshot(mine)))
        else:  # append: a fresh stack of 8 planes grown to 8 * (n + 1)
            grow = os.path.join(work, name + "-grow")
            shutil.rmtree(grow, ignore_errors=True)
            os.makedirs(grow)
            with open(os.path.join(grow, "zarr.json"), "w") as f:
                json.dump(metadata((8,) + shape[1:]), f)
            h = sysm.open(grow)
            sysm.write(h, (slice(0, 8), slice(None), slice(None)), slab)
            depth = 8
            for _ in range(n):
                snap = snapshot(grow)
                t = time.perf_counter()
                h = sysm.resize(h, (depth + 8,) + shape[1:])
                sysm.write(h, (slice(depth, depth + 8), slice(None), slice(None)), slab)
                times.append(time.perf_counter() - t)
                nbytes.append(written(snap, snapshot(grow)))
                depth += 8
        print(json.dumps({"times": times, "bytes": nbytes}), flush=True)


# ---------------------------------------------------------------------------- orchestration
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="256x1024x1024")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--workloads", default="inner,slab,append")
    ap.add_argument("--per-round", default="inner=6,slab=2,append=7", help="calls per round and workload")
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one, deleted)")
    ap.add_argument("--worker", nargs=3, metavar=("SYSTEM", "BASE", "WORK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], args.threads, args.worker[1], args.worker[2])
        return
    shape = tuple(int(s) for s in args.size.split("x"))
    work = args.dir or tempfile.mkdtemp(prefix="zb-pwrite-")
    os.makedirs(work, exist_ok=True)
    base = os.path.join(work, "base")
    import zarrbolt

    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    with open(os.path.join(base, "zarr.json"), "w") as f:
        json.dump(metadata(shape), f)
    zarrbolt.open_array(base, mode="r+")[...] = volume(shape)
    per = {k: int(v) for k, v in (kv.split("=") for kv in args.per_round.split(","))}
    procs = {}
    for name in args.systems.split(","):
        p = subprocess.Popen([sys.executable, __file__, "--threads", str(args.threads), "--worker", name, base, work],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        if not line:
            print(f"{name}: worker failed to start", file=sys.stderr)
            continue
        procs[name] = p
    res: dict = {}
    workloads = args.workloads.split(",")
    for r in range(args.rounds):
        names = list(procs)
        names = names[r % len(names):] + names[: r % len(names)]  # the order rotates per round
        for wl in workloads:
            for name in names:
                p = procs[name]
                p.stdin.write(json.dumps({"workload": wl, "n": per[wl]}) + "\n")
                p.stdin.flush()
                line = p.stdout.readline()
                if not line:
                    res.setdefault((name, wl), {"error": True})
                    continue
                got = json.loads(line)
                d = res.setdefault((name, wl), {"times": [], "bytes": []})
                d["times"] += got["times"]
                d["bytes"] += got["bytes"]
    for p in procs.values():
        p.stdin.close()
        p.wait()
    report(res, workloads, list(procs), shape, args)
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)


def codec_floor(shape: tuple[int, ...], threads: int, rounds: int) -> dict[str, float]:
    """Per workload, the raw codec work of one call (numcodecs Blosc, ``threads`` threads, one
    inner chunk per task, no zarr machinery): ``inner`` encodes one 64^3 chunk; ``slab`` and
    ``append`` decode and encode every inner chunk of one 64-deep layer of the volume."""
    try:
        import numcodecs
        from numcodecs import Blosc
    except ImportError:
        return {}
    from concurrent.futures import ThreadPoolExecutor

    numcodecs.blosc.use_threads = False
    codec = Blosc(cname="zstd", clevel=3, shuffle=Blosc.BITSHUFFLE, typesize=2)
    layer = volume((64,) + shape[1:], 3)
    chunks = [np.ascontiguousarray(layer[:, y:y + 64, x:x + 64])
              for y in range(0, shape[1], 64) for x in range(0, shape[2], 64)]
    stored = [codec.encode(c) for c in chunks]

    def rmw(i: int) -> None:
        codec.decode(stored[i])
        codec.encode(chunks[i])

    out: dict[str, list] = {"inner": [], "slab": []}
    with ThreadPoolExecutor(threads) as ex:
        for _ in range(max(rounds, 3)):
            t = time.perf_counter()
            codec.encode(chunks[0])
            out["inner"].append(time.perf_counter() - t)
            t = time.perf_counter()
            list(ex.map(rmw, range(len(chunks))))
            out["slab"].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in out.items()}
    med["append"] = med["slab"]
    return med


def report(res: dict, workloads: list, names: list, shape: tuple, args: argparse.Namespace) -> None:
    print(f"\npartial writes, layout b, volume {'x'.join(map(str, shape))} uint16, {args.threads} threads, "
          f"{args.rounds} interleaved rounds; median per call (bytes written per call)\n")
    floor = codec_floor(shape, args.threads, args.rounds)
    print("| workload | " + " | ".join(names) + " | fastest ref / zarrbolt | fastest ref / zarrbolt-append "
          "| codec floor (efficiency: zarrbolt, -append, fastest ref) |")
    print("|---|" + "---|" * (len(names) + 3))
    for wl in workloads:
        med = {}
        cells = []
        for name in names:
            d = res.get((name, wl), {})
            if not d.get("times"):
                cells.append("failed")
                continue
            med[name] = statistics.median(d["times"])
            cells.append(f"{med[name] * 1e3:.1f} ms ({statistics.median(d['bytes']) / 2**20:.2f} MiB)")
        refs = [v for k, v in med.items() if not k.startswith("zarrbolt")]
        ratios = []
        for mine in ("zarrbolt", "zarrbolt-append"):
            ratios.append(f"{min(refs) / med[mine]:.2f}" if refs and mine in med else "-")
        eff = "-"
        if wl in floor:
            f = floor[wl]
            effs = [f"{f / med[k]:.2f}" if k in med else "-" for k in ("zarrbolt", "zarrbolt-append")]
            effs.append(f"{f / min(refs):.2f}" if refs else "-")
            eff = f"{f * 1e3:.1f} ms ({', '.join(effs)})"
        print(f"| {wl} | " + " | ".join(cells) + " | " + " | ".join(ratios) + f" | {eff} |")


if __name__ == "__main__":
    main()
