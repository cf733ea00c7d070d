"""What code that reads and writes a :class:`~.local.LocalStore`'s files itself needs: the C file
batches of the fused pipeline (``csrc/fileio.c``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import StoreError
from . import _local_safety as safety
from . import files

if TYPE_CHECKING:
    from .local import LocalStore

_WINDOWS = os.name == "nt"
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NativeFiles:
    """What code that reads and writes a :class:`LocalStore`'s files itself needs (the C file
    batches of the fused pipeline: ``csrc/fileio.c``): the file of each key, temporary files in
    the store's own pattern (never listed as keys, cleaned up like the store's), and directory
    syncs when the store is ``fsync``.  Values written this way must be complete files renamed
    over the key's path, as :meth:`LocalStore.set` does."""

    def __init__(self, store: LocalStore):
        self._store = store
        root = store._root_str
        if os.name == "nt":
            self._prefix = root + "\\"
        else:
            self._prefix = root.rstrip("/") + "/"

    def paths(self, keys: Iterable[str]) -> list[bytes]:
        """The file-system paths (bytes; UTF-8 on Windows) of the files of ``keys``, for
        reading.  The keys are not checked here (a read of many small chunks would pay for it):
        pass keys made by a chunk key encoding under a checked node path, never user strings.
        Under the store's symlink policy (not ``"all"``) each directory is checked (once), the
        links among its files are listed (once, again when it changes) and a key whose file is
        a link is replaced by its checked target (or raises SymlinkError)."""
        keys = keys if isinstance(keys, list) else list(keys)
        prefix = self._prefix
        if os.name == "nt":
            out = [(prefix + k.replace("/", "\\")).encode("utf-8", "surrogatepass") for k in keys]
        else:
            out = [os.fsencode(prefix + k) for k in keys]
        store = self._store
        guard = store._guard
        if guard.policy == "all":
            return out
        linked: dict[str, tuple[str, frozenset[str]]] = {}
        for rd, d in self._checked_dirs(keys).items():
            names = guard.links_in(d)
            if names:
                linked[rd] = (d, names)
        if linked:
            for i, k in enumerate(keys):
                rd, _, name = k.rpartition("/")
                hit = linked.get(rd)
                if hit is not None and name in hit[1]:
                    out[i] = _fs_bytes(guard.check_link(os.path.join(hit[0], name)))
        return out

    def read_paths(self, keys: list[str]) -> tuple[list[bytes], bool]:
        """``(paths, nofollow)``: the files of ``keys`` for the native reads, as :meth:`paths`,
        and whether those reads must open them with O_NOFOLLOW.  Under the store's symlink
        policy (not ``"all"``) on POSIX only the directories are checked (once each): a key
        whose file is a link is then neither listed nor resolved here but refused by the open
        itself (race-free, and no directory listing per read), and the caller reads it through
        the store, which resolves or refuses it by the policy."""
        guard = self._store._guard
        if guard.policy == "all" or _WINDOWS or not _O_NOFOLLOW:
            return self.paths(keys), False
        self._checked_dirs(keys)
        prefix = self._prefix
        return [os.fsencode(prefix + k) for k in keys], True

    def _checked_dirs(self, keys: list[str]) -> dict[str, str]:
        """The directories of ``keys`` (as in the keys -> their paths), each checked against
        the store's symlink policy (SymlinkError)."""
        store = self._store
        root, guard = store._root_str, store._guard
        out: dict[str, str] = {}
        for rd in {k.rpartition("/")[0] for k in keys}:
            d = os.path.join(root, *rd.split("/")) if rd else root
            guard.check_dir(d)
            out[rd] = d
        return out

    @property
    def fsync(self) -> bool:
        """Whether written files are flushed before their rename (the store's policy)."""
        return self._store.fsync

    def write_paths(self, keys: list[str]) -> tuple[list[bytes], list[bytes]]:
        """For writing ``keys`` (checked, as every LocalStore key): their files' paths and a
        fresh temporary path next to each, with the directories made.  Raises StoreError
        (InvalidKeyError) or OSError (e.g. a file where a directory should be)."""
        store = self._store
        paths = [store._path(k) for k in keys]
        for d in {os.path.dirname(q) for q in paths}:
            store._guard.check_dir(d)
            os.makedirs(d, exist_ok=True)
            store._sweep(d)
        names = safety.tmp_names(len(paths))
        tmps = [os.path.join(os.path.dirname(q), names[i]) for i, q in enumerate(paths)]
        return [_fs_bytes(q) for q in paths], [_fs_bytes(t) for t in tmps]

    def sync_dirs(self, keys: Iterable[str]) -> None:
        """Flush the directories of ``keys`` to disk (once each) when the store's fsync policy
        is ``"dir"``."""
        if self._store.fsync_policy != "dir":
            return
        store = self._store
        for d in {os.path.dirname(store._path(k)) for k in keys}:
            files.sync_dir(d)

    #: whether values can be written at offsets and extended in place (POSIX: pwrite); the
    #: streamed and appended shard writes need it
    positional_io = files.POSITIONAL_IO

    def atomic(self, key: str) -> files.AtomicFile:
        """A new value of ``key`` (checked), written to a temporary file and renamed over the
        key's file by its ``commit()`` (:class:`~.files.AtomicFile`)."""
        self._store._check_writable()
        return files.AtomicFile(self._store, key)

    def open_value(self, key: str) -> files.ValueFile | None:
        """The file of ``key``'s value opened for reading at offsets and extending in place
        (:class:`~.files.ValueFile`), or None when the key has no value.  StoreError when a
        directory is at the key or the file cannot be opened."""
        store = self._store
        store._check_writable()
        path = self.paths([key])[0]
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError as e:
            raise StoreError(f"cannot write {key!r}: a directory exists at that key") from e
        except OSError as e:
            raise safety.write_error(key, store, e) from e
        try:
            return files.ValueFile(store, key, fd)
        except OSError as e:
            os.close(fd)
            raise safety.write_error(key, store, e) from e


def _fs_bytes(path: str) -> bytes:
    """A path as the C file layer takes it: file-system bytes (UTF-8 on Windows)."""
    return path.encode("utf-8", "surrogatepass") if os.name == "nt" else os.fsencode(path)
