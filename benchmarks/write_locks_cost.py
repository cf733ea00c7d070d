"""What the write locks (``write_lock`` option) cost: the same writes with the option on and off,
interleaved, on a LocalStore; medians of ``--repeats`` rounds and the median of the per-round
ratios on / off.

    python benchmarks/write_locks_cost.py [--repeats 9] [--dir DIR] [--cpu]

``--cpu`` times the process's CPU time (all threads) instead of the wall clock: steadier on a busy
machine, and the locks' cost is system calls, which it counts.

- ``full shards``: a 1024x1024 int32 array in 256x256 shards of 64x64 inner chunks (zstd),
  written whole (16 shards; no lock is taken: the goal is a ratio within 1.03);
- ``partial shard``: 64 writes of one inner chunk each into existing shards (read-modify-write
  of the shard under its lock);
- ``one-element, chunked`` / ``one-element, sharded``: 500 writes of one element each."""

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

N = 1024
_clock = time.perf_counter


def _arr(path: str, sharded: bool):
    kw = {"chunks": (64, 64), "shards": (256, 256)} if sharded else {"chunks": (64, 64)}
    return zarrbolt.create_array(LocalStore(path), shape=(N, N), dtype="int32", fill_value=0, overwrite=True, **kw)


def case_full(path: str, data: np.ndarray) -> float:
    a = _arr(path, True)
    t = _clock()
    a[:] = data
    return _clock() - t


def case_partial(path: str, data: np.ndarray) -> float:
    a = _arr(path, True)
    a[:] = data
    rng = np.random.default_rng(1)
    t = _clock()
    for _ in range(64):
        i, j = rng.integers(0, N // 64, 2) * 64
        a[i:i + 64, j:j + 64] = 5
    return _clock() - t


def _one_element(path: str, data: np.ndarray, sharded: bool) -> float:
    a = _arr(path, sharded)
    a[:] = data
    rng = np.random.default_rng(2)
    idx = rng.integers(0, N, (500, 2))
    t = _clock()
    for i, j in idx:
        a[int(i), int(j)] = 9
    return _clock() - t


CASES = {
    "full shards": case_full,
    "partial shard (64 inner-chunk writes)": case_partial,
    "one-element, chunked (500 writes)": lambda p, d: _one_element(p, d, False),
    "one-element, sharded (500 writes)": lambda p, d: _one_element(p, d, True),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--cpu", action="store_true", help="time CPU time instead of the wall clock")
    args = ap.parse_args()
    global _clock
    if args.cpu:
        _clock = time.process_time
    base = tempfile.mkdtemp(prefix="zb-lockcost-", dir=args.dir)
    data = np.random.default_rng(0).integers(0, 1000, (N, N), dtype="int32")
    try:
        print(f"{'case':42s} {'lock on (ms)':>13s} {'lock off (ms)':>14s} {'ratio on/off':>13s}")
        for name, fn in CASES.items():
            on, off, ratios = [], [], []
            for r in range(args.repeats):
                pair = {}
                for lock in ((True, False) if r % 2 == 0 else (False, True)):
                    path = os.path.join(base, f"a-{lock}")
                    with zarrbolt.config.set(write_lock=lock):
                        pair[lock] = fn(path, data)
                    shutil.rmtree(path, ignore_errors=True)
                on.append(pair[True])
                off.append(pair[False])
                ratios.append(pair[True] / pair[False])
            print(f"{name:42s} {statistics.median(on) * 1e3:13.2f} {statistics.median(off) * 1e3:14.2f} "
                  f"{statistics.median(ratios):13.3f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
