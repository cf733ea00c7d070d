"""Where a node lives: the entry points' ``store`` argument (a Store, a local path, a URL with its
``storage_options``, zarr-python's stores, None), opened in one of the modes, and the node's path
below it.  Every entry point (and :func:`zarrbolt.migrate`) resolves its ``store`` and ``path``
here."""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError
from ..node import normalize_node_path
from ..storage import Store, make_store

MODES = ("r", "r+", "a", "w", "w-")


def locate(store: Any, mode: str, path: str | None, storage_options: Any = None) -> tuple[Store, str]:
    """The store ``store`` names, opened in ``mode``, and the node path ``path`` below it.

    Parameters
    ----------
    store
        A :class:`~zarrbolt.Store`, a local path, a URL (``s3://``, ``gs://``, ``az://``,
        ``http(s)://``, ``memory://``; fsspec URLs), one of zarr-python's stores, or None (a new
        :class:`~zarrbolt.MemoryStore`).
    mode
        One of :data:`MODES` (``"r"`` opens the store read-only).
    path
        The node's path below the store's root (or below the URL's path).
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).

    Returns
    -------
    tuple of (Store, str)
        The store and the node's normalised path in it.

    Raises
    ------
    MetadataError
        When ``mode`` is not one of :data:`MODES`.
    """
    if mode not in MODES:
        raise MetadataError(f"invalid mode {mode!r}; expected one of {MODES}")
    st, base = make_store(store, mode=mode, storage_options=storage_options)
    full = "/".join(p for p in (normalize_node_path(base), normalize_node_path(path)) if p)
    return st, full
