"""Peak resident memory of a full read in a fresh process (see ../peak_memory.py)."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, sys
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

path, threads = sys.argv[1], int(sys.argv[2])
zb.config.set(threads=threads)
a = zb.open_array(path, mode="r")
a[tuple(slice(0, min(8, n)) for n in a.shape)]
before = peak()
out = a[...]
after = peak()
print(json.dumps({"nbytes": out.nbytes, "before": before, "after": after}))
"""


def measure(path: str, threads: int) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, path, str(threads)], check=True, capture_output=True,
                         text=True)
    r = json.loads(res.stdout.strip().splitlines()[-1])
    r["ratio"] = (r["after"] - r["before"]) / r["nbytes"]
    return r
