"""What keeps a :class:`~zarrbolt.storage.LocalStore` clean and inside its root: temporary file
names that say who wrote them (and the sweep of those whose writer is dead, in one directory or
a whole tree), the symlink policy, the fsync policy and the mapping of write failures to typed
errors.

Temporary files are ``.zb-tmp-<host>-<pid>-<random>`` next to the value they become (a rename
within a directory is atomic); ``<host>`` is 8 hex digits of a hash of the host name.  A
temporary file whose writer is a process of this host that no longer runs is an orphan (a
writer killed before its rename); so is one older than :data:`ORPHAN_AGE` seconds from another
host or in the format of earlier versions (``.zb-tmp-<32 hex>``).  Listings never show them.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import stat
import threading
import time
import uuid
from typing import Any, NamedTuple

from ..errors import StoreError

TMP_PREFIX = ".zb-tmp-"
ORPHAN_AGE = 24 * 3600.0  # seconds: a temp file of another host (or of an old version) is stale after this
FSYNC_POLICIES = ("none", "file", "dir")
SYMLINK_POLICIES = ("inside", "all", "none")
_WINDOWS = os.name == "nt"


def _host_tag() -> str:
    try:
        name = socket.gethostname()
    except OSError:
        name = ""
    return hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()


HOST = _host_tag()


def tmp_name() -> str:
    """A fresh temporary file name of this process."""
    return f"{TMP_PREFIX}{HOST}-{os.getpid()}-{uuid.uuid4().hex[:16]}"


def tmp_names(n: int) -> list[str]:
    """``n`` fresh temporary file names (one random draw)."""
    rnd = os.urandom(8 * n).hex()
    pid = os.getpid()
    return [f"{TMP_PREFIX}{HOST}-{pid}-{rnd[16 * i: 16 * i + 16]}" for i in range(n)]


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if _WINDOWS:  # pragma: no cover - not testable here
        import ctypes

        h = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # type: ignore[attr-defined]  # PROCESS_QUERY_LIMITED_INFORMATION
        if not h:
            return False
        code = ctypes.c_ulong()
        ok = ctypes.windll.kernel32.GetExitCodeProcess(h, ctypes.byref(code))  # type: ignore[attr-defined]
        ctypes.windll.kernel32.CloseHandle(h)  # type: ignore[attr-defined]
        return not ok or code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists (another user's process): alive
    return True


def is_orphan(name: str, mtime: float | None, now: float | None = None, max_age: float = ORPHAN_AGE) -> bool:
    """Whether temporary file ``name`` (modified at ``mtime``) was left by a writer that is
    gone: a dead process of this host, or ``max_age`` seconds old otherwise."""
    if not name.startswith(TMP_PREFIX):
        return False
    old = mtime is not None and (now if now is not None else time.time()) - mtime > max_age
    parts = name[len(TMP_PREFIX):].split("-")
    if len(parts) == 3 and parts[0] == HOST and parts[1].isdigit():
        pid = int(parts[1])
        if pid == os.getpid():
            return False  # this process's own write, in flight
        return old or not _pid_alive(pid)
    return old


def sweep(directory: str, max_age: float = ORPHAN_AGE) -> list[str]:
    """Remove the orphaned temporary files of ``directory`` (see :func:`is_orphan`); the paths
    removed.  Errors (a directory gone, a file removed meanwhile) are ignored."""
    removed: list[str] = []
    now = time.time()
    try:
        with os.scandir(directory) as it:
            entries = [e for e in it if e.name.startswith(TMP_PREFIX)]
    except OSError:
        return removed
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode) or not is_orphan(e.name, st.st_mtime, now, max_age):
                continue
            os.unlink(e.path)
            removed.append(e.path)
        except OSError:
            continue
    return removed


class TreeTempFiles(NamedTuple):
    """The temporary files below a directory tree (paths relative to its root, ``/``-separated)."""

    orphans: list[str]  # left by writers that are gone (see :func:`is_orphan`)
    live: list[str]  # of writers still running
    removed: list[str]  # the orphans removed (or already gone)


def tree_temp_files(root: str, max_age: float = ORPHAN_AGE, *, remove: bool = False) -> TreeTempFiles:
    """The temporary files in the directory tree ``root`` (links to directories are not followed,
    directories named like temporary files are skipped), sorted into orphans and those of running
    writers; with ``remove`` the orphans are removed (one removed meanwhile counts as removed, one
    that cannot be removed does not).  A file renamed meanwhile is skipped: its writer finished."""
    out = TreeTempFiles([], [], [])
    for d, dirs, files in os.walk(root):  # (does not follow links to directories)
        dirs[:] = [x for x in dirs if not x.startswith(TMP_PREFIX)]
        for name in files:
            if not name.startswith(TMP_PREFIX):
                continue
            full = os.path.join(d, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            try:
                mtime = os.lstat(full).st_mtime
            except OSError:
                continue  # renamed meanwhile: its writer finished
            if not is_orphan(name, mtime, max_age=max_age):
                out.live.append(rel)
                continue
            out.orphans.append(rel)
            if remove:
                try:
                    os.unlink(full)
                    out.removed.append(rel)
                except FileNotFoundError:
                    out.removed.append(rel)
                except OSError:
                    pass
    return out


class Sweeper:
    """Sweeps each directory a store writes to once (per store object)."""

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return (Sweeper, ())  # (a copy sweeps again: its lock cannot travel)

    def __call__(self, directory: str) -> None:
        if directory in self._done:
            return
        with self._lock:
            if directory in self._done:
                return
            self._done.add(directory)
        sweep(directory)


def parse_fsync(value: object) -> str:
    """An fsync policy from ``True``/``False`` or one of :data:`FSYNC_POLICIES`."""
    if value is True:
        return "dir"
    if value is False:
        return "none"
    if value in FSYNC_POLICIES:
        return str(value)
    raise StoreError(f"fsync must be a bool or one of {FSYNC_POLICIES}, got {value!r}")


def write_error(key: str, store: object, e: OSError, what: str = "write") -> StoreError:
    """The typed error of a failed write of ``key``: StoreFullError (no space, quota),
    StoreIOError (an I/O error of the device) or StoreError."""
    from .. import errors

    if isinstance(e, StoreError):
        return e
    code = e.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return errors.StoreFullError(f"cannot {what} {key!r} to {store}: no space left ({e})")
    if code == errno.EIO:
        return errors.StoreIOError(f"cannot {what} {key!r} to {store}: I/O error ({e})")
    return StoreError(f"cannot {what} {key!r} to {store}: {e}")


class SymlinkGuard:
    """The symlink policy of a store rooted at ``root``: ``"inside"`` follows links that resolve
    to a path inside the root and refuses the others (SymlinkError); ``"none"`` refuses every
    link below the root; ``"all"`` follows every link (trusted stores only).  Directories are
    checked once and remembered; the links among a directory's files are listed once (for the
    C reads, which open the paths they are given) and listed again when the directory changes."""

    def __init__(self, root: str, policy: str):
        if policy not in SYMLINK_POLICIES:
            raise StoreError(f"follow_symlinks must be one of {SYMLINK_POLICIES}, got {policy!r}")
        self.policy = policy
        self.root = root
        self.real_root = os.path.realpath(root)
        self._dirs: set[str] = set()
        self._links: dict[str, tuple[int, frozenset[str]]] = {}

    def inside(self, real: str) -> bool:
        r = self.real_root
        return real == r or real.startswith(r.rstrip(os.sep) + os.sep)

    def refuse(self, path: str, why: str) -> StoreError:
        from ..errors import SymlinkError

        rel = os.path.relpath(path, self.root)
        return SymlinkError(f"{rel!r} in store {self.root!r} {why} (follow_symlinks={self.policy!r})")

    def check_dir(self, directory: str) -> None:
        """Raise SymlinkError when ``directory`` (under the root) is reached through a link
        the policy refuses."""
        if self.policy == "all" or directory in self._dirs:
            return
        real = os.path.realpath(directory)
        rel = os.path.relpath(directory, self.root)
        expected = self.real_root if rel == "." else os.path.join(self.real_root, rel)
        if real != expected:  # a link on the way
            if self.policy == "none":
                raise self.refuse(directory, "is reached through a symbolic link")
            if not self.inside(real):
                raise self.refuse(directory, f"is reached through a symbolic link to {real!r}, outside the root")
        if os.path.isdir(directory):
            self._dirs.add(directory)

    def check_link(self, path: str) -> str:
        """``path`` is a symbolic link: the path to open instead (its target, inside the root),
        or SymlinkError."""
        if self.policy == "none":
            raise self.refuse(path, "is a symbolic link")
        real = os.path.realpath(path)
        if self.policy == "inside" and not self.inside(real):
            raise self.refuse(path, f"is a symbolic link to {real!r}, outside the root")
        return real

    def links_in(self, directory: str) -> frozenset[str]:
        """The names of the symbolic links in ``directory`` (empty when it is missing)."""
        try:
            mtime = os.stat(directory).st_mtime_ns
        except OSError:
            return frozenset()
        hit = self._links.get(directory)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        try:
            with os.scandir(directory) as it:
                names = frozenset(e.name for e in it if e.is_symlink())
        except OSError:
            names = frozenset()
        self._links[directory] = (mtime, names)
        return names
