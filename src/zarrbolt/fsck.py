"""Checking a local Zarr hierarchy for what crashed or concurrent writers and damaged disks leave
behind, and optionally cleaning it (:func:`fsck`; the command ``zarrbolt fsck`` is
:mod:`zarrbolt.cli.fsck`).

:func:`fsck` reports

- temporary files (``.zb-tmp-…``): orphans of writers that are gone (a dead process of this
  host, or older than ``older_than`` seconds) and those of writers still running;
- stray keys: files inside an array that are neither metadata nor a chunk key of its grid, and
  files outside every array and group document;
- torn or undecodable chunks (the chunk's codecs fail on its bytes);
- shards whose index is malformed (sizes, bounds, overlaps, checksum);
- nodes with metadata of both Zarr formats (``zarr.json`` beside ``.zarray`` / ``.zgroup`` /
  ``.zattrs``: readers disagree on what the node is);
- chunks or shards where no array is: what an interrupted ``zarrbolt cp`` leaves (it writes an
  array's metadata last); ``zarrbolt cp --resume`` finishes it.
- metadata documents that cannot be read, including a ``zarr.json`` (``.zarray``, ...) that is a
  directory, and symbolic links the store refuses (not listed, so not counted as chunks).

``clean=True`` removes the orphaned temporary files (never chunks or strays: those may be
someone's data; the report names them).  Finding and removing temporary files is the local
store's (:func:`zarrbolt.storage._local_safety.tree_temp_files`); fsck reads the hierarchy
through a read-only :class:`~zarrbolt.storage.LocalStore`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import CodecError, MetadataError, StoreError, ZarrboltError
from .storage._local_safety import ORPHAN_AGE, tree_temp_files
from .storage.locks import LOCK_NAME

__all__ = ["FsckReport", "fsck"]

_META_NAMES = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}


@dataclass
class FsckReport:
    """What :func:`fsck` found under ``path`` (keys are store keys; temporary files are paths
    relative to ``path``)."""

    path: str
    arrays: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    chunks_checked: int = 0
    temp_orphans: list[str] = field(default_factory=list)
    temp_live: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)
    torn: list[tuple[str, str]] = field(default_factory=list)
    bad_shards: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    mixed: list[str] = field(default_factory=list)
    unfinished: list[tuple[str, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing wrong: no orphaned temporary file left, no stray, torn chunk, bad shard,
        unreadable or mixed-format node, no unfinished array (temporary files of running
        writers are fine)."""
        left = set(self.temp_orphans) - set(self.removed)
        return not (left or self.strays or self.torn or self.bad_shards or self.unreadable or self.mixed
                    or self.unfinished)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d

    def summary(self) -> str:
        head = (f"{self.path}: {len(self.arrays)} arrays, {len(self.groups)} groups, "
                f"{self.chunks_checked} chunks checked")
        lines = [head]
        for k in self.temp_orphans:
            lines.append(f"  orphaned temporary file{' (removed)' if k in self.removed else ''}: {k}")
        for k in self.temp_live:
            lines.append(f"  temporary file of a running writer: {k}")
        lines += [f"  stray key: {k}" for k in self.strays]
        lines += [f"  torn or undecodable chunk {k}: {why}" for k, why in self.torn]
        lines += [f"  bad shard index {k}: {why}" for k, why in self.bad_shards]
        lines += [f"  unreadable node {k}: {why}" for k, why in self.unreadable]
        lines += [f"  node {k} has metadata of both Zarr v2 and v3 (zarr.json beside .zarray/.zgroup/.zattrs): "
                  "readers disagree on it; remove the format it is not" for k in self.mixed]
        lines += [f"  unfinished array {k}: {n} chunk(s)/shard(s) and no array metadata, what an interrupted "
                  "`zarrbolt cp` leaves: run the same cp command with --resume to finish it"
                  for k, n in self.unfinished]
        lines.append("ok" if self.ok else "PROBLEMS FOUND")
        return "\n".join(lines)


def _nodes(keys: list[str]) -> tuple[dict[str, int], set[str]]:
    """({array path: zarr format}, {group paths}) from the metadata documents among ``keys``."""
    arrays: dict[str, int] = {}
    groups: set[str] = set()
    for k in keys:
        d, _, name = k.rpartition("/")
        if name == ".zarray":
            arrays[d] = 2
        elif name == ".zgroup":
            groups.add(d)
    return arrays, groups


def _v3_node_kind(store: Any, key: str) -> str | None:
    try:
        doc = json.loads(bytes(store.get(key) or b"{}"))
    except (ValueError, UnicodeDecodeError):
        return None
    kind = doc.get("node_type") if isinstance(doc, dict) else None
    return kind if kind in ("array", "group") else None


def _check_chunk(arr: Any, key: str, data: Any, report: FsckReport) -> None:
    from .codecs.sharding import ShardingCodec

    md = arr.metadata
    bound = md.bound_codecs
    ab = bound.chain.ab
    if isinstance(ab, ShardingCodec) and not bound.chain.bb:
        try:
            ab.split_shard(data, ab.layout(bound.ab_spec), key)
        except (CodecError, ValueError) as e:
            report.bad_shards.append((key, str(e)))
            return
    try:
        bound.decode(data)
    except (ZarrboltError, ValueError, TypeError, OverflowError) as e:
        report.torn.append((key, str(e)))


def _check_array(store: Any, path: str, keys: list[str], report: FsckReport) -> None:
    import zarrbolt

    try:
        arr = zarrbolt.open_array(store, path=path, mode="r")
    except (ZarrboltError, ValueError, KeyError) as e:
        report.unreadable.append((path or "/", str(e)))
        return
    report.arrays.append(path or "/")
    prefix = f"{path}/" if path else ""
    enc = arr.metadata.chunk_key_encoding
    grid_shape = tuple(arr.cdata_shape) if hasattr(arr, "cdata_shape") else None
    for k in keys:
        rel = k[len(prefix):]
        if rel in _META_NAMES:
            continue
        try:
            coords = enc.decode_chunk_key(rel)
        except (MetadataError, ValueError):
            coords = None
        if coords is None or len(coords) != arr.ndim or (
                grid_shape is not None and any(c < 0 or c >= n for c, n in zip(coords, grid_shape))):
            report.strays.append(k)
            continue
        try:
            data = store.get(k)
        except StoreError as e:
            report.torn.append((k, str(e)))
            continue
        if data is None:
            continue  # erased meanwhile
        report.chunks_checked += 1
        _check_chunk(arr, k, data, report)


# a chunk key's end: v3 default ("c/0/1", "c.0.1", "c") or v2 ("0.1", "0/1")
_CHUNK_TAIL = re.compile(r"(?:^|/)(?:c(?:[./]\d+)*|\d+(?:[./]\d+)*)$")


def _unfinished(strays: list[str], nodes: set[str]) -> tuple[list[tuple[str, int]], list[str]]:
    """``([(array path, chunk keys)], the other strays)``: stray keys that are chunk keys of an
    array whose metadata is missing (an interrupted copy writes the metadata last)."""
    found: dict[str, int] = {}
    rest = []
    for k in strays:
        m = _CHUNK_TAIL.search(k)
        owner = k[: m.start()] if m else None
        if owner is None or owner in nodes:
            rest.append(k)
        else:
            found[owner] = found.get(owner, 0) + 1
    return [("/" + a, n) for a, n in sorted(found.items())], rest
def _unlisted(root: str, store: Any) -> list[tuple[str, str]]:
    """What the store does not list but a reader should know of: metadata document names
    (``zarr.json``, ``.zarray``, ...) that are directories (the node would look absent) and
    symbolic links the store's policy refuses (a chunk there would read as missing)."""
    found = []
    listed = None
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for d in dirnames:
            if d in _META_NAMES:
                found.append((d if rel == "." else f"{rel}/{d}", "a directory where a metadata document should be"))
        for f in filenames:
            if os.path.islink(os.path.join(dirpath, f)):
                key = f if rel == "." else f"{rel}/{f}"
                listed = set(store.list()) if listed is None else listed
                if key not in listed:
                    found.append((key, f"a symbolic link the store refuses (follow_symlinks={store.follow_symlinks!r})"))
    return found


def _owner(key: str, nodes: list[str]) -> str | None:
    """The deepest node path among ``nodes`` that ``key`` lies under."""
    best = None
    for n in nodes:
        if (n == "" or key.startswith(n + "/")) and (best is None or len(n) > len(best)):
            best = n
    return best


def fsck(path: str | os.PathLike[str], clean: bool = False, older_than: float = ORPHAN_AGE) -> FsckReport:
    """Check the Zarr hierarchy in directory ``path`` (see the module doc); ``clean``: remove
    the orphaned temporary files.  Raises StoreError when ``path`` does not exist or is a file."""
    from .storage import LocalStore

    root = os.path.abspath(os.fspath(path))
    if not os.path.isdir(root):
        what = "is a file, not a Zarr store" if os.path.exists(root) else "does not exist"
        raise StoreError(f"{os.fspath(path)!r} {what}")
    report = FsckReport(path=root)
    temps = tree_temp_files(root, older_than, remove=clean)
    report.temp_orphans, report.temp_live, report.removed = temps.orphans, temps.live, temps.removed
    store = LocalStore(root, read_only=True, follow_symlinks="inside")
    keys = sorted(store.list())
    report.unreadable += _unlisted(root, store)
    arrays, groups = _nodes(keys)
    v2_docs = {k.rpartition("/")[0] for k in keys if k.rpartition("/")[2] in (".zarray", ".zgroup", ".zattrs")}
    for k in keys:
        d, _, name = k.rpartition("/")
        if name == "zarr.json":
            if d in v2_docs:
                report.mixed.append(d or "/")
            kind = _v3_node_kind(store, k)
            if kind == "array":
                arrays[d] = 3
            elif kind == "group":
                groups.add(d)
            else:
                report.unreadable.append((k, "not a Zarr v3 node document"))
    report.groups = sorted(g or "/" for g in groups)
    nodes = sorted(set(arrays) | groups)
    by_array: dict[str, list[str]] = {a: [] for a in arrays}
    for k in keys:
        d, _, name = k.rpartition("/")
        owner = _owner(k, nodes)
        if owner is not None and owner in arrays:
            by_array[owner].append(k)
        elif name not in _META_NAMES and name != LOCK_NAME:
            report.strays.append(k)
    report.unfinished, report.strays = _unfinished(report.strays, set(nodes))
    for a in sorted(arrays):
        _check_array(store, a, by_array[a], report)
    report.strays.sort()
    report.mixed.sort()
    return report
