"""Groups: hierarchy nodes that hold arrays and other groups."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .array import Array
from .creation import create_array
from .errors import (
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
    ReadOnlyError,
)
from .metadata import ArrayMetadata, GroupMetadata
from .node import (
    Node,
    check_json_attributes,
    ensure_parent_groups,
    erase_node,
    join_path,
    load_metadata,
    new_group_metadata,
    node_exists,
    save_metadata,
)
from .storage import Store


class Group(Node):
    """A Zarr v3 group."""

    _kind = "group"
    _metadata_cls = GroupMetadata  # groups pickle as store, path, metadata, read_only (Node)

    def __init__(self, store: Store, path: str, metadata: GroupMetadata, *, read_only: bool | None = None):
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = store.read_only if read_only is None else (read_only or store.read_only)

    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool | None = None) -> Group:
        meta = load_metadata(store, path)
        if meta is None:
            raise GroupNotFoundError(f"no group at path {path!r} in {store!r}")
        if not isinstance(meta, GroupMetadata):
            raise ContainsArrayError(f"path {path!r} in {store!r} holds an array, not a group")
        return cls(store, path, meta, read_only=read_only)

    @classmethod
    def create(
        cls,
        store: Store,
        path: str = "",
        *,
        attributes: Mapping[str, Any] | None = None,
        overwrite: bool = False,
        zarr_format: int = 3,
    ) -> Group:
        """Create a group (Zarr format ``zarr_format``: 3, or 2 for ``.zgroup`` / ``.zattrs``)."""
        if store.read_only:
            raise ReadOnlyError(f"cannot create a group in read-only {store!r}")
        attrs = dict(attributes or {})
        check_json_attributes(attrs)
        existing = load_metadata(store, path)
        if existing is not None:
            if not overwrite:
                err = ContainsArrayError if isinstance(existing, ArrayMetadata) else ContainsGroupError
                raise err(f"a node already exists at path {path!r} in {store!r}")
            erase_node(store, path)
        meta = new_group_metadata(zarr_format, attrs)
        ensure_parent_groups(store, path, zarr_format)
        save_metadata(store, path, meta)
        return cls(store, path, meta)

    # ------------------------------------------------------------------ properties
    @property
    def info(self) -> str:
        return (
            f"Name        : {self.name}\nType        : Group\nZarr format : {self._metadata.zarr_format}\n"
            f"Read-only   : {self.read_only}\nStore type  : {type(self._store).__name__}\n"
            f"No. members : {len(list(self.keys()))}"
        )

    # ------------------------------------------------------------------ children
    def _child_path(self, name: str) -> str:
        return join_path(self._path, name)

    def _open_child(self, path: str) -> Array | Group:
        meta = load_metadata(self._store, path)
        if meta is None:
            raise NodeNotFoundError(f"no array or group named {path!r} in {self._store!r}")
        if isinstance(meta, ArrayMetadata):
            return Array(self._store, path, meta, read_only=self._read_only)
        return Group(self._store, path, meta, read_only=self._read_only)

    def __getitem__(self, name: str) -> Array | Group:
        return self._open_child(self._child_path(name))

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            path = self._child_path(name)
        except MetadataError:
            return False
        return node_exists(self._store, path)

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        path = self._child_path(name)
        if not node_exists(self._store, path):
            raise NodeNotFoundError(f"no array or group named {name!r} in group {self.name}")
        erase_node(self._store, path)

    def _child_names(self) -> list[str]:
        prefix = f"{self._path}/" if self._path else ""
        names = []
        for entry in self._store.list_dir(prefix):
            if not entry.endswith("/"):
                continue  # a key (e.g. our zarr.json), not a child prefix
            name = entry[len(prefix):].rstrip("/")
            if not name or name.startswith("__"):
                continue
            if node_exists(self._store, prefix + name):
                names.append(name)
        return sorted(names)

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """(name, node) pairs of the children; with ``max_depth`` > 0 (or None: unlimited)
        descendants too, named by their path relative to this group."""
        out: list[tuple[str, Array | Group]] = []

        def walk(group: Group, rel: str, depth: int) -> None:
            for name in group._child_names():
                node = group._open_child(join_path(group._path, name))
                relname = f"{rel}/{name}" if rel else name
                out.append((relname, node))
                if isinstance(node, Group) and (max_depth is None or depth < max_depth):
                    walk(node, relname, depth + 1)

        walk(self, "", 0)
        return tuple(out)

    def keys(self) -> Iterator[str]:
        return iter(self._child_names())

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return len(self._child_names())

    def arrays(self) -> Iterator[tuple[str, Array]]:
        for name, node in self.members():
            if isinstance(node, Array):
                yield name, node

    def groups(self) -> Iterator[tuple[str, Group]]:
        for name, node in self.members():
            if isinstance(node, Group):
                yield name, node

    def array_keys(self) -> Iterator[str]:
        return (n for n, _ in self.arrays())

    def group_keys(self) -> Iterator[str]:
        return (n for n, _ in self.groups())

    def array_values(self) -> Iterator[Array]:
        return (a for _, a in self.arrays())

    def group_values(self) -> Iterator[Group]:
        return (g for _, g in self.groups())

    def tree(self, level: int | None = None) -> str:
        """A text rendering of the hierarchy below this group."""
        lines = [self.name if self._path else "/"]

        def walk(group: Group, indent: str, depth: int) -> None:
            names = group._child_names()
            for i, name in enumerate(names):
                node = group._open_child(join_path(group._path, name))
                last = i == len(names) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    if level is None or depth + 1 < level:
                        walk(node, indent + ("    " if last else "│   "), depth + 1)

        walk(self, "", 0)
        return "\n".join(lines)

    def create_group(self, name: str, *, overwrite: bool = False, attributes: Mapping[str, Any] | None = None) -> Group:
        self._check_writable()
        return Group.create(self._store, self._child_path(name), attributes=attributes, overwrite=overwrite,
                            zarr_format=self._metadata.zarr_format)

    def require_group(self, name: str, **kwargs: Any) -> Group:
        path = self._child_path(name)
        meta = load_metadata(self._store, path)
        if meta is None:
            return self.create_group(name, **kwargs)
        if isinstance(meta, ArrayMetadata):
            raise ContainsArrayError(f"{path!r} is an array, not a group")
        return Group(self._store, path, meta, read_only=self._read_only)

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array child; the arguments are :func:`zarrbolt.create_array`'s."""
        self._check_writable()
        kwargs.setdefault("zarr_format", self._metadata.zarr_format)  # a v2 group's children are v2
        return create_array(self._store, name=self._child_path(name), **kwargs)

    create_dataset = create_array

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, **kwargs: Any) -> Array:
        import numpy as np

        path = self._child_path(name)
        meta = load_metadata(self._store, path)
        if meta is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if isinstance(meta, GroupMetadata):
            raise ContainsGroupError(f"{path!r} is a group, not an array")
        arr = Array(self._store, path, meta, read_only=self._read_only)
        shape_t = (shape,) if isinstance(shape, int) else tuple(shape)
        if arr.shape != shape_t:
            raise MetadataError(f"array {path!r} exists with shape {arr.shape}, not {shape_t}")
        if dtype is not None and arr.dtype != np.dtype(dtype):
            raise MetadataError(f"array {path!r} exists with dtype {arr.dtype}, not {np.dtype(dtype)}")
        return arr

    def __repr__(self) -> str:
        return f"<zarrbolt.Group {self._store!r}/{self._path}>"
