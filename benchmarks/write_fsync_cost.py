"""What each LocalStore fsync policy (``fsync=`` / the ``write_fsync`` option) costs: the same
writes with ``"none"``, ``"file"`` and ``"dir"``, rotated between rounds; medians of
``--repeats`` rounds and the ratios to ``"none"``.

    python benchmarks/write_fsync_cost.py [--repeats 5] [--dir DIR]

- ``64 chunks``: a 512x512 int32 array in 64x64 chunks (zstd) written whole (the C file batches);
- ``4 shards``: the same array in 256x256 shards of 64x64 inner chunks, written whole;
- ``100 partial``: 100 one-element writes into the chunked array (the Store API path)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

import zarrbolt
from zarrbolt.storage import LocalStore

POLICIES = ("none", "file", "dir")


def run_case(name: str, path: str, policy: str, data: np.ndarray) -> float:
    store = LocalStore(path, fsync=policy)
    kw = {"chunks": (64, 64), "shards": (256, 256)} if name == "4 shards" else {"chunks": (64, 64)}
    a = zarrbolt.create_array(store, shape=data.shape, dtype="int32", fill_value=0, overwrite=True, **kw)
    if name == "100 partial":
        a[:] = data
        t = time.perf_counter()
        for k in range(100):
            a[(k * 37) % 512, (k * 91) % 512] = 1
        return time.perf_counter() - t
    t = time.perf_counter()
    a[:] = data
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where to write (default: the temporary directory)")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="zb-fsync-", dir=args.dir)
    data = np.random.default_rng(0).integers(0, 1000, (512, 512), dtype="int32")
    try:
        print(f"{'case':14s} " + " ".join(f"{p + ' (ms)':>11s}" for p in POLICIES)
              + " " + " ".join(f"{p + '/none':>10s}" for p in POLICIES[1:]))
        for name in ("64 chunks", "4 shards", "100 partial"):
            times: dict[str, list[float]] = {p: [] for p in POLICIES}
            for r in range(args.repeats):
                for p in POLICIES[r % 3:] + POLICIES[: r % 3]:
                    path = os.path.join(base, p)
                    times[p].append(run_case(name, path, p, data))
                    shutil.rmtree(path, ignore_errors=True)
            med = {p: statistics.median(v) for p, v in times.items()}
            print(f"{name:14s} " + " ".join(f"{med[p] * 1e3:11.2f}" for p in POLICIES)
                  + " " + " ".join(f"{med[p] / med['none']:10.2f}" for p in POLICIES[1:]))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
