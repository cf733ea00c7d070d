"""The anchors harness's workloads (benchmarks/anchors_bench.py) on its data, for the
memory and thread scripts (outbuf_effect.py, thread_scaling.py, peak_memory.py).

The data are the harness's: ``anchors_bench.py --size ZxYxX`` creates ``layout_<a-e>.zarr`` and
``reference_uint16.npy`` under ``--data-dir`` once.  Selections follow the harness: a 64³ block
at random unaligned positions, a plane ``arr[z]`` and ``arr[z:z+1]``, a 64×512×512 region, the
full volume; writes create the layout's array anew and assign the whole volume (what the
harness's zarrbolt adapter does).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable

import numpy as np

READS = ("full_read", "block64", "plane_z", "plane_z_slice", "roi_64x512x512")
WORKLOADS = READS + ("write",)
DEFAULT_ROOT = "/tmp/bench_data/256x1024x1024_seed42"
FLOAT_SCALE, FLOAT_OFFSET = 4.0, 100.0  # layout e: float32 = uint16 / 4 + 100 (the harness's)


def layouts(root: str, wanted: str = "abcde") -> dict[str, str]:
    """{layout: path} of the harness layouts present under ``root``."""
    return {k: f"{root}/layout_{k}.zarr" for k in wanted if os.path.isfile(f"{root}/layout_{k}.zarr/zarr.json")}


def selections(shape: tuple[int, ...], workload: str, n: int, seed: int = 0) -> list[tuple]:
    """``n`` selections of a read workload (as the harness draws them)."""
    rng = np.random.default_rng(seed)
    Z, Y, X = shape

    def at(ext):
        return tuple(slice(s, s + e) for s, e in
                     ((int(rng.integers(0, d - e + 1)), min(e, d)) for d, e in zip(shape, ext)))

    def zslab():
        z = int(rng.integers(0, Z))
        return (slice(z, z + 1), slice(None), slice(None))

    make: dict[str, Callable[[], tuple]] = {
        "full_read": lambda: (slice(None),) * 3,
        "block64": lambda: at((64, 64, 64)),
        "plane_z": lambda: (int(rng.integers(0, Z)), slice(None), slice(None)),
        "plane_z_slice": zslab,
        "roi_64x512x512": lambda: at((64, 512, 512)),
    }
    return [make[workload]() for _ in range(n)]


def reads_per_round(workload: str) -> int:
    """How many reads one timed round of a workload makes (latency workloads: several)."""
    return {"full_read": 1, "block64": 40, "plane_z": 10, "plane_z_slice": 10, "roi_64x512x512": 4}[workload]


def reference(root: str, layout: str) -> np.ndarray:
    """The volume a write workload assigns (float32 for layout e), read into memory."""
    ref = np.load(f"{root}/reference_uint16.npy")
    if layout == "e":
        ref = ref.astype(np.float32) / np.float32(FLOAT_SCALE) + np.float32(FLOAT_OFFSET)
    return ref


def write(path_in: str, path_out: str, data: np.ndarray) -> None:
    """Create ``path_out`` with the metadata of ``path_in`` and assign ``data`` (the adapter's write)."""
    import zarrbolt
    from zarrbolt.metadata import DataType

    meta = json.loads(open(f"{path_in}/zarr.json").read())
    dt = DataType.parse(meta["data_type"])
    a = zarrbolt.create_array(
        path_out, shape=tuple(meta["shape"]), dtype=dt,
        chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]), codecs=meta["codecs"],
        fill_value=dt.parse_fill_value(meta["fill_value"]), chunk_key_encoding=meta.get("chunk_key_encoding"),
        overwrite=True)
    a[...] = data


def run_round(arr, path: str, workload: str, sels: list, data: np.ndarray | None, out_dir: str) -> float:
    """Seconds one round of ``workload`` takes (per read for latency workloads)."""
    if workload == "write":
        dst = os.path.join(out_dir, "w.zarr")
        shutil.rmtree(dst, ignore_errors=True)
        t0 = time.perf_counter()
        write(path, dst, data)
        return time.perf_counter() - t0
    t0 = time.perf_counter()
    for s in sels:
        arr[s]
    return (time.perf_counter() - t0) / len(sels)


def peak_rss() -> int:
    """The process's peak resident memory in bytes (VmHWM; getrusage elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    import sys

    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024


def reset_peak() -> bool:
    """Start VmHWM again from the current RSS (Linux: /proc/self/clear_refs 5); False elsewhere."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def load_probe() -> float:
    """The 2-thread speedup of GIL-free work (sha256 of 32 MiB per thread) right now: ~2 on an idle
    2-core machine, ~1 when the other core is busy (the harness's probe)."""
    import hashlib
    import threading

    buf = bytes(32 << 20)

    def work():
        hashlib.sha256(buf).digest()

    t0 = time.perf_counter()
    work()
    work()
    one = time.perf_counter() - t0
    ts = [threading.Thread(target=work) for _ in range(2)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return one / (time.perf_counter() - t0)
