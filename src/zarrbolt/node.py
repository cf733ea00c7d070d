"""What arrays and groups share: node paths and names, their ``zarr.json`` documents, attributes.

Everything here sits below :mod:`zarrbolt.array`, :mod:`zarrbolt.group` and :mod:`zarrbolt.api`,
which import it; it imports none of them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from .errors import ContainsArrayError, MetadataError, ReadOnlyError
from .metadata import ArrayMetadata, GroupMetadata, parse_node_metadata
from .storage import Store

ZARR_JSON = "zarr.json"


# ---------------------------------------------------------------------------- keys and paths
def meta_key(path: str) -> str:
    """The store key of the metadata document of the node at ``path``."""
    return f"{path}/{ZARR_JSON}" if path else ZARR_JSON


def validate_node_name(name: str) -> None:
    """The spec's node-name rules (core spec, "Node names")."""
    if not isinstance(name, str):
        raise MetadataError(f"a node name must be a string, got {type(name).__name__}")
    if name == "":
        raise MetadataError("a node name must not be empty")
    if "/" in name:
        raise MetadataError(f"a node name must not contain '/': {name!r}")
    if set(name) == {"."}:
        raise MetadataError(f"a node name must not consist only of periods: {name!r}")
    if name.startswith("__"):
        raise MetadataError(f"a node name must not start with the reserved prefix '__': {name!r}")
    if "\\" in name or "\x00" in name:
        raise MetadataError(f"a node name must not contain backslashes or NUL: {name!r}")


def normalize_node_path(path: str | None) -> str:
    """'/a//b/' -> 'a/b'; every segment must be a valid node name."""
    if path is None:
        return ""
    if not isinstance(path, str):
        raise MetadataError(f"a node path must be a string, got {type(path).__name__}")
    parts = [p for p in path.split("/") if p != ""]
    for p in parts:
        validate_node_name(p)
    return "/".join(parts)


def join_path(parent: str, name: str) -> str:
    """The path of child ``name`` (itself a relative node path) of the node at ``parent``."""
    name = normalize_node_path(name)
    if not name:
        raise MetadataError("a child path must not be empty")
    return f"{parent}/{name}" if parent else name


# ---------------------------------------------------------------------------- metadata documents
def load_metadata(store: Store, path: str, zarr_format: int | None = None) -> ArrayMetadata | GroupMetadata | None:
    """The parsed metadata of the node at ``path``, or None when there is no node.

    ``zarr_format`` None detects the format: ``zarr.json`` (v3) first, then ``.zarray`` /
    ``.zgroup`` (v2, with ``.zattrs``).  2 or 3 reads that format only; asking for one format
    where only the other's metadata exists is a MetadataError naming the document found (never
    "not found")."""
    if zarr_format not in (None, 2, 3):
        raise MetadataError(f"zarr_format must be 2, 3 or None, got {zarr_format!r}")
    if zarr_format != 2:
        raw = store.get(meta_key(path))
        if raw is not None:
            return parse_node_metadata(raw)
    from .metadata import v2

    if zarr_format == 3:
        found = v2_metadata_key(store, path)
        if found is not None:
            raise MetadataError(
                f"{found!r} in {store!r} is Zarr v2 metadata, and zarr_format=3 was asked: open it with "
                "zarr_format=2 (or None), or convert it with zarrbolt.migrate"
            )
        return None
    try:
        meta = v2.read_v2_node(store.get, path)
    except MetadataError as e:
        raise type(e)(f"{e} (in {store!r})") from None
    if meta is None and zarr_format == 2 and store.exists(meta_key(path)):
        raise MetadataError(
            f"{meta_key(path)!r} in {store!r} is Zarr v3 metadata, and zarr_format=2 was asked: open it with "
            "zarr_format=3 (or None)"
        )
    return meta


def v2_metadata_key(store: Store, path: str) -> str | None:
    """The key of the ``.zarray`` or ``.zgroup`` at ``path``, or None."""
    from .metadata.v2 import ZARRAY, ZGROUP

    prefix = f"{path}/" if path else ""
    for name in (ZARRAY, ZGROUP):
        if store.exists(prefix + name):
            return prefix + name
    return None


def inherited_format(store: Store, path: str) -> int:
    """The Zarr format of a node to be created at ``path`` when none is asked for: that of its
    nearest existing ancestor (a new node inside a v2 hierarchy is v2), else 3."""
    if not path:
        return 3  # the root has no ancestor
    parts = path.split("/")[:-1]
    for i in range(len(parts), -1, -1):
        meta = load_metadata(store, "/".join(parts[:i]))
        if meta is not None:
            return meta.zarr_format
    return 3


def shadowed_v2_key(store: Store, path: str, metadata: Any) -> str | None:
    """The ``.zarray`` / ``.zgroup`` hidden by an empty v3 group document at the same path (what
    zarrbolt before Zarr v2 support wrote when it opened v2 data in mode ``a``), or None."""
    if metadata.zarr_format != 3 or not isinstance(metadata, GroupMetadata) or metadata.attributes:
        return None
    if getattr(metadata, "extra", None) or getattr(metadata, "consolidated_metadata", None):
        return None
    return v2_metadata_key(store, path)


def node_exists(store: Store, path: str) -> bool:
    """Whether an array or group (v3 or v2) exists at ``path``."""
    return store.exists(meta_key(path)) or v2_metadata_key(store, path) is not None


def save_metadata(store: Store, path: str, metadata: ArrayMetadata | GroupMetadata) -> None:
    """Write the metadata document(s) of the node at ``path``: ``zarr.json``, or for a v2 node
    ``.zarray`` / ``.zgroup`` and ``.zattrs`` (removed when the attributes are empty); then bring
    the consolidated metadata of its ancestors up to date (:mod:`zarrbolt.metadata.consolidated`)."""
    if metadata.zarr_format != 2:
        store.set(meta_key(path), metadata.to_bytes())
    else:
        from .metadata import v2

        prefix = f"{path}/" if path else ""
        docs = v2.v2_documents(metadata)  # type: ignore[arg-type]
        attrs = docs.pop(v2.ZATTRS)
        if attrs:
            store.set(prefix + v2.ZATTRS, v2.dumps(attrs))
        elif store.exists(prefix + v2.ZATTRS):
            store.erase(prefix + v2.ZATTRS)
        for name, doc in docs.items():
            store.set(prefix + name, v2.dumps(doc))
    from .metadata import consolidated

    consolidated.node_written(store, path, metadata)


def check_json_attributes(attrs: Mapping[str, Any]) -> None:
    """MetadataError unless ``attrs`` can be written as JSON."""
    try:
        json.dumps(attrs, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise MetadataError(f"attributes must be JSON-serialisable: {e}") from None


def ensure_parent_groups(store: Store, path: str, zarr_format: int = 3) -> None:
    """Make sure every ancestor of ``path`` is a group, creating missing ones (the spec's
    "create a group" / "create an array" operations; of format ``zarr_format``).  An ancestor
    that is an array is an error."""
    if not path:
        return
    parts = path.split("/")[:-1]
    for i in range(len(parts) + 1):
        anc = "/".join(parts[:i])
        meta = load_metadata(store, anc)
        if meta is None:
            save_metadata(store, anc, new_group_metadata(zarr_format))
        elif isinstance(meta, ArrayMetadata):
            raise ContainsArrayError(f"cannot create {path!r}: its ancestor {anc!r} is an array")


def new_group_metadata(zarr_format: int, attributes: dict[str, Any] | None = None) -> GroupMetadata:
    """Empty group metadata of Zarr format ``zarr_format`` (2 or 3)."""
    if zarr_format == 2:
        from .metadata.v2 import V2GroupMetadata

        return V2GroupMetadata(attributes=dict(attributes or {}))
    if zarr_format != 3:
        raise MetadataError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    return GroupMetadata(attributes=dict(attributes or {}))


def erase_node(store: Store, path: str) -> None:
    """Remove the node at ``path`` and everything below it."""
    if path:
        store.erase_prefix(path + "/")
    else:
        store.erase_prefix("")
    from .metadata import consolidated

    consolidated.node_erased(store, path)


# ---------------------------------------------------------------------------- nodes
class Attributes(MutableMapping[str, Any]):
    """The ``attributes`` of a node; every change is written through to the store."""

    def __init__(self, node: Node):
        self._node = node

    def _get(self) -> dict[str, Any]:
        attrs: dict[str, Any] = self._node.metadata.attributes
        return attrs

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._node.update_attributes({key: value})

    def __delitem__(self, key: str) -> None:
        attrs = dict(self._get())
        del attrs[key]
        self._node._set_attributes(attrs)

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def asdict(self) -> dict[str, Any]:
        return dict(self._get())

    def put(self, d: Mapping[str, Any]) -> None:
        """Replace all attributes with ``d``."""
        self._node._set_attributes(dict(d))

    def __repr__(self) -> str:
        return repr(self._get())


class NodeLocation:
    """Where a node is: its store and path, and the names derived from the path (shared by
    :class:`Node` and the placeholders of :mod:`zarrbolt.unsupported`)."""

    _store: Store
    _path: str

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]


class Node(NodeLocation):
    """What arrays and groups share: their store, path, metadata and attributes.

    Subclasses set ``_store``, ``_path``, ``_read_only`` and (through :meth:`_replace_metadata`)
    ``_metadata``; ``_kind`` names them in messages."""

    _kind = "node"
    _metadata_cls: type = object
    _store: Store
    _path: str
    _metadata: Any
    _read_only: bool

    @property
    def metadata(self) -> Any:
        return self._metadata

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        return Attributes(self)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self._kind} {self.name} is read-only")

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """A pickle holds the store (stores pickle themselves: a LocalStore as its root and mode,
        a MemoryStore as a copy of its contents), the path, the metadata document and
        ``read_only``; never compiled plans, caches or open files, which the unpickled node
        makes again.  Unpickling reads nothing from the store."""
        state = {
            "store": self._store,
            "path": self._path,
            "metadata": self._metadata.to_bytes(),
            "read_only": self._read_only,
        }
        if self._metadata.zarr_format == 2:  # a v2 node's attributes are not in its document
            state["zarr_format"] = 2
            state["attributes"] = dict(self._metadata.attributes)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        what = f"a pickled zarrbolt {self._kind}"
        try:
            store, path, raw, read_only = state["store"], state["path"], state["metadata"], state["read_only"]
        except (TypeError, KeyError):
            raise MetadataError(f"not {what}") from None
        if not isinstance(store, Store) or not isinstance(path, str):
            raise MetadataError(f"not {what}: it needs a store and a path")
        if state.get("zarr_format") == 2:
            from .metadata import v2

            meta: ArrayMetadata | GroupMetadata = v2.parse_pickled(raw, state.get("attributes"))
        else:
            meta = parse_node_metadata(raw)
        if not isinstance(meta, self._metadata_cls):
            raise MetadataError(f"{what} carries {meta.node_type} metadata")
        self._store = store
        self._path = normalize_node_path(path)
        self._read_only = bool(read_only) or store.read_only
        self._replace_metadata(meta)
        self._restored()

    def _restored(self) -> None:
        """Called at the end of unpickling."""

    def _sync_unpickled(self) -> None:
        """Called before the node writes its metadata (arrays check the store's copy once)."""

    def update_attributes(self, new_attributes: Mapping[str, Any]) -> Any:
        self._sync_unpickled()
        attrs = dict(self._metadata.attributes)
        attrs.update(new_attributes)
        self._set_attributes(attrs)
        return self

    def _set_attributes(self, attrs: dict[str, Any]) -> None:
        self._check_writable()
        self._sync_unpickled()
        check_json_attributes(attrs)
        self._save_metadata(self._metadata.evolve(attributes=attrs))

    def _save_metadata(self, metadata: Any) -> None:
        """Write ``metadata`` as this node's document, then use it."""
        self._check_writable()
        save_metadata(self._store, self._path, metadata)
        self._replace_metadata(metadata)

    def _replace_metadata(self, metadata: Any) -> None:
        self._metadata = metadata
