"""Peak resident memory of a full read, and of a read-then-write round trip, each in a fresh
process (see ../peak_memory.py)."""

from __future__ import annotations

import json
import subprocess
import sys

MiB = 1 << 20
# The goals (issue 22): a full read's peak at most 1.1x its output + 64 MiB; a round trip's
# (read the volume, write it to a new array) at most 1.3x the volume.
READ_FACTOR, READ_EXTRA = 1.1, 64 * MiB
ROUND_TRIP_FACTOR = 1.3

CHILD = r"""
import json, os, shutil, sys, tempfile
import zarrbolt as zb

def peak():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024

def reset_peak():  # Linux: VmHWM starts again from the current resident size
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass

path, threads, mode, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
zb.config.set(threads=threads)
if cache != "default":
    zb.config.set(output_cache_bytes=0 if cache == "off" else int(cache))
a = zb.open_array(path, mode="r")
a[tuple(slice(0, min(8, n)) for n in a.shape)]
start = peak()
reset_peak()
before = peak()
out = a[...]
after_read = peak()
after = after_read
if mode == "roundtrip":
    tmp = tempfile.mkdtemp(prefix="zb-peak-rt-")
    try:
        os.makedirs(f"{tmp}/w.zarr")
        shutil.copy(f"{path}/zarr.json", f"{tmp}/w.zarr/zarr.json")
        w = zb.open_array(f"{tmp}/w.zarr", mode="r+")
        w[...] = out
        after = peak()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
print(json.dumps({"nbytes": out.nbytes, "start": start, "before": before, "after_read": after_read,
                  "after": after}))
"""


def measure(path: str, threads: int, mode: str = "read", cache: str = "default") -> dict:
    """Peak memory of a full read (``mode="read"``) or of a read followed by writing the result
    to a new array of the same metadata (``"roundtrip"``), in a fresh process.  ``cache``:
    ``"default"``, ``"off"`` or a number of bytes for ``output_cache_bytes``.

    Keys: ``nbytes`` (the volume), ``before`` (resident memory before the read: the interpreter,
    numpy, zarrbolt, the open array), ``after`` (the peak), ``added`` (after - before: what the
    operation needs), ``ratio`` (added / nbytes), ``goal`` (what it may add: 1.1 x output + 64
    MiB for a read, 1.3 x the volume for a round trip), ``of_goal`` (added / goal) and ``ok``."""
    res = subprocess.run([sys.executable, "-c", CHILD, path, str(threads), mode, cache], check=True,
                         capture_output=True, text=True)
    r = json.loads(res.stdout.strip().splitlines()[-1])
    n = r["nbytes"]
    r["added"] = r["after"] - r["before"]
    r["ratio"] = r["added"] / n
    r["goal"] = READ_FACTOR * n + READ_EXTRA if mode == "read" else ROUND_TRIP_FACTOR * n
    r["of_goal"] = r["added"] / r["goal"]
    r["ok"] = r["added"] <= r["goal"]
    return r
