"""zarrbolt's public entry points, zarr-python 3's module-level API: opening nodes
(:mod:`.opening`), creating arrays from the user's arguments (:mod:`.creation`), and the sugar over
both (:mod:`.sugar`); :mod:`.location` resolves every entry point's ``store`` and ``path``.
``zarrbolt`` exports them all."""

from __future__ import annotations

from .creation import create, create_array
from .opening import (
    consolidate_metadata,
    create_group,
    group,
    load,
    open,
    open_array,
    open_consolidated,
    open_group,
)
from .sugar import (
    array,
    create_hierarchy,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    ones,
    ones_like,
    open_like,
    save,
    save_array,
    save_group,
    tree,
    zeros,
    zeros_like,
)

__all__ = [
    "array",
    "consolidate_metadata",
    "create",
    "create_array",
    "create_group",
    "create_hierarchy",
    "empty",
    "empty_like",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "save",
    "save_array",
    "save_group",
    "tree",
    "zeros",
    "zeros_like",
]
