"""Consolidated metadata: the metadata documents of a whole hierarchy kept in one place, so that
opening its members reads one object instead of listing the store and reading one document per
node (what matters on object stores, where each request costs a round trip).

Two forms, both as zarr-python 3 writes and reads them:

- Zarr v3 (inline): the group's own ``zarr.json`` holds
  ``"consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {...}}``
  whose ``metadata`` maps each descendant's path (relative to the group, ``"a/b"``) to its
  ``zarr.json`` document; child groups carry an empty ``consolidated_metadata`` of their own.
- Zarr v2: a ``.zmetadata`` object next to the group's ``.zgroup``:
  ``{"metadata": {".zgroup": ..., ".zattrs": ..., "a/.zarray": ..., "a/.zattrs": ...},
  "zarr_consolidated_format": 1}``.

Keeping it correct: every metadata document zarrbolt writes or erases (creating or deleting a
node, changing attributes, resizing) also *updates* the consolidated metadata of each ancestor
group that has some (:func:`node_written`, :func:`node_erased`, called by :mod:`zarrbolt.node`),
and every open :class:`ConsolidatedView` of that store in this process.  Changes made by other
programs are not seen until the hierarchy is consolidated again (``zarrbolt.consolidate_metadata``).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from ..errors import MetadataError

KEY = "consolidated_metadata"
ZMETADATA = ".zmetadata"
ZARR_JSON = "zarr.json"
_V2_DOCS = (".zarray", ".zgroup", ".zattrs")


def _key(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _rel(root: str, path: str) -> str | None:
    """``path`` relative to ``root`` (None when it is not strictly below it)."""
    if not root:
        return path or None
    if path.startswith(root + "/"):
        return path[len(root) + 1:]
    return None


def _load_json(raw: Any, what: str) -> Any:
    try:
        return json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise MetadataError(f"{what} is not valid JSON: {e}") from None


def _dumps_v3(doc: Any) -> bytes:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=True).encode("utf-8")


def empty_inline() -> dict[str, Any]:
    return {"kind": "inline", "must_understand": False, "metadata": {}}


# ---------------------------------------------------------------------------- the in-memory view
class ConsolidatedView:
    """The consolidated metadata of the group at ``root`` of ``store``: ``entries`` maps each
    descendant's path relative to ``root`` to its documents (v3: ``{"zarr.json": doc}``; v2:
    ``{".zarray" | ".zgroup": doc, ".zattrs": doc}``)."""

    def __init__(self, store: Any, root: str, zarr_format: int, entries: dict[str, dict[str, Any]]):
        self.store = store
        self.root = root
        self.zarr_format = zarr_format
        self.entries = entries
        self._lock = threading.Lock()
        self._children: dict[str, list[str]] | None = None  # parent -> child names, built on demand
        _register(self)

    # -- reading
    def child_names(self, rel: str) -> list[str]:
        """The names of the direct children of the node at ``rel`` ('' = the root)."""
        with self._lock:
            if self._children is None:
                index: dict[str, list[str]] = {}
                for k in self.entries:
                    parent, _, name = k.rpartition("/")
                    index.setdefault(parent, []).append(name)
                for names in index.values():
                    names.sort()
                self._children = index
            return list(self._children.get(rel, ()))

    def has(self, rel: str) -> bool:
        return rel in self.entries

    def node_documents(self, rel: str) -> dict[str, Any] | None:
        """The node's metadata documents (key name → JSON object), or None.  A group's ``zarr.json``
        comes without the (empty) consolidated metadata the consolidation put in its entry."""
        with self._lock:
            docs = self.entries.get(rel)
        if docs is None:
            return None
        for name in (ZARR_JSON, ".zgroup"):  # zarr-python 3 also puts one in v2 groups' entries
            doc = docs.get(name)
            if isinstance(doc, dict) and KEY in doc:
                docs = {**docs, name: {k: v for k, v in doc.items() if k != KEY}}
        return docs

    # -- keeping it current
    def _set(self, rel: str, docs: dict[str, Any]) -> None:
        with self._lock:
            self.entries[rel] = docs
            self._children = None

    def _remove(self, rel: str) -> None:
        with self._lock:
            for k in [k for k in self.entries if k == rel or k.startswith(rel + "/")]:
                del self.entries[k]
            self._children = None

    def _replace(self, entries: dict[str, dict[str, Any]]) -> None:
        with self._lock:
            self.entries = entries
            self._children = None


_views: weakref.WeakSet[Any] = weakref.WeakSet()
_views_lock = threading.Lock()


def _register(view: ConsolidatedView) -> None:
    with _views_lock:
        _views.add(view)


def _data_token(store: Any) -> Any:
    """What identifies a store's data (a read-only view of a store has the store's)."""
    from ..storage import Store

    return store.token() if isinstance(store, Store) else ("id", id(store))


def _live_views(store: Any) -> list[ConsolidatedView]:
    token = _data_token(store)
    with _views_lock:
        views = list(_views)
    return [v for v in views if v.store is store or _data_token(v.store) == token]


# ---------------------------------------------------------------------------- parsing
def _flatten_v3(metadata: Any, prefix: str, out: dict[str, dict[str, Any]], where: str) -> None:
    if not isinstance(metadata, dict):
        raise MetadataError(f"{where}: consolidated 'metadata' must be a JSON object")
    for name, doc in metadata.items():
        if not isinstance(name, str) or not name or name.startswith("/") or not isinstance(doc, dict):
            raise MetadataError(f"{where}: consolidated entry {name!r} must be a node path with a JSON object")
        path = f"{prefix}/{name}" if prefix else name
        out[path] = {ZARR_JSON: doc}
        nested = doc.get(KEY)
        if isinstance(nested, dict) and nested.get("metadata"):
            _flatten_v3(nested["metadata"], path, out, where)  # the nested form


def parse_inline(store: Any, root: str, value: Any) -> ConsolidatedView:
    """The view of a v3 group's ``consolidated_metadata`` member."""
    where = f"consolidated metadata of /{root}"
    if not isinstance(value, dict) or value.get("kind") != "inline":
        raise MetadataError(f"{where}: expected an object with \"kind\": \"inline\", got {value!r:.200}")
    entries: dict[str, dict[str, Any]] = {}
    _flatten_v3(value.get("metadata"), "", entries, where)
    return ConsolidatedView(store, root, 3, entries)


def parse_zmetadata(store: Any, root: str, raw: Any, key: str = ZMETADATA) -> ConsolidatedView:
    """The view of a v2 ``.zmetadata`` object."""
    where = f"/{_key(root, key)}"
    doc = _load_json(raw, where)
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
        raise MetadataError(f"{where}: expected an object with a 'metadata' object")
    if doc.get("zarr_consolidated_format") != 1:
        raise MetadataError(f"{where}: unsupported zarr_consolidated_format {doc.get('zarr_consolidated_format')!r}")
    entries: dict[str, dict[str, Any]] = {}
    for k, v in doc["metadata"].items():
        if not isinstance(k, str) or not isinstance(v, dict):
            raise MetadataError(f"{where}: entry {k!r} must map a key to a JSON object")
        path, _, name = k.rpartition("/")
        if name not in _V2_DOCS:
            continue  # other keys (zarr-python 2 also wrote none; tolerate foreign extras)
        if path == "":
            continue  # the group's own documents: read from the group itself
        entries.setdefault(path, {})[name] = v
    entries = {p: d for p, d in entries.items() if ".zarray" in d or ".zgroup" in d}
    return ConsolidatedView(store, root, 2, entries)


def view_of_group(store: Any, path: str, metadata: Any, use_consolidated: bool | str | None) -> ConsolidatedView | None:
    """The consolidated view to open the group at ``path`` with (zarr-python's ``use_consolidated``:
    None = use it when present, True = required, False = ignore; a string is a v2 key name)."""
    if use_consolidated is False:
        return None
    if not (use_consolidated is None or use_consolidated is True or isinstance(use_consolidated, str)):
        raise MetadataError(f"use_consolidated must be None, True, False or a key name, got {use_consolidated!r}")
    fmt = getattr(metadata, "zarr_format", 3)
    view = None
    if fmt == 3:
        if isinstance(use_consolidated, str):
            raise MetadataError("use_consolidated as a key name applies to Zarr format 2 groups only")
        value = getattr(metadata, "extra", {}).get(KEY)
        if value is not None:
            view = parse_inline(store, path, value)
    else:
        key = use_consolidated if isinstance(use_consolidated, str) else ZMETADATA
        raw = store.get(_key(path, key))
        if raw is not None:
            view = parse_zmetadata(store, path, raw, key)
    if view is None and use_consolidated is not None:
        raise MetadataError(
            f"consolidated metadata requested (use_consolidated={use_consolidated!r}) but the group "
            f"/{path} in {store!r} has none; write it with zarrbolt.consolidate_metadata"
        )
    return view


# ---------------------------------------------------------------------------- writing
def _child_dirs(store: Any, path: str) -> Iterator[str]:
    """The paths of the directories below ``path``, sorted by name, less reserved names
    (``__*``), which are not nodes."""
    prefix = f"{path}/" if path else ""
    for entry in sorted(store.list_dir(prefix)):
        if entry.endswith("/") and not entry.rstrip("/").rsplit("/", 1)[-1].startswith("__"):
            yield entry.rstrip("/")


def _walk_v3(store: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, zarr.json document) of every node below ``path``, depth first, sorted by name."""
    for child in _child_dirs(store, path):
        raw = store.get(_key(child, ZARR_JSON))
        if raw is None:
            continue
        doc = _load_json(raw, f"/{_key(child, ZARR_JSON)}")
        if not isinstance(doc, dict):
            raise MetadataError(f"/{_key(child, ZARR_JSON)} does not hold a JSON object; cannot consolidate it")
        yield child, doc
        if doc.get("node_type") == "group":
            yield from _walk_v3(store, child)


def _walk_v2(store: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, document name, document) of the v2 documents below ``path``."""
    for child in _child_dirs(store, path):
        kinds = {}
        for name in _V2_DOCS:
            raw = store.get(_key(child, name))
            if raw is not None:
                kinds[name] = _load_json(raw, f"/{_key(child, name)}")
        if ".zarray" not in kinds and ".zgroup" not in kinds:
            continue
        for name, doc in kinds.items():
            yield child, name, doc
        if ".zgroup" in kinds:
            yield from _walk_v2(store, child)


def consolidate(store: Any, path: str) -> int:
    """Write the consolidated metadata of the group at ``path`` (its format decides the form);
    returns the Zarr format.  The group's own document is kept as it is, apart from that."""
    store._check_writable()
    raw = store.get(_key(path, ZARR_JSON))
    if raw is not None:
        doc = _load_json(raw, f"/{_key(path, ZARR_JSON)}")
        if not isinstance(doc, dict) or doc.get("node_type") != "group":
            from ..errors import ContainsArrayError

            raise ContainsArrayError(f"/{path} in {store!r} is not a group; only groups hold consolidated metadata")
        meta: dict[str, Any] = {}
        for child, cdoc in _walk_v3(store, path):
            rel = _rel(path, child)
            assert rel is not None  # a child is below its group
            if cdoc.get("node_type") == "group":
                cdoc = {**{k: v for k, v in cdoc.items() if k != KEY}, KEY: empty_inline()}
            meta[rel] = cdoc
        doc[KEY] = {"kind": "inline", "must_understand": False, "metadata": meta}
        store.set(_key(path, ZARR_JSON), _dumps_v3(doc))
        _refresh_views(store, path)
        return 3
    zgroup = store.get(_key(path, ".zgroup"))
    if zgroup is None:
        from ..errors import GroupNotFoundError

        raise GroupNotFoundError(f"no group at path {path!r} in {store!r}")
    store.set(_key(path, ZMETADATA), _zmetadata_bytes(store, path))
    _refresh_views(store, path)
    return 2


def _zmetadata_bytes(store: Any, path: str) -> bytes:
    meta: dict[str, Any] = {}
    for name in (".zgroup", ".zattrs"):
        raw = store.get(_key(path, name))
        if raw is not None:
            meta[name] = _load_json(raw, f"/{_key(path, name)}")
    for child, name, doc in _walk_v2(store, path):
        meta[f"{_rel(path, child)}/{name}"] = doc
    return json.dumps({"metadata": meta, "zarr_consolidated_format": 1}, allow_nan=True).encode("utf-8")


def _refresh_views(store: Any, path: str) -> None:
    for v in _live_views(store):
        if v.root == path:
            fresh = _read_view(store, path, v.zarr_format)
            if fresh is not None:
                v._replace(fresh.entries)


def _read_view(store: Any, path: str, fmt: int) -> ConsolidatedView | None:
    if fmt == 3:
        raw = store.get(_key(path, ZARR_JSON))
        doc = _load_json(raw, "zarr.json") if raw is not None else None
        if isinstance(doc, dict) and isinstance(doc.get(KEY), dict):
            return parse_inline(store, path, doc[KEY])
        return None
    raw = store.get(_key(path, ZMETADATA))
    return parse_zmetadata(store, path, raw) if raw is not None else None


# ---------------------------------------------------------------------------- hooks
def _ancestors(path: str) -> list[str]:
    parts = path.split("/") if path else []
    return ["/".join(parts[:i]) for i in range(len(parts))]


def _node_docs(store: Any, path: str, zarr_format: int) -> dict[str, Any]:
    """The node's documents as now stored (v3: zarr.json; v2: .zarray/.zgroup/.zattrs)."""
    names = (ZARR_JSON,) if zarr_format == 3 else _V2_DOCS
    out: dict[str, Any] = {}
    for name in names:
        raw = store.get(_key(path, name))
        if raw is not None:
            try:
                out[name] = json.loads(bytes(raw).decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                return {}
    return out


def node_written(store: Any, path: str, metadata: Any) -> None:
    """The metadata document of the node at ``path`` was just written: update the consolidated
    metadata of every ancestor group that has some, and the live views of this store."""
    fmt = getattr(metadata, "zarr_format", 3)
    docs: dict[str, Any] | None = None
    if fmt == 3:
        doc = metadata.to_json()
        if doc.get("node_type") == "group":
            doc = {**{k: v for k, v in doc.items() if k != KEY}, KEY: empty_inline()}
        docs = {ZARR_JSON: doc}
    for anc in _ancestors(path):
        rel = _rel(anc, path)
        assert rel is not None  # below its ancestor
        if fmt == 3:
            _update_inline(store, anc, rel, docs)
        else:
            if docs is None:
                docs = _node_docs(store, path, 2)
            _update_zmetadata(store, anc, rel, docs)
    _update_views(store, path, fmt, docs, lambda: _node_docs(store, path, fmt))


def node_erased(store: Any, path: str) -> None:
    """The node at ``path`` (and everything below it) was just erased."""
    for anc in _ancestors(path):
        rel = _rel(anc, path)
        assert rel is not None  # below its ancestor
        _update_inline(store, anc, rel, None)
        _update_zmetadata(store, anc, rel, None)
    for v in _live_views(store):
        rel = _rel(v.root, path)
        if rel is not None:
            v._remove(rel)
        elif v.root == path or path == "" or v.root.startswith(path + "/"):
            v._replace({})  # the consolidated group itself is gone


def _update_views(store: Any, path: str, fmt: int, docs: dict[str, Any] | None, load: Any) -> None:
    for v in _live_views(store):
        rel = _rel(v.root, path)
        if rel is None or v.zarr_format != fmt:
            continue
        if docs is None:
            docs = load()
        v._set(rel, docs)


def _update_inline(store: Any, anc: str, rel: str, docs: dict[str, Any] | None) -> None:
    raw = store.get(_key(anc, ZARR_JSON))
    if raw is None:
        return
    try:
        doc = json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return
    cm = doc.get(KEY) if isinstance(doc, dict) else None
    if not isinstance(cm, dict) or not isinstance(cm.get("metadata"), dict):
        return
    meta = {k: v for k, v in cm["metadata"].items() if not (k == rel or k.startswith(rel + "/"))}
    if docs is not None:
        meta[rel] = docs[ZARR_JSON]
    if meta == cm["metadata"]:
        return
    doc[KEY] = {**cm, "metadata": meta}
    store.set(_key(anc, ZARR_JSON), _dumps_v3(doc))


def _update_zmetadata(store: Any, anc: str, rel: str, docs: dict[str, Any] | None) -> None:
    key = _key(anc, ZMETADATA)
    raw = store.get(key)
    if raw is None:
        return
    try:
        doc = json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
        return
    meta = {k: v for k, v in doc["metadata"].items() if not k.startswith(rel + "/")}
    for name, d in (docs or {}).items():
        meta[f"{rel}/{name}"] = d
    if meta == doc["metadata"]:
        return
    doc["metadata"] = meta
    store.set(key, json.dumps(doc, allow_nan=True).encode("utf-8"))


def refresh_own(store: Any, path: str, metadata: Any) -> Any:
    """A v3 group's metadata about to be written, with the consolidated metadata now stored in its
    document (which zarrbolt kept current since ``metadata`` was read) instead of the old copy."""
    extra = getattr(metadata, "extra", None)
    if not isinstance(extra, dict) or KEY not in extra:
        return metadata
    raw = store.get(_key(path, ZARR_JSON))
    cur = None
    if raw is not None:
        try:
            doc = json.loads(bytes(raw).decode("utf-8"))
            cur = doc.get(KEY) if isinstance(doc, dict) else None
        except (UnicodeDecodeError, ValueError, RecursionError):
            cur = None
    new_extra = {k: v for k, v in extra.items() if k != KEY}
    if isinstance(cur, dict):
        new_extra[KEY] = cur
    return metadata.evolve(extra=new_extra)


def document_bytes(doc: Any) -> bytes:
    """A document as the bytes of a store value (compact JSON)."""
    return json.dumps(doc, ensure_ascii=False, allow_nan=True).encode("utf-8")
