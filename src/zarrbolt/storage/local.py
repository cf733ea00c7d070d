"""The file system store (``store-filesystem.rst``): one file per key under a root directory.

Writes go to a temporary file in the destination directory followed by ``os.replace``, so a
crash or an error never leaves a torn value and readers see the old or the new value whole.
Byte-range reads use ``pread`` (one syscall, no seek state) where the platform has it, and
never read more of a file than was asked for.  Temporary files are named
``.zb-tmp-<host>-<pid>-<random>``; the write locks' files live outside the store (see
:mod:`.locks`), and a ``.zb-lock`` left by older versions is ignored.  Neither name is ever
listed, keys naming them are refused, and the orphaned temporary files of writers that died are
removed by the next write to their directory (see :mod:`._local_safety`).
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .. import config
from ..errors import InvalidKeyError, StoreError, StoreIOError
from . import _local_safety as safety
from . import files
from ._base import (
    check_offset,
    ByteRequest,
    Store,
    as_byte_view,
    check_key,
    check_prefix,
    check_ranges,
    resolve_range,
    writable_view,
)
from ._local_safety import TMP_PREFIX, SymlinkGuard
from .native_files import NativeFiles
from .locks import LOCK_NAME, FileLocks, lock_path

_HAS_PREAD = hasattr(os, "pread")
_HAS_PREADV = hasattr(os, "preadv")
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A FIFO where a value's file should be must not block the open (it is not a regular file, so it
# reads as missing); reads of regular files ignore the flag.
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_WINDOWS = os.name == "nt"
_MISSING = (errno.ENOENT, errno.ENOTDIR)
# a symbolic link as the last component of a path opened with O_NOFOLLOW (FreeBSD: EMLINK)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)


def _reserved(name: str) -> bool:
    """Names of LocalStore's own files: temporary files and the write locks' file of older versions."""
    return name.startswith(TMP_PREFIX) or name == LOCK_NAME


def path_from_uri(root: str | os.PathLike[str]) -> Path:
    """A local path from a path or a ``file://`` URI (RFC 8089; ``file:///c:/x`` on Windows).

    Other URL schemes raise :class:`StoreError`."""
    s = os.fspath(root)
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    if not isinstance(s, str):
        raise StoreError(f"a store root must be a path or a file:// URI, got {type(root).__name__}")
    if s[:5].lower() == "file:":
        u = urlparse(s)
        if u.netloc not in ("", "localhost"):
            raise StoreError(f"file URI with a remote host is not supported: {s!r}")
        p = unquote(u.path)
        if _WINDOWS and len(p) > 2 and p[0] == "/" and p[2] == ":":
            p = p[1:]
        if not p:
            raise StoreError(f"file URI without a path: {s!r}")
        return Path(p)
    if "://" in s:
        scheme = s.split("://", 1)[0]
        raise StoreError(
            f"unsupported store URL scheme {scheme!r} in {s!r}: zarrbolt stores are local paths, "
            "file:// URIs, dicts or in-memory stores"
        )
    if not s:
        raise StoreError("a store root must not be an empty path")
    return Path(s)


def _read_range(fd: int, start: int, length: int) -> bytes:
    """``length`` bytes of ``fd`` from ``start`` (fewer at the end of the file)."""
    if length <= 0:
        return b""
    if _HAS_PREAD:
        data = os.pread(fd, length, start)
        if len(data) == length or not data:
            return data
        parts = [data]
        got = len(data)
        while got < length:  # short reads (rare on regular files)
            more = os.pread(fd, length - got, start + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)
    os.lseek(fd, start, os.SEEK_SET)  # each call owns its descriptor: no shared seek state
    parts = []
    got = 0
    while got < length:
        more = os.read(fd, length - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _readinto(fd: int, mv: memoryview, offset: int) -> int:
    """Fill ``mv`` from ``fd`` starting at file offset ``offset``; the count read."""
    n = 0
    total = len(mv)
    if _HAS_PREADV:
        while n < total:
            got = os.preadv(fd, [mv[n:]], offset + n)
            if got <= 0:
                break
            n += got
        return n
    f = io.FileIO(fd, "rb", closefd=False)
    f.seek(offset)
    while n < total:
        got = f.readinto(mv[n:])
        if not got:
            break
        n += got
    return n


class LocalStore(Store):
    """Keys as files under ``root`` (a path or a ``file://`` URI), created on the first write.

    Safe for concurrent use from threads and processes: writers of the same key race with
    last-writer-wins, readers always see one whole value, and partial updates of one chunk or
    shard by zarrbolt's arrays are serialized by :meth:`write_locks`.

    Parameters
    ----------
    root
        The directory (a path or a ``file://`` URI).
    read_only
        Refuse writes (:class:`~zarrbolt.errors.ReadOnlyError`).
    fsync
        What is on disk when a write returns: ``"none"`` (the operating system writes it back
        later), ``"file"`` (each file flushed before its rename), ``"dir"`` (also its directory
        after the rename, on POSIX: the new value survives a power cut); ``True`` is ``"dir"``,
        ``False`` ``"none"``, None the ``write_fsync`` config option at each write.
    follow_symlinks
        ``"inside"`` (default) follows symbolic links that resolve inside the root and refuses
        the others with :class:`~zarrbolt.errors.SymlinkError`; ``"none"`` refuses every link;
        ``"all"`` follows every link (trusted stores only).  Writes replace a link at a key's own
        path (never write through it) and refuse directories reached through a refused link.
    """

    def __init__(self, root: str | os.PathLike[str], *, read_only: bool = False,
                 fsync: bool | str | None = None, follow_symlinks: str = "inside"):
        super().__init__(read_only=read_only)
        self.root = path_from_uri(root).absolute()
        self._fsync = None if fsync is None else safety.parse_fsync(fsync)
        self._root_str = str(self.root)
        self._guard = SymlinkGuard(self._root_str, follow_symlinks)
        self._sweep = safety.Sweeper()
        self._locks: dict[str, FileLocks] = {}
        self._native: NativeFiles | None = None

    @property
    def fsync_policy(self) -> str:
        """``"none"``, ``"file"`` or ``"dir"`` (see the class doc)."""
        return self._fsync if self._fsync is not None else safety.parse_fsync(config.get("write_fsync"))

    @property
    def fsync(self) -> bool:
        """Whether written files are flushed to disk before their rename."""
        return self.fsync_policy != "none"

    @property
    def follow_symlinks(self) -> str:
        """The symbolic link policy: ``"inside"``, ``"none"`` or ``"all"`` (see the class doc)."""
        return self._guard.policy

    def write_locks(self, prefix: str = "") -> FileLocks:
        """The write locks of the directory of ``prefix`` (an array's path; ``""``: the
        root): its lock file, outside the store (see :mod:`zarrbolt.storage.locks`)."""
        hit = self._locks.get(prefix)
        if hit is not None:
            return hit
        directory = self._dir_path(prefix if not prefix or prefix.endswith("/") else prefix + "/")
        self._guard.check_dir(directory)
        # by the real path: stores naming one directory differently share the threads' locks
        files = FileLocks.of(lock_path(directory))
        self._locks[prefix] = files
        return files

    # ------------------------------------------------------------------ paths
    def _path(self, key: str) -> str:
        check_key(key)
        segs = key.split("/")
        for seg in segs:
            if _reserved(seg):
                raise InvalidKeyError(f"invalid store key {key!r}: {TMP_PREFIX!r} and {LOCK_NAME!r} name "
                                      "LocalStore's temporary and lock files")
        return os.path.join(self._root_str, *segs)

    def _dir_path(self, prefix: str) -> str:
        """The directory a prefix ending in ``/`` (or ``""``) names."""
        if not prefix:
            return self._root_str
        return self._path(prefix[:-1])

    def _open_value(self, key: str) -> tuple[int, int] | None:
        """``(fd, size)`` of the regular file holding ``key``, or None when there is none."""
        path = self._path(key)
        guard = self._guard
        flags = os.O_RDONLY | _O_BINARY | _O_CLOEXEC | _O_NONBLOCK
        try:
            if guard.policy != "all":
                guard.check_dir(os.path.dirname(path))
                if _WINDOWS and os.path.islink(path):  # (no O_NOFOLLOW)
                    path = guard.check_link(path)
                flags |= _O_NOFOLLOW
            try:
                fd = os.open(path, flags)
            except OSError as e:
                if guard.policy == "all" or e.errno not in _LINK_ERRNOS or not os.path.islink(path):
                    raise
                fd = os.open(guard.check_link(path), flags)
        except OSError as e:
            if isinstance(e, StoreError):
                raise
            if e.errno in _MISSING or isinstance(e, (FileNotFoundError, NotADirectoryError, IsADirectoryError)):
                return None
            if isinstance(e, PermissionError) and os.path.isdir(path):
                return None  # Windows refuses to open directories: a prefix, not a key
            raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
        try:
            st = os.fstat(fd)
        except OSError as e:
            os.close(fd)
            raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return None
        return fd, st.st_size

    # ------------------------------------------------------------------ reading
    def get(self, key: str, byte_range: ByteRequest = None) -> bytes | None:
        opened = self._open_value(key)
        if opened is None:
            return None
        fd, size = opened
        try:
            a, b = resolve_range(byte_range, size)
            return _read_range(fd, a, b - a)
        except OSError as e:
            raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
        finally:
            os.close(fd)

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[bytes | None]:
        """Opens each file once for all of its ranges."""
        items = list(key_ranges)
        out: list[bytes | None] = [None] * len(items)
        by_key: dict[str, list[int]] = {}
        for i, (k, _) in enumerate(items):
            by_key.setdefault(k, []).append(i)
        for key, idxs in by_key.items():
            opened = self._open_value(key)
            if opened is None:
                continue
            fd, size = opened
            try:
                for i in idxs:
                    a, b = resolve_range(items[i][1], size)
                    out[i] = _read_range(fd, a, b - a)
            except OSError as e:
                raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
            finally:
                os.close(fd)
        return out

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        offset = check_offset(offset)
        mv = writable_view(buffer)
        opened = self._open_value(key)
        if opened is None:
            return None
        fd, size = opened
        try:
            want = max(0, min(len(mv), size - offset))
            return _readinto(fd, mv[:want], offset) if want else 0
        except OSError as e:
            raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
        finally:
            os.close(fd)

    def read_into(self, key: str, buffer: Any) -> int | None:
        mv = writable_view(buffer)
        opened = self._open_value(key)
        if opened is None:
            return None
        fd, size = opened
        try:
            if size > len(mv):
                return -size
            got = _readinto(fd, mv[:size], 0)
        except OSError as e:
            raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
        finally:
            os.close(fd)
        if got != size:
            raise StoreError(f"{key!r} changed while being read ({got} of {size} bytes)")
        return size

    def get_ranges_into(self, key: str, ranges: Any, buffer: Any) -> list[int] | None:
        """Opens the file once for all the ranges (see :meth:`Store.get_ranges_into`)."""
        mv = writable_view(buffer)
        ranges = check_ranges(ranges, len(mv))
        opened = self._open_value(key)
        if opened is None:
            return None
        fd, size = opened
        counts: list[int] = []
        pos = 0
        try:
            for start, end in ranges:
                want = max(0, min(end, size) - start)
                counts.append(_readinto(fd, mv[pos: pos + want], start) if want else 0)
                pos += end - start
        except OSError as e:
            raise StoreError(f"cannot read {key!r} from {self}: {e}") from e
        finally:
            os.close(fd)
        return counts

    def native_files(self) -> NativeFiles | None:
        """Direct access to this store's files (:class:`NativeFiles`) for the C file batches of
        the fused pipeline.  None for subclasses, which may change how values are read or
        written: they go through the Store API unless they override this."""
        if type(self) is not LocalStore:
            return None
        if self._native is None:
            self._native = NativeFiles(self)
        return self._native

    def exists(self, key: str) -> bool:
        opened = self._open_value(key)
        if opened is None:
            return False
        os.close(opened[0])
        return True

    def getsize(self, key: str) -> int:
        path = self._path(key)
        if self._guard.policy != "all":
            self._guard.check_dir(os.path.dirname(path))
            if os.path.islink(path):
                path = self._guard.check_link(path)
        try:
            st = os.stat(path)
        except OSError as e:
            if e.errno in _MISSING:
                raise StoreError(f"key {key!r} not found in {self}") from e
            raise StoreIOError(f"cannot read {key!r} from {self}: {e}") from e  # e.g. a link loop
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(f"key {key!r} not found in {self} (a directory is there)")
        return st.st_size

    # ------------------------------------------------------------------ writing
    def _write_file(self, fd: int, views: list[memoryview]) -> None:
        """Write ``views`` to the new file ``fd`` (a seam for subclasses, e.g. fault injection)."""
        files.write_all(fd, views)

    def set(self, key: str, value: Any) -> None:
        self._set(key, value, None)

    def set_parts(self, key: str, parts: Any) -> None:
        """The pieces are written to the file one after another (``writev``), never joined."""
        self._set(key, None, [as_byte_view(p) for p in parts])

    def _set(self, key: str, value: Any, parts: list[memoryview] | None) -> None:
        self._check_writable()
        with files.AtomicFile(self, key) as f:
            f.write(parts if parts is not None else [as_byte_view(value)])
            f.commit()

    def set_if_not_exists(self, key: str, value: Any) -> None:
        """Store ``value`` unless ``key`` exists; the value appears atomically (hard link of a
        complete temporary file, which fails if another writer got there first)."""
        self._check_writable()
        if os.path.lexists(self._path(key)):
            return
        with files.AtomicFile(self, key) as f:
            f.write([as_byte_view(value)])
            f.commit(exclusive=True)

    def erase(self, key: str) -> None:
        self._check_writable()
        path = self._path(key)
        self._guard.check_dir(os.path.dirname(path))
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as e:
            if e.errno in _MISSING:
                return
            if os.path.isdir(path):
                return  # a "directory" is a prefix, not a key
            raise StoreError(f"cannot erase {key!r} from {self}: {e}") from e
        self._prune(os.path.dirname(path))

    def _prune(self, directory: str) -> None:
        """Remove ``directory`` and its ancestors below the root while they are empty."""
        root_len = len(self._root_str)
        while len(directory) > root_len:
            try:
                os.rmdir(directory)
            except OSError:
                return
            directory = os.path.dirname(directory)

    def _remove_entry(self, full: str) -> None:
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise StoreError(f"cannot erase {full!r} in {self}: {e}") from e

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        check_prefix(prefix)
        if prefix == "" or prefix.endswith("/"):
            base = self._dir_path(prefix)
            self._guard.check_dir(os.path.dirname(base) if prefix else base)
            if prefix and os.path.isdir(base) and not os.path.islink(base):
                self._remove_entry(base)
                self._prune(os.path.dirname(base))
                return
            if prefix:
                return
            try:
                names = os.listdir(base)
            except (FileNotFoundError, NotADirectoryError):
                return
            for name in names:  # the root itself stays
                self._remove_entry(os.path.join(base, name))
            return
        # "a/b": the entries of directory "a" whose names start with "b" hold exactly the keys
        parent, _, stem = prefix.rpartition("/")
        self._path(prefix)  # refuses temp-file names
        pdir = self._dir_path(parent + "/" if parent else "")
        self._guard.check_dir(pdir)
        try:
            names = os.listdir(pdir)
        except (FileNotFoundError, NotADirectoryError):
            return
        for name in names:
            if name.startswith(stem) and not _reserved(name):
                self._remove_entry(os.path.join(pdir, name))
        self._prune(pdir)

    # ------------------------------------------------------------------ listing
    def _scan(self, rel_dir: str) -> list[os.DirEntry[str]]:
        base = os.path.join(self._root_str, *rel_dir.split("/")) if rel_dir else self._root_str
        try:
            with os.scandir(base) as it:
                return [e for e in it if not _reserved(e.name)]
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            raise StoreError(f"cannot list {rel_dir or '/'!r} in {self}: {e}") from e

    def _walk(self, rel_dir: str, stem: str = "") -> Iterator[str]:
        """Every key under directory ``rel_dir`` (whose first segment there starts with ``stem``)."""
        stack = [(rel_dir, stem)]
        while stack:
            d, s = stack.pop()
            subdirs = []
            for e in self._scan(d):
                if s and not e.name.startswith(s):
                    continue
                rel = f"{d}/{e.name}" if d else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        subdirs.append((rel, ""))
                    elif e.is_file() and self._serves(e):
                        yield rel
                except OSError:
                    continue  # vanished while listing
            stack.extend(reversed(subdirs))

    def _serves(self, e: os.DirEntry[str]) -> bool:
        """Whether a listed file is one ``get`` serves: not a symbolic link the symlink policy
        refuses (a listing names only keys that can be read)."""
        if self._guard.policy == "all" or not e.is_symlink():
            return True
        try:
            self._guard.check_link(e.path)
        except StoreError:
            return False
        return True

    def list(self) -> Iterator[str]:
        return self._walk("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        if prefix:
            self._path(prefix[:-1] if prefix.endswith("/") else prefix)
        rel_dir, _, stem = prefix.rpartition("/")
        return self._walk(rel_dir, stem)

    def list_dir(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        self._dir_path(prefix)  # refuses temp-file names
        for e in sorted(self._scan(prefix[:-1]), key=lambda e: e.name):
            try:
                if e.is_dir(follow_symlinks=False):
                    yield f"{prefix}{e.name}/"
                elif e.is_file() and self._serves(e):
                    yield f"{prefix}{e.name}"
            except OSError:
                continue

    # ------------------------------------------------------------------ misc
    def __getstate__(self) -> dict[str, Any]:
        """A LocalStore pickles as its root, mode, ``fsync`` and ``follow_symlinks``: the
        unpickled store opens the same directory (the path must mean the same files where it is
        unpickled).  The native file access, the symlink checks' memory, the write locks and the
        directories swept are made again on first use."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_native", "_guard", "_sweep", "_locks")}
        state["_follow"] = self._guard.policy
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        follow = state.pop("_follow", "inside")
        self.__dict__.update(state)
        self._native = None
        self._guard = SymlinkGuard(self._root_str, follow)
        self._sweep = safety.Sweeper()
        self._locks = {}

    def token(self) -> tuple[Any, ...]:
        return ("LocalStore", self._root_str)

    def with_read_only(self, read_only: bool = True) -> LocalStore:
        return LocalStore(self.root, read_only=read_only, fsync=self._fsync, follow_symlinks=self.follow_symlinks)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalStore) and other.root == self.root and other.read_only == self.read_only

    def __hash__(self) -> int:
        return hash((self.root, self.read_only))

    def __repr__(self) -> str:
        return f"LocalStore({self.root.as_uri()!r}{', read_only' if self.read_only else ''})"

    def no_node(self, path: str, documents: str) -> str:
        """``'/data/x.zarr' does not exist``, ``... is a file, not a Zarr store`` or ``... has no
        zarr.json ...`` (see :meth:`Store.no_node`)."""
        place = self.root.joinpath(*path.split("/")) if path else self.root
        if place.is_file():
            return f"'{place}' is a file, not a Zarr store"
        if not place.exists():
            return f"'{place}' does not exist"
        return f"'{place}' has no {documents}"

    def __str__(self) -> str:
        return self.root.as_uri()
