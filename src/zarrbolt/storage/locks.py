"""Per-key write locks: partial updates of one chunk or shard (read, modify, write) serialized
across the threads of a process and, for :class:`~zarrbolt.storage.LocalStore`, across processes.

A LocalStore array's lock file is ``<array directory>/.zb-lock`` (never a key: listings leave it
out and keys naming it are refused).  A key is locked by an advisory record lock on one byte of
that file, at an offset derived from a hash of the key (``fcntl.lockf`` / ``F_SETLKW`` on POSIX,
``msvcrt.locking`` on Windows): two keys may share a byte, which only makes their updates wait
for each other.  POSIX record locks belong to the process, so each byte also has a
``threading.Lock`` that the threads of this process take first; the lock file is kept open while a
thread of the process holds one of its bytes (closing any descriptor of a file drops every
record lock the process holds on it) and, idle, for the next update (at most MAX_IDLE files).  ``F_SETLKW`` can fail with ``EDEADLK`` when several processes
wait on one file (the kernel's deadlock detection sees process-wide owners, not the single byte
each writer waits for): that is retried, as a writer here holds one byte at a time.

Other stores get only the in-process lock (see :func:`key_lock`); remote stores with
conditional writes guard updates with the object's version instead
(:mod:`zarrbolt.pipeline.remote_write`).
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["LOCK_NAME", "LOCK_SLOTS", "FileLocks", "key_lock", "lock_offset"]

LOCK_NAME = ".zb-lock"
LOCK_SLOTS = 1 << 20  # bytes of the lock file's range that keys are spread over
_WINDOWS = os.name == "nt"

if _WINDOWS:  # pragma: no cover - not testable on this platform
    import msvcrt
else:
    import fcntl

MAX_IDLE = 16  # lock files kept open with no lock held (per process)
_registry_lock = threading.Lock()
_files: dict[str, FileLocks] = {}
_idle: collections.OrderedDict[FileLocks, None] = collections.OrderedDict()
_idle_lock = threading.Lock()  # (never held while a FileLocks' own lock is taken)
_thread_locks: dict[tuple[str, int], threading.Lock] = {}


def lock_offset(key: str) -> int:
    """The byte of a lock file that locks ``key``."""
    h = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") % LOCK_SLOTS


def _thread_lock(name: str, offset: int) -> threading.Lock:
    with _registry_lock:
        lk = _thread_locks.get((name, offset))
        if lk is None:
            lk = _thread_locks[(name, offset)] = threading.Lock()
        return lk


class FileLocks:
    """The lock file of one directory in this process (:meth:`of`).  It is open while a thread
    of the process holds one of its bytes (closing a descriptor of the file drops every record
    lock the process holds on it, so never earlier); when no thread does it stays open for the
    next update, the :data:`MAX_IDLE` most recently used at most (a process may write to any
    number of arrays)."""

    def __init__(self, path: str):
        self.path = path
        self._fd: int | None = None
        self._users: dict[int, int] = {}
        self._open_lock = threading.Lock()

    @classmethod
    def of(cls, path: str) -> FileLocks:
        with _registry_lock:
            f = _files.get(path)
            if f is None:
                f = _files[path] = cls(path)
            return f

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        try:
            try:
                return os.open(self.path, flags, 0o666)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(self.path), exist_ok=True)
                return os.open(self.path, flags, 0o666)
        except OSError as e:
            from ..errors import StoreError, StoreFullError

            cls = StoreFullError if e.errno == errno.ENOSPC else StoreError
            raise cls(f"cannot open the write lock file {self.path!r}: {e} (it must be writable "
                      "by every writer; the write_lock option turns the locks off)") from e

    def _checkout(self, stale: int | None = None) -> int:
        """The open lock file, counted as used until :meth:`_checkin`; opened afresh when
        ``stale`` (a descriptor of a lock file deleted or replaced meanwhile) is the current one."""
        with self._open_lock:
            if stale is not None and self._fd == stale:
                self._fd = None  # closed when its last user lets go
            if self._fd is None:
                self._fd = self._open()
            fd = self._fd
            self._users[fd] = self._users.get(fd, 0) + 1
        with _idle_lock:
            _idle.pop(self, None)
        return fd

    def _checkin(self, fd: int) -> None:
        with self._open_lock:
            n = self._users[fd] - 1
            if n:
                self._users[fd] = n
                return
            del self._users[fd]
            if self._fd != fd:  # a replaced lock file
                os.close(fd)
                return
        victims = []
        with _idle_lock:  # kept open for the next update; the least recently used beyond MAX_IDLE closed
            _idle[self] = None
            _idle.move_to_end(self)
            while len(_idle) > MAX_IDLE:
                victims.append(_idle.popitem(last=False)[0])
        for v in victims:
            v._close_if_idle()

    def _close_if_idle(self) -> None:
        with self._open_lock:
            fd = self._fd
            if fd is not None and not self._users.get(fd):
                self._fd = None
                os.close(fd)

    def _current(self, fd: int) -> bool:
        """Whether ``fd`` is still the file at :attr:`path` (the array may have been deleted
        and made again since another thread of this process opened it)."""
        try:
            a, b = os.fstat(fd), os.stat(self.path)
        except OSError:
            return False
        return (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev)

    @contextlib.contextmanager
    def hold(self, key: str) -> Iterator[None]:
        """Hold ``key``'s byte of this file: other threads and processes updating a key with
        that byte wait."""
        offset = lock_offset(key)
        with _thread_lock(self.path, offset):
            fd = self._checkout()
            try:
                while True:
                    _lock_byte(fd, offset)
                    if _WINDOWS or self._current(fd):
                        break
                    _unlock_byte(fd, offset)
                    old = fd
                    try:
                        fd = self._checkout(stale=old)
                    finally:
                        self._checkin(old)
            except BaseException:
                self._checkin(fd)
                raise
            try:
                yield
            finally:
                try:
                    _unlock_byte(fd, offset)
                finally:
                    self._checkin(fd)


if _WINDOWS:  # pragma: no cover - not testable on this platform

    def _lock_byte(fd: int, offset: int) -> None:
        # msvcrt.locking locks from the file position; LK_NBLCK fails at once when another
        # process holds the byte (LK_LOCK would give up after 10 s): retried with a short sleep.
        # (A lock beyond the end of the file is allowed, as with LockFileEx.)
        delay = 0.0005
        while True:
            os.lseek(fd, offset, os.SEEK_SET)
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                return
            except OSError as e:
                if e.errno not in (errno.EACCES, errno.EDEADLK):
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def _unlock_byte(fd: int, offset: int) -> None:
        os.lseek(fd, offset, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]

else:

    def _lock_byte(fd: int, offset: int) -> None:
        delay = 0.0001
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX, 1, offset, os.SEEK_SET)
                return
            except InterruptedError:
                continue
            except OSError as e:
                if e.errno != errno.EDEADLK:  # spurious with several processes: see the module doc
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.01)

    def _unlock_byte(fd: int, offset: int) -> None:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset, os.SEEK_SET)


@contextlib.contextmanager
def key_lock(store: Any, key: str, lock_dir_key: str = "") -> Iterator[None]:
    """Serialize updates of ``key`` of ``store``: across processes for a store with a lock file
    (``store.write_locks(lock_dir_key)`` returns a :class:`FileLocks`: LocalStore), else across
    the threads of this process."""
    files = None
    fn = getattr(store, "write_locks", None)
    if fn is not None:
        files = fn(lock_dir_key)
    if files is not None:
        with files.hold(key):
            yield
        return
    fn = getattr(store, "_dask_token", None)  # what names the store's data (its location)
    tok = fn() if fn is not None else None
    name = f"store:{tok!r}" if tok is not None else f"store:id:{id(store)}"
    with _thread_lock(name, lock_offset(key)):
        yield


def _after_fork_in_child() -> None:
    # record locks are not inherited; thread locks held by other threads of the parent would
    # never be released: start afresh (the inherited descriptors are left open, unused)
    global _registry_lock, _idle_lock
    _registry_lock = threading.Lock()
    _idle_lock = threading.Lock()
    _files.clear()
    _thread_locks.clear()
    _idle.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
