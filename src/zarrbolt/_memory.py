"""What the process may use: memory limits, dask workers, memory pressure, and giving memory back.

The output cache (``pipeline/outbuf.py``) keeps memory the program has dropped.  With
``output_cache_bytes = "auto"`` (the default) its size is decided here, per process:

* inside a dask.distributed worker: 0 (the worker's memory manager counts what tasks hold, not
  what a library keeps; memory it cannot see would make it spill and pause too late).  Detected
  without importing ``distributed``: only when the program already has.
* else the least of 1 GiB, 1/16 of the machine's memory and 1/16 of the process's memory limit
  (cgroup v2 ``memory.max``, cgroup v1 ``memory.limit_in_bytes``, ``RLIMIT_AS``, ``RLIMIT_DATA``).

:func:`malloc_trim` hands the allocator's free lists back; ``zarrbolt.release_memory()``
(``pipeline/outbuf.py``, which owns what zarrbolt keeps between reads) calls it.
"""

from __future__ import annotations

import os
import sys
import threading

AUTO_MAX = 1 << 30  # the most the output cache keeps by default
AUTO_FRACTION = 16  # ... and at most 1/16 of the machine's memory or of the process's limit
# Memory pressure: the cache is dropped when the memory still available (to the machine, or
# under the process's cgroup limit) falls below this fraction of the total / the limit.
PRESSURE_FRACTION = 0.10

_auto: int | None = None  # the 'auto' size, worked out once per process
_auto_lock = threading.Lock()


def physical_memory() -> int | None:
    """Bytes of physical memory (POSIX), or None where unknown."""
    try:
        n = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return n if n > 0 else None


def _read_int(path: str) -> int | None:
    """The number in a one-line file (cgroup), or None when absent, 'max' or unreadable."""
    try:
        with open(path) as f:
            s = f.read().strip()
    except OSError:
        return None
    try:
        v = int(s)
    except ValueError:  # "max"
        return None
    return v if v > 0 else None


def _cgroup_mounts(mountinfo: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(cgroup2 mounts, cgroup v1 memory-controller mounts) as (root inside the hierarchy, mount
    point), from /proc/self/mountinfo."""
    v2: list[tuple[str, str]] = []
    v1: list[tuple[str, str]] = []
    try:
        with open(mountinfo) as f:
            lines = f.read().splitlines()
    except OSError:
        return v2, v1
    for line in lines:
        left, sep, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if not sep or len(fields) < 5 or len(rest) < 3:
            continue
        if rest[0] == "cgroup2":
            v2.append((fields[3], fields[4]))
        elif rest[0] == "cgroup" and "memory" in rest[2].split(","):
            v1.append((fields[3], fields[4]))
    return v2, v1


def _cgroup_dirs(proc: str = "/proc/self") -> tuple[list[str], list[str]]:
    """(cgroup v2 directories, cgroup v1 memory-controller directories) of the process whose
    /proc directory is ``proc``, from its own group up to the top of each mount (a limit on any
    ancestor applies too)."""
    v2_mounts, v1_mounts = _cgroup_mounts(os.path.join(proc, "mountinfo"))
    out: tuple[list[str], list[str]] = ([], [])
    try:
        with open(os.path.join(proc, "cgroup")) as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, controllers, path = parts
        if hid == "0" and controllers == "":
            mounts, dirs = v2_mounts, out[0]
        elif "memory" in controllers.split(","):
            mounts, dirs = v1_mounts, out[1]
        else:
            continue
        for mroot, mpoint in mounts:
            # the group's path relative to the mount's root (a container sees its own group as /)
            rel = os.path.relpath(path, mroot) if path.startswith(mroot) else path
            rel = "" if rel == "." else rel.strip("/")
            while True:
                d = os.path.join(mpoint, rel) if rel else mpoint
                if os.path.isdir(d):
                    dirs.append(d)
                if not rel:
                    break
                rel = os.path.dirname(rel)
    return out


def cgroup_limit(proc: str = "/proc/self") -> int | None:
    """The smallest memory limit of this process's cgroups (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``), or None when there is none (``proc``: see _cgroup_dirs)."""
    v2, v1 = _cgroup_dirs(proc)
    limits = [_read_int(os.path.join(d, "memory.max")) for d in v2]
    # cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages)
    limits += [v for v in (_read_int(os.path.join(d, "memory.limit_in_bytes")) for d in v1)
               if v is not None and v < (1 << 60)]
    found = [v for v in limits if v is not None]
    return min(found) if found else None


def rlimit() -> int | None:
    """The soft ``RLIMIT_AS`` / ``RLIMIT_DATA`` of this process (the smaller), or None."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    out = []
    for name in ("RLIMIT_AS", "RLIMIT_DATA"):
        res = getattr(resource, name, None)
        if res is None:
            continue
        try:
            soft, _ = resource.getrlimit(res)
        except (OSError, ValueError):
            continue
        if soft != resource.RLIM_INFINITY and soft > 0:
            out.append(soft)
    return min(out) if out else None


def process_memory_limit() -> int | None:
    """The memory this process may use at most (cgroup or rlimit), or None when unlimited."""
    limits = [v for v in (cgroup_limit(), rlimit()) if v is not None]
    return min(limits) if limits else None


def auto_cache_bytes() -> int:
    """The output cache's size outside dask workers: min(1 GiB, machine / 16, limit / 16)."""
    global _auto
    if _auto is None:
        with _auto_lock:
            if _auto is None:
                sizes = [AUTO_MAX]
                sizes += [v // AUTO_FRACTION for v in (physical_memory(), process_memory_limit()) if v]
                _auto = min(sizes)
    return _auto


def in_dask_worker() -> bool:
    """Whether this process runs a dask.distributed worker (or this thread runs its task).
    Never imports ``distributed``."""
    d = sys.modules.get("distributed")
    if d is None:
        return False
    get_worker = getattr(d, "get_worker", None)
    if get_worker is not None:
        try:
            get_worker()
            return True
        except Exception:  # noqa: BLE001 - ValueError "No worker found" (any failure: not in a task)
            pass
    # a worker in this process (its event loop, or any other thread) that has not closed
    worker_mod = sys.modules.get("distributed.worker")
    instances = getattr(getattr(worker_mod, "Worker", None), "_instances", None)
    try:
        return any(_open_worker(w) for w in list(instances or ()))
    except Exception:  # noqa: BLE001 - a WeakSet changing while it is read
        return False


def _open_worker(w: object) -> bool:
    status = getattr(getattr(w, "status", None), "name", "")
    return status not in ("closing", "closed", "failed", "closing_gracefully")


def memory_available() -> tuple[int, int] | None:
    """(bytes still available, total) for this process: the machine's (``MemAvailable`` of
    /proc/meminfo) or, when tighter, its cgroup v2 limit less its usage; None where unknown."""
    best: tuple[int, int] | None = None
    try:
        with open("/proc/meminfo") as f:
            info = {}
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("MemTotal", "MemAvailable"):
                    info[k] = int(rest.split()[0]) * 1024
        if "MemTotal" in info and "MemAvailable" in info:
            best = (info["MemAvailable"], info["MemTotal"])
    except (OSError, ValueError, IndexError):
        pass
    v2, _ = _cgroup_dirs()
    if v2:
        limit = _read_int(os.path.join(v2[0], "memory.max"))
        used = _read_int(os.path.join(v2[0], "memory.current"))
        if limit and used is not None:
            cg = (max(limit - used, 0), limit)
            if best is None or cg[0] < best[0]:
                best = cg
    return best


def under_pressure() -> bool:
    """Whether less than PRESSURE_FRACTION of the memory is still available."""
    m = memory_available()
    return m is not None and m[0] < PRESSURE_FRACTION * m[1]


def malloc_trim() -> None:
    """Hand the allocator's free lists back to the operating system (glibc; a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        trim = getattr(libc, "malloc_trim", None)  # glibc only (not musl)
        if trim is not None:
            trim(0)
    except (OSError, AttributeError):
        pass


def _after_fork_in_child() -> None:
    global _auto, _auto_lock
    _auto = None
    _auto_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
