"""Groups: hierarchy nodes that hold arrays and other groups."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .array import Array
from .api.creation import create_array
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
from .metadata import consolidated as _consolidated
from .storage import Store
from .unsupported import UnsupportedArray, UnsupportedNode, raw_documents, unsupported, with_path


class Group(Node):
    """A Zarr v3 group.

    Create with :func:`zarrbolt.create_group` / :func:`zarrbolt.group`, open with
    :func:`zarrbolt.open_group`.  Children are read with ``g["name"]`` (``/`` in a name reaches
    deeper) and listed with :meth:`members`, :meth:`arrays`, :meth:`groups`.

    Parameters
    ----------
    store, path, metadata
        The store, the group's path in it ("" for the root) and its parsed metadata document.
    read_only
        Refuse writes (None: as the store is).
    use_consolidated
        As :func:`zarrbolt.open_group`'s.
    """

    _kind = "group"
    _metadata_cls = GroupMetadata  # groups pickle as store, path, metadata, read_only (Node)
    _cons: Any = None

    def _restored(self) -> None:  # unpickled: consolidated metadata from the pickled document
        view = _consolidated.view_of_group(self._store, self._path, self._metadata, None)
        self._cons = None if view is None else (view, "")

    def __init__(self, store: Store, path: str, metadata: GroupMetadata, *, read_only: bool | None = None,
                 use_consolidated: bool | str | None = None, _view: Any = None):
        self._store = store
        self._path = path
        self._metadata = metadata
        self._read_only = store.read_only if read_only is None else (read_only or store.read_only)
        # (view, this group's path relative to the view's root): members are listed and opened
        # from the consolidated metadata instead of the store (see metadata/consolidated.py)
        if _view is not None:
            self._cons: tuple[Any, str] | None = _view
        else:
            view = _consolidated.view_of_group(store, path, metadata, use_consolidated)
            self._cons = None if view is None else (view, "")

    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool | None = None) -> Group:
        """Open the group at ``path`` in ``store``.

        Parameters
        ----------
        store : Store
            The store the group lives in.
        path : str
            The group's path in the store (``""``: the root).
        read_only
            Refuse writes (None: as the store is).

        Returns
        -------
        Group

        Raises
        ------
        GroupNotFoundError
            When there is no node at ``path``.
        ContainsArrayError
            When ``path`` holds an array.
        """
        meta = load_metadata(store, path)
        if meta is None:
            raise GroupNotFoundError(store.no_node(path, "zarr.json or .zgroup"))
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
        """Create a group (Zarr format ``zarr_format``: 3, or 2 for ``.zgroup`` / ``.zattrs``).

        Parameters
        ----------
        store : Store
            The store to create the group in.
        path : str
            The group's path in the store (``""``: the root); missing parent groups are created.
        attributes
            The group's attributes (JSON-serialisable).
        overwrite
            Replace a node already at ``path`` (and everything below it).
        zarr_format
            3, or 2 for ``.zgroup`` / ``.zattrs``.

        Returns
        -------
        Group

        Raises
        ------
        ReadOnlyError
            When the store is read-only.
        ContainsArrayError, ContainsGroupError
            When a node exists at ``path`` and ``overwrite`` is false.
        """
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
        """A summary of the group (name, format, store, members), as text."""
        members = self.members()
        n_arrays = sum(1 for _, m in members if isinstance(m, (Array, UnsupportedArray)))
        n_groups = sum(1 for _, m in members if isinstance(m, Group))
        rows = [
            ("Name", self.name), ("Type", "Group"), ("Zarr format", getattr(self._metadata, "zarr_format", 3)),
            ("Read-only", self.read_only), ("Store type", type(self._store).__name__),
            ("Consolidated", "yes" if self._cons is not None else "no"),
            ("No. members", len(members)), ("No. arrays", n_arrays), ("No. groups", n_groups),
        ]
        bad = [m for _, m in members if isinstance(m, UnsupportedNode)]
        if bad:
            rows.append(("Unsupported", ", ".join(f"{m.basename} ({m.reason})" for m in bad)))
        return "\n".join(f"{k:<12}: {v}" for k, v in rows)

    # ------------------------------------------------------------------ children
    def _child_path(self, name: str) -> str:
        return join_path(self._path, name)

    def _cons_rel(self, path: str) -> str | None:
        """``path`` relative to the consolidated view's root (None without a view)."""
        if self._cons is None:
            return None
        view, rel = self._cons
        return path[len(view.root) + 1:] if view.root else path

    def _load_child(self, path: str) -> tuple[Any, Any]:
        """(metadata, view entry) of the node at ``path``: from the consolidated view when it has
        the node, else from the store.  Raises the parser's typed error (with the path)."""
        rel = self._cons_rel(path)
        if rel is not None:
            docs = self._cons[0].node_documents(rel)
            if docs is not None:
                return _parse_documents(docs, path), (self._cons[0], rel)
        try:
            return load_metadata(self._store, path), None
        except MetadataError as e:
            raise with_path(e, path) from None

    def _make_child(self, path: str, meta: Any, view: Any) -> Array | Group:
        if meta is None:
            raise NodeNotFoundError(f"no array or group named {path!r} in {self._store!r}")
        if getattr(meta, "node_type", None) == "array":
            return Array(self._store, path, meta, read_only=self._read_only)
        return Group(self._store, path, meta, read_only=self._read_only, _view=view)

    def _open_child(self, path: str) -> Array | Group:
        """The child at ``path``; a node zarrbolt cannot open raises its typed error."""
        meta, view = self._load_child(path)
        return self._make_child(path, meta, view)

    def _list_child(self, path: str) -> Array | Group | UnsupportedNode:
        """The child at ``path`` for a listing: a node zarrbolt cannot open is an
        :class:`~zarrbolt.unsupported.UnsupportedNode` (never an error)."""
        try:
            meta, view = self._load_child(path)
            return self._make_child(path, meta, view)
        except MetadataError as e:
            rel = self._cons_rel(path)
            docs = self._cons[0].node_documents(rel) if rel is not None else None
            if docs is None:
                raw, nt = raw_documents(self._store, path)
            else:
                nt = "array" if ".zarray" in docs else "group" if ".zgroup" in docs else None
                raw = _consolidated.document_bytes(docs.get("zarr.json", docs.get(".zarray", docs.get(".zgroup"))))
            return unsupported(self._store, path, raw, e, nt)

    def __getitem__(self, name: str) -> Array | Group:
        """The array or group ``name``.

        Parameters
        ----------
        name
            The child's name, or a relative path (``"a/b"``).

        Returns
        -------
        Array or Group

        Raises
        ------
        NodeNotFoundError
            When there is no such node.
        """
        return self._open_child(self._child_path(name))

    def get(self, name: str, default: Any = None) -> Any:
        """The array or group ``name``, or ``default`` when there is none.

        Parameters
        ----------
        name
            The child's name or relative path.
        default
            What to return when there is no such node.

        Returns
        -------
        Array, Group or ``default``
        """
        try:
            return self[name]
        except NodeNotFoundError:
            return default

    def __contains__(self, name: object) -> bool:
        """Whether a node named ``name`` exists below this group.

        Parameters
        ----------
        name
            A child's name or relative path.

        Returns
        -------
        bool
        """
        if not isinstance(name, str):
            return False
        try:
            path = self._child_path(name)
        except MetadataError:
            return False
        rel = self._cons_rel(path)
        if rel is not None and self._cons[0].has(rel):
            return True
        return node_exists(self._store, path)

    def __delitem__(self, name: str) -> None:
        """Delete the child ``name`` and everything below it.

        Parameters
        ----------
        name
            The child's name or relative path.

        Raises
        ------
        ReadOnlyError
            When the group is read-only.
        NodeNotFoundError
            When there is no such node.
        """
        self._check_writable()
        path = self._child_path(name)
        if not node_exists(self._store, path):
            raise NodeNotFoundError(f"no array or group named {name!r} in group {self.name}")
        erase_node(self._store, path)

    def _child_names(self) -> list[str]:
        if self._cons is not None:
            names: list[str] = self._cons[0].child_names(self._cons[1])
            return names
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

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group | UnsupportedNode], ...]:
        """(name, node) pairs of the children; with ``max_depth`` > 0 (or None: unlimited)
        descendants too, named by their path relative to this group.  A node zarrbolt cannot
        open (unknown data type or codec, damaged document) is listed as an
        :class:`~zarrbolt.unsupported.UnsupportedNode`; only opening it raises.

        Parameters
        ----------
        max_depth
            How deep to descend: 0 lists the children only; None has no limit.

        Returns
        -------
        tuple of (str, Array | Group | UnsupportedNode)
        """
        out: list[tuple[str, Array | Group | UnsupportedNode]] = []

        def walk(group: Group, rel: str, depth: int) -> None:
            for name in group._child_names():
                node = group._list_child(join_path(group._path, name))
                relname = f"{rel}/{name}" if rel else name
                out.append((relname, node))
                if isinstance(node, Group) and (max_depth is None or depth < max_depth):
                    walk(node, relname, depth + 1)

        walk(self, "", 0)
        return tuple(out)

    def keys(self) -> Iterator[str]:
        """The names of the children, sorted.

        Returns
        -------
        Iterator[str]
        """
        return iter(self._child_names())

    def __iter__(self) -> Iterator[str]:
        """The names of the children (as :meth:`keys`).

        Returns
        -------
        Iterator[str]
        """
        return self.keys()

    def __len__(self) -> int:
        """The number of children.

        Returns
        -------
        int
        """
        return len(self._child_names())

    def nmembers(self, max_depth: int | None = 0) -> int:
        """The number of children (``max_depth`` as in :meth:`members`).

        Parameters
        ----------
        max_depth
            As in :meth:`members`.

        Returns
        -------
        int
        """
        if max_depth == 0:
            return len(self._child_names())
        return len(self.members(max_depth=max_depth))

    def arrays(self) -> Iterator[tuple[str, Array | UnsupportedArray]]:
        """The array children; arrays zarrbolt cannot open are listed as
        :class:`~zarrbolt.unsupported.UnsupportedArray`.

        Yields
        ------
        tuple of (str, Array | UnsupportedArray)
            Each array child's name and the array.
        """
        for name, node in self.members():
            if isinstance(node, (Array, UnsupportedArray)):
                yield name, node

    def groups(self) -> Iterator[tuple[str, Group]]:
        """The group children.

        Yields
        ------
        tuple of (str, Group)
            Each group child's name and the group.
        """
        for name, node in self.members():
            if isinstance(node, Group):
                yield name, node

    def array_keys(self) -> Iterator[str]:
        """The names of the array children.

        Returns
        -------
        Iterator[str]
        """
        return (n for n, _ in self.arrays())

    def group_keys(self) -> Iterator[str]:
        """The names of the group children.

        Returns
        -------
        Iterator[str]
        """
        return (n for n, _ in self.groups())

    def array_values(self) -> Iterator[Array | UnsupportedArray]:
        """The array children.

        Returns
        -------
        Iterator[Array | UnsupportedArray]
        """
        return (a for _, a in self.arrays())

    def group_values(self) -> Iterator[Group]:
        """The group children.

        Returns
        -------
        Iterator[Group]
        """
        return (g for _, g in self.groups())

    def tree(self, level: int | None = None) -> str:
        """A text rendering of the hierarchy below this group.

        Parameters
        ----------
        level
            How many levels to show (None: all).

        Returns
        -------
        str
        """
        lines = [self.name if self._path else "/"]

        def walk(group: Group, indent: str, depth: int) -> None:
            names = group._child_names()
            for i, name in enumerate(names):
                node = group._list_child(join_path(group._path, name))
                last = i == len(names) - 1
                branch = "└── " if last else "├── "
                if isinstance(node, Array):
                    lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}")
                elif isinstance(node, UnsupportedNode):
                    what = f" {node.shape} {node.data_type!r}" if isinstance(node, UnsupportedArray) else ""
                    lines.append(f"{indent}{branch}{name}{what} (unsupported: {node.reason})")
                else:
                    lines.append(f"{indent}{branch}{name}")
                    if level is None or depth + 1 < level:
                        walk(node, indent + ("    " if last else "│   "), depth + 1)

        walk(self, "", 0)
        return "\n".join(lines)

    def create_group(self, name: str, *, overwrite: bool = False, attributes: Mapping[str, Any] | None = None) -> Group:
        """Create a group child (in this group's Zarr format).

        Parameters
        ----------
        name
            The child's name (or relative path).
        overwrite
            Replace a node already there.
        attributes
            The new group's attributes.

        Returns
        -------
        Group

        Raises
        ------
        ReadOnlyError
            When this group is read-only.
        ContainsArrayError, ContainsGroupError
            When a node exists there and ``overwrite`` is false.
        """
        self._check_writable()
        return Group.create(self._store, self._child_path(name), attributes=attributes, overwrite=overwrite,
                            zarr_format=self._metadata.zarr_format)

    def require_group(self, name: str, **kwargs: Any) -> Group:
        """The group child ``name``, created when missing.

        Parameters
        ----------
        name
            The child's name (or relative path).
        **kwargs
            :meth:`create_group`'s arguments, used when it is created.

        Returns
        -------
        Group

        Raises
        ------
        ContainsArrayError
            When ``name`` is an array.
        """
        path = self._child_path(name)
        meta, view = self._load_child(path)
        if meta is None:
            return self.create_group(name, **kwargs)
        if getattr(meta, "node_type", None) == "array":
            raise ContainsArrayError(f"{path!r} is an array, not a group")
        return Group(self._store, path, meta, read_only=self._read_only, _view=view)

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        """:meth:`require_group` for each name, in order.

        Parameters
        ----------
        *names
            The children's names.

        Returns
        -------
        tuple of Group
        """
        return tuple(self.require_group(n) for n in names)

    def get_array(self, path: str) -> Array:
        """The array at ``path`` (relative, may contain ``/``): ArrayNotFoundError when there is
        no node, ContainsGroupError when it is a group.

        Parameters
        ----------
        path
            The array's path relative to this group.

        Returns
        -------
        Array
        """
        from .errors import ArrayNotFoundError

        full = self._child_path(path)
        meta, view = self._load_child(full)
        if meta is None:
            raise ArrayNotFoundError(f"no array at {path!r} in group {self.name}")
        if getattr(meta, "node_type", None) != "array":
            raise ContainsGroupError(f"{path!r} in group {self.name} is a group, not an array")
        return Array(self._store, full, meta, read_only=self._read_only)

    def get_group(self, path: str) -> Group:
        """The group at ``path`` (relative, may contain ``/``): GroupNotFoundError when there is
        no node, ContainsArrayError when it is an array.

        Parameters
        ----------
        path
            The group's path relative to this group.

        Returns
        -------
        Group
        """
        full = self._child_path(path)
        meta, view = self._load_child(full)
        if meta is None:
            raise GroupNotFoundError(f"no group at {path!r} in group {self.name}")
        if getattr(meta, "node_type", None) == "array":
            raise ContainsArrayError(f"{path!r} in group {self.name} is an array, not a group")
        return Group(self._store, full, meta, read_only=self._read_only, _view=view)

    @property
    def consolidated(self) -> bool:
        """Whether this group lists and opens its members from consolidated metadata."""
        return self._cons is not None

    def _save_metadata(self, metadata: Any) -> None:
        # the consolidated metadata in the stored document is the current one (zarrbolt updates
        # it on every change below this group); keep it rather than this handle's old copy
        super()._save_metadata(_consolidated.refresh_own(self._store, self._path, metadata))

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Create an array child; the arguments are :func:`zarrbolt.create_array`'s.

        Parameters
        ----------
        name
            The child's name (or relative path).
        **kwargs
            :func:`zarrbolt.create_array`'s arguments (the Zarr format defaults to this group's).

        Returns
        -------
        Array
        """
        self._check_writable()
        kwargs.setdefault("zarr_format", self._metadata.zarr_format)  # a v2 group's children are v2
        return create_array(self._store, name=self._child_path(name), **kwargs)

    create_dataset = create_array

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, **kwargs: Any) -> Array:
        """The array child ``name``, created when missing.

        Parameters
        ----------
        name
            The child's name (or relative path).
        shape, dtype
            The shape and data type the array must have (``dtype`` None: any).
        **kwargs
            :func:`zarrbolt.create_array`'s other arguments, used when it is created.

        Returns
        -------
        Array

        Raises
        ------
        ContainsGroupError
            When ``name`` is a group.
        MetadataError
            When the array exists with another shape or data type.
        """
        import numpy as np

        path = self._child_path(name)
        meta, _ = self._load_child(path)
        if meta is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if getattr(meta, "node_type", None) != "array":
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


def _parse_documents(docs: dict[str, Any], path: str) -> Any:
    """Node metadata from its documents as a consolidated view holds them (``zarr.json``, or a v2
    node's ``.zarray``/``.zgroup``/``.zattrs``: read through the format detection of
    :func:`zarrbolt.node.load_metadata` over a store that holds just them)."""
    from .storage import MemoryStore

    try:
        if "zarr.json" in docs:
            from .metadata.nodes import parse_node_document

            return parse_node_document(docs["zarr.json"], copy_attributes=True)
        return load_metadata(MemoryStore({k: _consolidated.document_bytes(v) for k, v in docs.items()}), "")
    except MetadataError as e:
        raise with_path(e, path) from None
