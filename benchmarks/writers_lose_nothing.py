"""Issue #21's table: concurrent writers and killed writers, zarrbolt next to zarr-python.

    python benchmarks/writers_lose_nothing.py [--trials 5] [--kills 20] [--ref-python PY] [--only zarrbolt|zarr]

1. Concurrent writers: 4 processes (started together at a barrier), each writing 8 distinct
   4x16 chunks of a 128x16 int32 array, one chunk per write; once unsharded (32 chunks) and once
   as one shard of 32 inner chunks.  Updates lost (of 32) per trial.
2. SIGKILL mid-write: a writer rewriting the whole array (256x192 int32, 32x32 chunks; sharded:
   128x96 shards) without end is killed at a random moment (0-80 ms after it starts writing),
   ``--kills`` times, a new writer each time.  Torn chunks: chunks that do not decode, or that
   mix two writes.  Strays: files in the store that are neither metadata nor chunks —
   ``listed``: keys a listing shows that are no chunk or metadata; ``on disk``: files on disk
   that are no chunk or metadata right after the last kill (temporary files included), and
   after one more (unkilled) write of the whole array.

zarrbolt runs in this interpreter; zarr-python in ``--ref-python`` (default ``.venv-ref/bin/python``,
zarr-python 3.4.2 there), by running this script with ``--only zarr``."""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROWS, COLS, INNER, NPROC, PER = 128, 16, 4, 4, 8
KSHAPE, KCHUNKS, KSHARDS = (256, 192), (32, 32), (128, 96)
_META = {"zarr.json", ".zarray", ".zattrs", ".zgroup"}


# ---------------------------------------------------------------------------- the two libraries
def _lib(name: str):
    if name == "zarrbolt":
        import zarrbolt

        return zarrbolt
    import zarr

    return zarr


def _create(lib: str, path: str, shape, chunks, shards=None) -> None:
    m = _lib(lib)
    kw = {"shards": shards} if shards else {}
    m.create_array(path, shape=shape, chunks=chunks, dtype="int32", fill_value=-1, **kw)


def _open(lib: str, path: str, mode: str = "r+"):
    return _lib(lib).open_array(path, mode=mode)


# ---------------------------------------------------------------------------- concurrent writers
def _writer(lib: str, path: str, w: int, barrier) -> None:
    a = _open(lib, path)
    barrier.wait()
    for j in range(PER):
        c = j * NPROC + w
        a[c * INNER:(c + 1) * INNER, :] = c


def concurrent_trial(lib: str, sharded: bool) -> int:
    path = tempfile.mkdtemp(prefix="zb-lose-")
    try:
        _create(lib, path, (ROWS, COLS), (INNER, COLS), (ROWS, COLS) if sharded else None)
        ctx = mp.get_context("spawn")
        barrier = ctx.Barrier(NPROC)
        procs = [ctx.Process(target=_writer, args=(lib, path, w, barrier)) for w in range(NPROC)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
            if p.exitcode != 0:
                raise RuntimeError(f"a writer failed ({p.exitcode})")
        got = _open(lib, path, "r")[:]
        return sum(int(not (got[c * INNER:(c + 1) * INNER] == c).all()) for c in range(ROWS // INNER))
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------- killed writers
def _child(lib: str, path: str) -> None:
    a = _open(lib, path)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    gen = 0
    while True:
        gen += 1
        a[:] = gen


def _chunk_names(path: str, sharded: bool) -> set[str]:
    block = KSHARDS if sharded else KCHUNKS
    return {f"c/{i}/{j}" for i in range(KSHAPE[0] // block[0]) for j in range(KSHAPE[1] // block[1])}


def _files(path: str) -> list[str]:
    return [os.path.relpath(os.path.join(d, n), path).replace(os.sep, "/")
            for d, _, names in os.walk(path) for n in names]


def _strays_on_disk(path: str, sharded: bool) -> int:
    chunks = _chunk_names(path, sharded)
    return sum(1 for f in _files(path) if f not in chunks and f not in _META and f != ".zb-lock")


def _strays_listed(lib: str, path: str, sharded: bool) -> int:
    chunks = _chunk_names(path, sharded)
    if lib == "zarrbolt":
        from zarrbolt.storage import LocalStore

        keys = list(LocalStore(path).list())
    else:
        import asyncio

        from zarr.storage import LocalStore as ZLocal

        async def ls() -> list[str]:
            return [k async for k in ZLocal(path).list()]

        keys = asyncio.run(ls())
    return sum(1 for k in keys if k not in chunks and k not in _META)


def _torn(lib: str, path: str, sharded: bool) -> int:
    a = _open(lib, path, "r")
    block = KSHARDS if sharded else KCHUNKS
    torn = 0
    for i in range(0, KSHAPE[0], block[0]):
        for j in range(0, KSHAPE[1], block[1]):
            try:
                b = a[i:i + block[0], j:j + block[1]]
            except Exception:  # noqa: BLE001 - any failure to decode counts
                torn += 1
                continue
            if not (b == b.flat[0]).all():
                torn += 1
    return torn


def kill_run(lib: str, sharded: bool, kills: int, seed: int) -> dict:
    path = tempfile.mkdtemp(prefix="zb-kill-")
    rng = random.Random(seed)
    try:
        _create(lib, path, KSHAPE, KCHUNKS, KSHARDS if sharded else None)
        torn = listed = 0
        for _ in range(kills):
            p = subprocess.Popen([sys.executable, __file__, "--child", lib, path], stdout=subprocess.PIPE)
            p.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.08))
            p.send_signal(signal.SIGKILL)
            p.wait()
            torn += _torn(lib, path, sharded)
            listed = max(listed, _strays_listed(lib, path, sharded))
        on_disk = _strays_on_disk(path, sharded)
        _open(lib, path)[:] = 0  # one more writer, not killed
        after = _strays_on_disk(path, sharded)
        return {"torn": torn, "listed": listed, "on_disk": on_disk, "after_next_write": after}
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------- driver
def measure(lib: str, trials: int, kills: int) -> dict:
    out = {"lib": lib, "version": _lib(lib).__version__}
    out["unsharded"] = [concurrent_trial(lib, False) for _ in range(trials)]
    out["one_shard"] = [concurrent_trial(lib, True) for _ in range(trials)]
    out["kill_chunked"] = kill_run(lib, False, kills, 1)
    out["kill_sharded"] = kill_run(lib, True, kills, 2)
    return out


def table(rows: list[dict], trials: int, kills: int) -> str:
    hdr = "| test | " + " | ".join(f"{r['lib']} {r['version']}" for r in rows) + " |"
    lines = [hdr, "|---|" + "---|" * len(rows)]

    def row(name: str, f) -> None:
        lines.append(f"| {name} | " + " | ".join(f(r) for r in rows) + " |")

    row(f"concurrent writers, distinct chunks of one **unsharded** array: updates lost (of 32), {trials} trials",
        lambda r: " ".join(map(str, r["unsharded"])))
    row(f"concurrent writers, distinct inner chunks of **one shard**: updates lost (of 32), {trials} trials",
        lambda r: " ".join(map(str, r["one_shard"])))
    row(f"SIGKILL mid-write, {kills} kills: torn chunks (chunked / sharded)",
        lambda r: f"{r['kill_chunked']['torn']} / {r['kill_sharded']['torn']}")
    row(f"SIGKILL mid-write, {kills} kills: strays a listing shows (chunked / sharded)",
        lambda r: f"{r['kill_chunked']['listed']} / {r['kill_sharded']['listed']}")
    row("... stray files on disk right after the last kill (chunked / sharded)",
        lambda r: f"{r['kill_chunked']['on_disk']} / {r['kill_sharded']['on_disk']}")
    row("... stray files on disk after the next write (chunked / sharded)",
        lambda r: f"{r['kill_chunked']['after_next_write']} / {r['kill_sharded']['after_next_write']}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--ref-python", default=os.path.join(os.path.dirname(__file__), "..", ".venv-ref", "bin", "python"))
    ap.add_argument("--only", choices=["zarrbolt", "zarr"])
    ap.add_argument("--child", nargs=2, metavar=("LIB", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return
    if args.only:
        print(json.dumps(measure(args.only, args.trials, args.kills)))
        return
    rows = [measure("zarrbolt", args.trials, args.kills)]
    env = dict(os.environ)
    ref = subprocess.run([args.ref_python, __file__, "--only", "zarr", "--trials", str(args.trials),
                          "--kills", str(args.kills)], capture_output=True, text=True, env=env, check=False)
    if ref.returncode != 0:
        print(f"zarr-python run failed:\n{ref.stderr}", file=sys.stderr)
    else:
        rows.append(json.loads(ref.stdout.strip().splitlines()[-1]))
    print(table(rows, args.trials, args.kills))
    _ = np  # (numpy is imported for the libraries' sake)


if __name__ == "__main__":
    main()
