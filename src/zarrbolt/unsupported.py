"""Placeholders for nodes of a hierarchy that zarrbolt cannot open.

A group's listing (``members()``, ``tree()``, ``arrays()``, ``array_keys()``, ``info``) never fails
because one node in it uses a data type or codec this build does not implement, or because its
metadata document is damaged: such a node is listed as an :class:`UnsupportedNode` (an
:class:`UnsupportedArray` when its document says ``"node_type": "array"``) that carries the raw
document.  Only opening it (``group[name]``, ``open_array``, :meth:`UnsupportedNode.open`) fails,
with the typed error of the metadata parser (:class:`~zarrbolt.errors.UnknownDataTypeError`,
:class:`~zarrbolt.errors.UnknownCodecError` or :class:`~zarrbolt.errors.MetadataError`) whose
message names the node's path and what is unsupported."""

from __future__ import annotations

import json
from typing import Any

from .errors import MetadataError
from .node import NodeLocation


def with_path(error: MetadataError, path: str) -> MetadataError:
    """``error`` (same class) with the node path in front of its message."""
    if getattr(error, "node_path", None) is not None:
        return error
    msg = f"node /{path}: {error}"
    try:
        out = type(error)(msg)
    except TypeError:  # an error class with another constructor: keep the original
        return error
    out.node_path = path  # type: ignore[attr-defined]
    return out


class UnsupportedNode(NodeLocation):
    """A node whose metadata document zarrbolt cannot use (damaged, or using something this build
    does not implement).  ``document``: the parsed JSON object (None when the bytes are not a JSON
    object); ``raw``: the document's bytes; ``error``: the typed error opening it raises."""

    def __init__(self, store: Any, path: str, raw: bytes | None, error: MetadataError,
                 document: dict[str, Any] | None = None, node_type: str | None = None):
        self._store = store
        self._node_type = node_type
        self._path = path
        self.raw = raw
        self._message = str(error) if getattr(error, "node_path", None) is None else str(error).split(": ", 1)[-1]
        self.error = with_path(error, path)
        if document is None and raw is not None:
            try:
                doc = json.loads(bytes(raw).decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                doc = None
            document = doc if isinstance(doc, dict) else None
        self.document = document

    @property
    def node_type(self) -> str | None:
        """``"array"`` / ``"group"`` as the document says, else None."""
        nt = (self.document or {}).get("node_type", self._node_type)
        return nt if nt in ("array", "group") else None

    @property
    def zarr_format(self) -> Any:
        """The document's ``zarr_format`` (None when it has none)."""
        return (self.document or {}).get("zarr_format")

    @property
    def attrs(self) -> dict[str, Any]:
        """The document's attributes (a copy; an unsupported node is never written)."""
        a = (self.document or {}).get("attributes")
        return dict(a) if isinstance(a, dict) else {}

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The node's metadata document as stored (parsed JSON), or None when it is not a JSON object."""
        return self.document

    @property
    def reason(self) -> str:
        """What is unsupported, in words (the parser's message, without the path)."""
        return self._message

    def open(self) -> Any:
        """Raise the typed error that opening this node gives."""
        raise self.error

    def __repr__(self) -> str:
        return f"<zarrbolt.{type(self).__name__} {self.name}: {self._message}>"


class UnsupportedArray(UnsupportedNode):
    """An array zarrbolt cannot open (an unknown data type or codec, or bad metadata).  ``shape``
    and ``data_type`` are read from the raw document (None where it has none usable)."""

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The document's shape when it is a list of integers, else None."""
        s = (self.document or {}).get("shape")
        if isinstance(s, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in s):
            return tuple(s)
        return None

    @property
    def data_type(self) -> Any:
        """The document's ``data_type`` (a Zarr v2 ``.zarray``'s ``dtype``) as written."""
        doc = self.document or {}
        return doc.get("data_type", doc.get("dtype"))

    dtype = data_type


def unsupported(store: Any, path: str, raw: bytes | None, error: MetadataError,
                node_type: str | None = None) -> UnsupportedNode:
    """The placeholder of the node at ``path`` (``raw``: its metadata document's bytes; a Zarr v2
    node's ``.zarray`` / ``.zgroup``, with ``node_type`` saying which)."""
    node = UnsupportedNode(store, path, raw, error, node_type=node_type)
    if node.node_type == "array":
        node = UnsupportedArray(store, path, raw, error, node.document, node_type=node_type)
    return node


def raw_documents(store: Any, path: str) -> tuple[bytes | None, str | None]:
    """(bytes, node type hint) of the metadata document of the node at ``path``: ``zarr.json``,
    else a Zarr v2 ``.zarray`` or ``.zgroup``."""
    prefix = f"{path}/" if path else ""
    for name, nt in (("zarr.json", None), (".zarray", "array"), (".zgroup", "group")):
        raw = store.get(prefix + name)
        if raw is not None:
            return bytes(raw), nt
    return None, None
