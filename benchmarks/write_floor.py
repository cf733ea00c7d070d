"""The floor under a full write of the anchors harness's layouts, next to zarrbolt's write.

The harness's write efficiency divides its raw encode (the compressor on chunks already copied
out of the volume) by the write time.  A writer does more than that with the same two cores,
and none of it can hide behind the encode while the encode keeps both cores busy:

* ``E``  the harness's raw encode: numcodecs' compressor on pre-gathered contiguous chunks, the
  chunks split ``i::2`` over 2 threads (as ``anchors_bench.py``'s ``CodecWorker.encode``);
* ``G``  the gather: every chunk copied out of the volume into a contiguous buffer, transposed
  as the chain's ``transpose`` says (the faster of numpy and zarrbolt's strided-copy kernel);
* ``F``  the files: the stored bytes written the way an atomic writer must (a temporary file per
  key, written and renamed, directories made), 2 threads, into a tree removed just before;
* ``Z``  zarrbolt's write (``create_array`` + ``a[...] = volume``), into a tree removed just
  before, as the harness does.

Rounds interleave the four.  The table gives E and Z as medians (as the harness does) and G and F
at their minimum (file writes on this kind of machine are bimodal: the floor takes the cheaper
mode), then ``E / (E + G + F)``, the best write efficiency the harness can report for a writer
whose gather and file work cannot overlap the encode (compute-bound layouts), and zarrbolt's
``E / Z``.  A layout whose files dominate (a: many
small chunks) can overlap them with the encode, so there ``Z`` may beat ``E + G + F``.

    PYTHONPATH=src .venv-ref/bin/python benchmarks/write_floor.py /tmp/memory_bench/128x512x1024_seed42 \\
        --layouts abd --rounds 5

Needs numcodecs (the reference virtualenv) and the harness's data directory (``layout_*.zarr``
and ``reference_uint16.npy``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

THREADS = 2


def _parallel(fn: Callable[[Any], Any], items: Sequence[Any]) -> float:
    """Seconds to run ``fn`` over ``items`` split ``i::THREADS`` over THREADS threads."""
    def run(part: Sequence[Any]) -> None:
        for x in part:
            fn(x)

    threads = [threading.Thread(target=run, args=(items[i::THREADS],)) for i in range(THREADS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


class Layout:
    """One harness layout: its metadata, chunk grid, chain and compressor."""

    def __init__(self, root: str, name: str, volume: np.ndarray):
        with open(os.path.join(root, f"layout_{name}.zarr", "zarr.json")) as f:
            self.meta = json.load(f)
        self.name = name
        self.volume = volume
        codecs = self.meta["codecs"]
        if codecs[0]["name"] == "sharding_indexed":
            cfg = codecs[0]["configuration"]
            self.unit, chain = tuple(cfg["chunk_shape"]), cfg["codecs"]
        else:
            self.unit, chain = tuple(self.meta["chunk_grid"]["configuration"]["chunk_shape"]), codecs
        self.order = next((c["configuration"]["order"] for c in chain if c["name"] == "transpose"), None)
        self.compressor = next(c for c in chain if c["name"] in ("blosc", "zstd", "gzip"))
        self.slices = [tuple(slice(o, min(o + u, s)) for o, u, s in zip(org, self.unit, volume.shape))
                       for org in itertools.product(*(range(0, s, u) for s, u in zip(volume.shape, self.unit)))]
        self.chunks = []
        for sl in self.slices:  # the harness's pre-gathered chunks (edge chunks padded with zeros)
            c = np.zeros(self.unit, volume.dtype)
            src = volume[sl]
            c[tuple(slice(0, n) for n in src.shape)] = src
            self.chunks.append(c)

    def compress(self, chunk: np.ndarray) -> bytes:
        cfg = self.compressor.get("configuration") or {}
        name = self.compressor["name"]
        if name == "blosc":
            import numcodecs.blosc

            shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[cfg.get("shuffle", "shuffle")]
            return numcodecs.blosc.compress(chunk, cfg["cname"].encode(), cfg.get("clevel", 5), shuffle,
                                            cfg.get("blocksize", 0), cfg.get("typesize", chunk.itemsize))
        if name == "zstd":
            import numcodecs.zstd

            return numcodecs.zstd.compress(chunk, cfg.get("level", 0))
        import zlib

        co = zlib.compressobj(cfg.get("level", 6), zlib.DEFLATED, 31)
        return co.compress(chunk) + co.flush()


def time_encode(lay: Layout) -> float:
    return _parallel(lay.compress, lay.chunks)


def time_gather(lay: Layout, use_kernel: bool) -> float:
    """The interior chunks copied out of the volume (transposed as the chain says)."""
    from zarrbolt import kernels

    local = threading.local()
    shape = lay.unit if lay.order is None else tuple(lay.unit[i] for i in lay.order)

    def one(sl: tuple[slice, ...]) -> None:
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = np.empty(shape, lay.volume.dtype)
        src = lay.volume[sl]
        if src.shape != lay.unit:
            return  # edge chunks: padded copies, a small share
        if lay.order is not None:
            src = src.transpose(lay.order)
        if use_kernel:
            kernels.strided_copy(buf, src)
        else:
            np.copyto(buf, src)

    return _parallel(one, lay.slices)


def time_zarrbolt(lay: Layout, dest: str) -> float:
    import zarrbolt
    from zarrbolt.metadata import DataType

    shutil.rmtree(dest, ignore_errors=True)
    meta = lay.meta
    dt = DataType.parse(meta["data_type"])
    t0 = time.perf_counter()
    a = zarrbolt.create_array(dest, shape=tuple(meta["shape"]), dtype=dt,
                              chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
                              codecs=meta["codecs"], fill_value=dt.parse_fill_value(meta["fill_value"]),
                              chunk_key_encoding=meta.get("chunk_key_encoding"))
    a[...] = lay.volume
    return time.perf_counter() - t0


def stored_files(root: str) -> list[tuple[str, bytes]]:
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            if n != "zarr.json":
                p = os.path.join(d, n)
                with open(p, "rb") as f:
                    out.append((os.path.relpath(p, root), f.read()))
    return out


def time_files(files: Sequence[tuple[str, bytes]], dest: str) -> float:
    """The stored bytes written atomically: temporary file, write, rename; directories made."""
    shutil.rmtree(dest, ignore_errors=True)

    def one(item: tuple[str, bytes]) -> None:
        rel, data = item
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp{threading.get_ident()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)

    return _parallel(one, files)


def measure(lay: Layout, rounds: int, work: str) -> dict[str, float]:
    """Seconds of E and Z (medians), G (the faster gather) and F (minimums) over ``rounds``
    interleaved rounds; ``Zmin`` the fastest write."""
    dest, fdest = os.path.join(work, "zarrbolt"), os.path.join(work, "files")
    time_zarrbolt(lay, dest)  # warm-up, and the stored bytes F writes
    files = stored_files(dest)
    t: dict[str, list[float]] = {k: [] for k in ("E", "Gnumpy", "Gkernel", "F", "Z")}
    for _ in range(rounds):
        t["E"].append(time_encode(lay))
        t["Gnumpy"].append(time_gather(lay, False))
        t["Gkernel"].append(time_gather(lay, True))
        t["F"].append(time_files(files, fdest))
        t["Z"].append(time_zarrbolt(lay, dest))
    shutil.rmtree(dest, ignore_errors=True)
    shutil.rmtree(fdest, ignore_errors=True)
    out = {"E": statistics.median(t["E"]), "Z": statistics.median(t["Z"]), "Zmin": min(t["Z"]),
           "G": min(t["Gnumpy"] + t["Gkernel"]), "F": min(t["F"])}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", help="the anchors harness's data directory of one volume size")
    ap.add_argument("--layouts", default="abd")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import zarrbolt

    zarrbolt.config.set(threads=THREADS)
    volume = np.load(os.path.join(args.root, "reference_uint16.npy"))
    work = tempfile.mkdtemp(prefix="zb-write-floor-")
    print(f"{args.root}: {args.rounds} interleaved rounds, {THREADS} threads; E and Z medians, G and F minimums\n")
    print("| layout | E (encode) | G (gather) | F (files) | E + G + F | zarrbolt Z (min) | best efficiency "
          "E / (E + G + F) | zarrbolt E / Z |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        for name in args.layouts:
            lay = Layout(args.root, name, volume)
            if lay.meta["data_type"] != "uint16":
                print(f"| {name} | (skipped: {lay.meta['data_type']}) |")
                continue
            m = measure(lay, args.rounds, work)
            floor = m["E"] + m["G"] + m["F"]
            ms = {k: f"{v * 1e3:.1f} ms" for k, v in m.items()}
            print(f"| {name} | {ms['E']} | {ms['G']} | {ms['F']} | {floor * 1e3:.1f} ms | {ms['Z']} ({ms['Zmin']}) | "
                  f"{m['E'] / floor:.2f} | {m['E'] / m['Z']:.2f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
