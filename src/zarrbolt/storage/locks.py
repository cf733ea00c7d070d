"""Per-key write locks: partial updates of one chunk or shard (read, modify, write) serialized
across the threads of a process and, for :class:`~zarrbolt.storage.LocalStore`, across processes.

A LocalStore array's lock file lives outside the store, so that no other reader of the store
(zarr-python, tensorstore, ``ls``) ever sees it as a key: it is ``<lock dir>/<hash>.lock``
(:func:`lock_path`), the hash being of the real path of the array directory (stores naming one
directory differently share it), the lock dir (:func:`lock_dir`) ``$ZARRBOLT_LOCK_DIR`` or else
``<temp dir>/zarrbolt-locks``, made world-writable and sticky like ``/tmp``.  Lock files are made
readable and writable by everyone (writers of different users share an array's locks) and never
deleted: they are empty, and removing one while a writer holds it would break the exclusion.  The
locks thus coordinate the processes of one host (that see the same lock dir); writers on several
hosts of a network file system are not coordinated.  Older versions kept the lock file in the
array directory as ``.zb-lock`` (:data:`LOCK_NAME`): a stale one stays hidden from listings and
refused as a key, but is no longer made or used.

A key is locked by an advisory record lock on one byte of the lock file, at an offset derived
from a hash of the key (``fcntl.lockf`` / ``F_SETLKW`` on POSIX, ``msvcrt.locking`` on Windows):
two keys may share a byte, which only makes their updates wait for each other.  POSIX record
locks belong to the process, so each byte also has a ``threading.Lock`` that the threads of this
process take first; the lock file is kept open while a thread of the process holds one of its
bytes (closing any descriptor of a file drops every record lock the process holds on it) and,
idle, for the next update (at most MAX_IDLE files).  ``F_SETLKW`` can fail with ``EDEADLK`` when
several processes wait on one file (the kernel's deadlock detection sees process-wide owners, not
the single byte each writer waits for): that is retried, as a writer here holds one byte at a time.

Other stores get only the in-process lock (see :func:`key_lock`); remote stores with
conditional writes guard updates with the object's version instead
(:mod:`zarrbolt.pipeline.writers`).
"""
from __future__ import annotations

import collections
import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["LOCK_DIR_ENV", "LOCK_NAME", "LOCK_SLOTS", "FileLocks", "key_lock", "lock_dir", "lock_offset",
           "lock_path"]

LOCK_NAME = ".zb-lock"  # the lock file of older versions, in the array directory (no longer made)
LOCK_DIR_ENV = "ZARRBOLT_LOCK_DIR"
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


def lock_dir() -> str:
    """The directory of LocalStore's lock files: ``$ZARRBOLT_LOCK_DIR`` if set, else
    ``zarrbolt-locks`` in the temporary directory (:func:`tempfile.gettempdir`)."""
    d = os.environ.get(LOCK_DIR_ENV)
    return os.path.abspath(d) if d else _default_lock_dir()


def _default_lock_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "zarrbolt-locks")


def lock_path(directory: str) -> str:
    """The lock file of the array directory ``directory`` (which need not exist yet)."""
    real = os.path.normcase(os.path.realpath(directory))
    name = hashlib.sha256(os.fsencode(real)).hexdigest()[:40]
    return os.path.join(lock_dir(), name + ".lock")


def _make_lock_dir(path: str) -> None:
    """Make the lock dir ``path`` (and its parents); the default one world-writable and sticky
    (mode 1777, set after the mkdir as the umask applies to it), as writers of every user share
    it.  One made meanwhile by another process is fine."""
    parent = os.path.dirname(path)
    if parent and parent != path:
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(path, 0o1777 if path == _default_lock_dir() else 0o777)
    except FileExistsError:
        return
    if path == _default_lock_dir() and not _WINDOWS:
        os.chmod(path, 0o1777)


class LockDirLinkError(OSError):
    """The lock dir is a symbolic link (refused: see :func:`_open_lock_dir`)."""


def _open_lock_dir(path: str) -> int | None:
    """A descriptor of the lock dir ``path`` (None where the platform opens no directories), made
    if missing.  The lock dir itself must not be a symbolic link: the default one lies in the
    world-writable temporary directory, where anyone could plant a link sending every user's lock
    files (made writable by everyone) into a directory of their choosing; so a link there, or a
    ``ZARRBOLT_LOCK_DIR`` that is one, is refused (the directories above it may be links, as
    ``/tmp`` is on some systems).  Lock files are then opened relative to this descriptor, so the
    directory checked is the one used."""
    if _WINDOWS or not hasattr(os, "O_DIRECTORY") or os.open not in os.supports_dir_fd:
        if os.path.islink(path):
            raise LockDirLinkError(errno.ELOOP, "the lock directory is a symbolic link")
        if not os.path.isdir(path):
            _make_lock_dir(path)
        return None
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(8):
        try:
            return os.open(path, flags)
        except FileNotFoundError:
            _make_lock_dir(path)
        except OSError as e:
            if os.path.islink(path):
                raise LockDirLinkError(errno.ELOOP, "the lock directory is a symbolic link") from e
            raise
    raise OSError(errno.ENOENT, "the lock directory keeps disappearing")


def _open_lock_file(path: str) -> int:
    """Open ``path``, made readable and writable by everyone if this call creates it (the umask
    would otherwise lock the other users out).  Symbolic links are not followed, neither the
    file nor its directory (:func:`_open_lock_dir`; the lock dir is world-writable), and only a
    regular file is accepted."""
    flags = (os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
             | getattr(os, "O_NOFOLLOW", 0))
    for attempt in range(3):
        dfd = _open_lock_dir(os.path.dirname(path))
        try:
            return _open_in(path, flags, dfd)
        except FileNotFoundError:  # the lock dir was deleted meanwhile: made again
            if attempt == 2:
                raise
        finally:
            if dfd is not None:
                os.close(dfd)
    raise AssertionError("unreachable")  # pragma: no cover


def _open_in(path: str, flags: int, dfd: int | None) -> int:
    name = path if dfd is None else os.path.basename(path)
    for _attempt in range(8):
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=dfd)
        except FileExistsError:
            try:
                fd = os.open(name, flags, dir_fd=dfd)
            except FileNotFoundError:
                continue  # deleted meanwhile
        else:
            if not _WINDOWS:
                try:
                    os.fchmod(fd, 0o666)
                except OSError:
                    os.close(fd)
                    raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "not a regular file")
        return fd
    raise OSError(errno.ENOENT, "the lock file keeps disappearing")


def _thread_lock(name: str, offset: int) -> threading.Lock:
    with _registry_lock:
        lk = _thread_locks.get((name, offset))
        if lk is None:
            lk = _thread_locks[(name, offset)] = threading.Lock()
        return lk


class FileLocks:
    """The lock file of one array directory in this process (:meth:`of`).  It is open while a thread
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
        try:
            return _open_lock_file(self.path)
        except LockDirLinkError as e:
            from ..errors import SymlinkError

            raise SymlinkError(f"the write lock directory {os.path.dirname(self.path)!r} is a symbolic link, which "
                               f"zarrbolt refuses (anyone could plant one where it is world-writable); make it a "
                               f"directory, or point {LOCK_DIR_ENV} at a real directory") from e
        except OSError as e:
            from ..errors import StoreError, StoreFullError

            cls = StoreFullError if e.errno == errno.ENOSPC else StoreError
            raise cls(f"cannot open the write lock file {self.path!r}: {e} (it must be writable "
                      f"by every writer; {LOCK_DIR_ENV} chooses the lock files' directory and "
                      "the write_lock option turns the locks off)") from e

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
        """Whether ``fd`` is still the file at :attr:`path` (the lock file or its directory may
        have been deleted, and made again, since another thread of this process opened it)."""
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
    files = store.write_locks(lock_dir_key)
    if files is not None:
        with files.hold(key):
            yield
        return
    with _thread_lock(f"store:{store.token()!r}", lock_offset(key)):
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
