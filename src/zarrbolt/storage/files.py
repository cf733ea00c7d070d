"""The files that hold a :class:`~zarrbolt.storage.LocalStore`'s values, for every writer of them.

:class:`AtomicFile` is the one way a value's file is written: a temporary file created
exclusively next to the key's file (named as :mod:`._local_safety` names them, so that orphans of
dead writers are swept and never listed), written sequentially (``writev``) or at offsets
(``pwritev``, kernel copies of another file's bytes), flushed by the store's fsync policy,
renamed over the key's file (retried on Windows while a reader holds the old file open), its
directory flushed when the policy says so; a failed or abandoned write removes the temporary file
and leaves the old value as it was.  ``LocalStore.set`` / ``set_parts`` and the shard writers of
the pipeline (streamed shards, rewritten shards) all write through it; the C file batches
(``csrc/fileio.c``) follow the same protocol with the names and directory syncs
:class:`~.native_files.NativeFiles` gives them.

:class:`ValueFile` is an existing value's file opened for reading at offsets and extending in
place (the sharding spec's append-only updates).  A replaced file's last descriptor can be closed
on a daemon thread (:meth:`ValueFile.close`), since closing it frees its blocks in the kernel.

OSErrors of writes come out as the store's typed errors (:func:`._local_safety.write_error`:
StoreFullError, StoreIOError, StoreError naming the key).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from . import _local_safety as safety

if TYPE_CHECKING:
    from .local import LocalStore

_WINDOWS = os.name == "nt"
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_HAS_WRITEV = hasattr(os, "writev")
_HAS_PWRITEV = hasattr(os, "pwritev")
_HAS_PREADV = hasattr(os, "preadv")
_IOV_MAX = 512  # buffers per writev / pwritev call (POSIX guarantees 16; Linux and macOS 1024)
_COPY_MAX = 1 << 30  # bytes per copy_file_range call
# POSIX: files can be written at offsets (pwrite) and extended in place
POSITIONAL_IO = hasattr(os, "pwrite") and not _WINDOWS


def byte_views(parts: Sequence[Any]) -> list[memoryview]:
    """Flat byte views of bytes-like ``parts`` (no copies), empty ones left out."""
    out = []
    for p in parts:
        mv = p if isinstance(p, memoryview) and p.format == "B" and p.ndim == 1 else memoryview(p).cast("B")
        if len(mv):
            out.append(mv)
    return out


def write_all(fd: int, views: list[memoryview]) -> None:
    """Write every byte of ``views`` in order at the file position (``writev`` where available)."""
    views = [v for v in views if len(v)]
    i = 0
    while i < len(views):
        if _HAS_WRITEV and i + 1 < len(views):
            n = os.writev(fd, views[i: i + _IOV_MAX])
        else:
            n = os.write(fd, views[i])
        while i < len(views) and n >= len(views[i]):  # drop what was written
            n -= len(views[i])
            i += 1
        if n:
            views[i] = views[i][n:]


def pwrite_all(fd: int, parts: Sequence[Any], offset: int) -> int:
    """Write ``parts`` one after another at ``offset`` (``pwritev``, up to 512 at a time); return
    the offset after them."""
    mvs = byte_views(parts)
    i = 0
    while i < len(mvs):
        n = os.pwritev(fd, mvs[i: i + _IOV_MAX], offset) if _HAS_PWRITEV else os.pwrite(fd, mvs[i], offset)
        offset += n
        while i < len(mvs) and n >= len(mvs[i]):
            n -= len(mvs[i])
            i += 1
        if n:
            mvs[i] = mvs[i][n:]
    return offset


def pread_into(fd: int, mv: memoryview, offset: int) -> int:
    """Fill ``mv`` with the file's bytes from ``offset``; the count read (fewer at the end)."""
    got = 0
    while got < len(mv):
        n = os.preadv(fd, [mv[got:]], offset + got) if _HAS_PREADV else _pread_copy(fd, mv[got:], offset + got)
        if n <= 0:
            break
        got += n
    return got


def _pread_copy(fd: int, mv: memoryview, offset: int) -> int:
    data = os.pread(fd, len(mv), offset)
    mv[: len(data)] = data
    return len(data)


def replace(src: str, dst: str) -> None:
    """``os.replace``; on Windows retried briefly while a reader holds ``dst`` open."""
    if not _WINDOWS:
        os.replace(src, dst)
        return
    for delay in (0.001, 0.005, 0.02, 0.05, 0.1):
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            if os.path.isdir(dst):
                raise
            time.sleep(delay)
    os.replace(src, dst)


def unlink_quietly(path: str | bytes) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def sync_dir(directory: str) -> None:
    """Flush ``directory`` (its entries: a rename in it) to disk (POSIX; errors ignored)."""
    if _WINDOWS:
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _file_in_path(root: str, directory: str) -> bool:
    """True when ``directory`` or one of its ancestors under ``root`` is not a directory."""
    d = directory
    while len(d) >= len(root):
        if os.path.lexists(d) and not os.path.isdir(d):
            return True
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return False


def create_tmp(store: LocalStore, key: str, directory: str) -> tuple[int, str]:
    """Create (exclusively) a temporary file in ``directory`` of ``store``, making the directory
    as needed; retried when a concurrent erase prunes the directory in between.  The first write
    to a directory removes the orphaned temporary files there (dead writers')."""
    store._guard.check_dir(directory)
    last: OSError | None = None
    for _ in range(64):
        tmp = os.path.join(directory, safety.tmp_name())
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC, 0o666)
            store._sweep(directory)
            # a caught error's traceback refers to this frame, and the frame to its callers and
            # their values (a shard's encoded pieces): kept, that cycle would hold them until
            # the next garbage collection
            last = None
            return fd, tmp
        except FileNotFoundError as e:
            last = e
        except NotADirectoryError as e:
            if _file_in_path(store._root_str, directory):
                raise StoreError(f"cannot write {key!r} to {store}: a parent path component is a file") from e
            last = e
            continue
        except OSError as e:
            raise safety.write_error(key, store, e) from e
        try:
            os.makedirs(directory, exist_ok=True)
        except FileNotFoundError as e:  # an ancestor was pruned while we made it: retry
            last = e
        except (FileExistsError, NotADirectoryError) as e:
            # makedirs also raises these when a concurrent erase prunes a directory between its
            # mkdir and its isdir check: only a real file in the way is an error
            if _file_in_path(store._root_str, directory):
                raise StoreError(f"cannot write {key!r} to {store}: a parent path component is a file") from e
            last = e
        except OSError as e:
            raise safety.write_error(key, store, e) from e
    raise StoreError(f"cannot write {key!r} to {store}: its directory keeps disappearing ({last})")


class AtomicFile:
    """The new value of ``key`` of ``store``, written into a temporary file next to the key's file
    and renamed over it by :meth:`commit` (see the module doc).  Use it as a context manager: an
    exception inside, or leaving without :meth:`commit`, discards the temporary file (an OSError
    comes out as the store's typed error).  ``fileno()`` is the file's descriptor, for writers
    in C."""

    def __init__(self, store: LocalStore, key: str):
        self.store, self.key = store, key
        self.path = store._path(key)
        self.fd: int | None = None
        self.fd, self.tmp = create_tmp(store, key, os.path.dirname(self.path))
        self.done = False

    def fileno(self) -> int:
        assert self.fd is not None, "the file is closed"
        return self.fd

    def write(self, parts: Sequence[Any]) -> None:
        """Write ``parts`` one after another at the file position (through the store's
        ``_write_file``, a seam for fault injection)."""
        self.store._write_file(self.fileno(), byte_views(parts))

    def pwrite(self, parts: Sequence[Any], offset: int) -> int:
        """Write ``parts`` one after another at ``offset``; the offset after them."""
        return pwrite_all(self.fileno(), parts, offset)

    def copy_from(self, src: ValueFile, begin: int, n: int, at: int) -> bool:
        """Copy bytes ``[begin, begin + n)`` of ``src`` to offset ``at`` (in the kernel where it
        can); False when ``src`` ended before (it changed meanwhile)."""
        dst = self.fileno()
        while n > 0:
            step = min(n, _COPY_MAX)
            try:
                got = os.copy_file_range(src.fd, dst, step, begin, at)
            except (AttributeError, OSError):  # not on this system / file system: through memory
                buf = memoryview(bytearray(min(step, 16 << 20)))
                got = pread_into(src.fd, buf, begin)
                pwrite_all(dst, [buf[:got]], at)
            if got <= 0:
                return False
            begin, at, n = begin + got, at + got, n - got
        return True

    def truncate(self, size: int = 0) -> None:
        os.ftruncate(self.fileno(), size)

    def _close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)

    def commit(self, *, exclusive: bool = False) -> None:
        """Flush the file (the store's fsync policy), close it, rename it over the key's file and
        flush the directory (policy ``"dir"``).  Raises the store's typed error (the old value
        stays, the temporary file is gone).  ``exclusive``: only if the key has no value yet (a
        hard link of the complete file, which fails when another writer got there first; a
        writer that loses leaves the other's value)."""
        store = self.store
        try:
            try:
                if store.fsync:
                    os.fsync(self.fileno())
            finally:
                self._close()
            if exclusive:
                _link_if_absent(self.tmp, self.path)
                unlink_quietly(self.tmp)
            else:
                replace(self.tmp, self.path)
        except BaseException as e:
            self.discard()
            if isinstance(e, OSError) and not isinstance(e, StoreError):
                if os.path.isdir(self.path):
                    raise StoreError(f"cannot write {self.key!r} to {store}: a directory exists at that key") from e
                raise safety.write_error(self.key, store, e) from e
            raise
        self.done = True
        if store.fsync_policy == "dir":
            sync_dir(os.path.dirname(self.path))

    def discard(self) -> None:
        """Give the write up: close and remove the temporary file (errors ignored)."""
        try:
            self._close()
        except OSError:
            pass
        if not self.done:
            self.done = True
            unlink_quietly(self.tmp)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if exc is None:
            if not self.done:
                self.discard()
            return
        self.discard()
        if isinstance(exc, OSError) and not isinstance(exc, StoreError):
            raise safety.write_error(self.key, self.store, exc) from exc


_link_lock = threading.Lock()


def _link_if_absent(src: str, dst: str) -> None:
    """``dst`` becomes ``src``'s file unless it exists (a hard link: atomic; where the file system
    has none, a rename under a lock of this process)."""
    try:
        os.link(src, dst)
    except FileExistsError:
        pass
    except OSError:  # file systems without hard links
        with _link_lock:
            if not os.path.lexists(dst):
                replace(src, dst)


class ValueFile:
    """The existing file of ``key``, open for reading at offsets and extending in place (see the
    module doc); made by :meth:`~.native_files.NativeFiles.open_value`."""

    def __init__(self, store: LocalStore, key: str, fd: int):
        self.store, self.key, self.fd = store, key, fd
        self.size = os.fstat(fd).st_size

    def read_into(self, mv: memoryview, offset: int) -> int:
        """Fill ``mv`` from ``offset``; the count read (fewer where the file ends)."""
        return pread_into(self.fd, mv, offset)

    def read(self, n: int, offset: int) -> memoryview:
        """Up to ``n`` bytes from ``offset`` (fewer where the file ends)."""
        buf = memoryview(bytearray(n))
        return buf[: self.read_into(buf, offset)]

    def append(self, parts: Sequence[Any]) -> None:
        """Write ``parts`` after the file's end, then flush them (the store's fsync policy)."""
        try:
            self.size = pwrite_all(self.fd, parts, self.size)
            if self.store.fsync:
                os.fsync(self.fd)
        except OSError as e:
            raise safety.write_error(self.key, self.store, e) from e

    def close(self) -> None:
        """Close the file.  When it was replaced meanwhile (an :class:`AtomicFile` of its key
        committed), this is the old file's last reference and closing frees its blocks and page
        cache in the kernel (on ext4 ~15 ms for a 30 MB file, more while its pages are written
        back): files of at least CLOSE_LATER_MIN bytes are then closed on a daemon thread."""
        fd, self.fd = self.fd, -1
        if fd < 0:
            return
        try:
            st = os.fstat(fd)
            later = st.st_nlink == 0 and st.st_size >= CLOSE_LATER_MIN
        except OSError:
            later = False
        if later:
            _closer.close(fd)
        else:
            os.close(fd)

    def __enter__(self) -> ValueFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Replaced files at least this large are closed on a daemon thread, at most this many waiting.
CLOSE_LATER_MIN = 4 << 20
CLOSE_LATER_MAX = 8


class _Closer:
    """Closes descriptors on a daemon thread, at most CLOSE_LATER_MAX waiting (beyond that the
    caller closes its own)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.fds: list[int] = []
        self.thread: threading.Thread | None = None

    def close(self, fd: int) -> None:
        with self.cond:
            if len(self.fds) < CLOSE_LATER_MAX and self._started():
                self.fds.append(fd)
                self.cond.notify()
                return
        os.close(fd)

    def _started(self) -> bool:
        if self.thread is None:
            t = threading.Thread(target=self._run, name="zarrbolt-close", daemon=True)
            try:
                t.start()
            except RuntimeError:  # no new threads (interpreter shutting down): close in place
                return False
            self.thread = t
        return True

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.fds:
                    self.cond.wait()
                fd = self.fds.pop(0)
            try:
                os.close(fd)
            except OSError:
                pass

    def after_fork_in_child(self) -> None:
        """The parent's thread does not exist in a forked child: close the child's copies now."""
        fds, self.fds = self.fds, []
        self.cond = threading.Condition()
        self.thread = None
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


_closer = _Closer()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_closer.after_fork_in_child)
