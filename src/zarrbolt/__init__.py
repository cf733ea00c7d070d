"""zarrbolt: a fast Zarr v3 implementation whose hot paths run in C with the GIL released.

Drop-in for the common zarr-python 3 calls::

    import zarrbolt as zarr
    z = zarr.create_array("data.zarr", shape=(1000, 1000), chunks=(100, 100), dtype="uint16")
    z[:10] = 1
    zarr.open_array("data.zarr", mode="r")[:10, :10]
"""

from __future__ import annotations

from . import config, errors
from ._version import __version__

from .api import (
    array,
    consolidate_metadata,
    create,
    create_array,
    create_group,
    create_hierarchy,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    group,
    load,
    ones,
    ones_like,
    open,
    open_array,
    open_consolidated,
    open_group,
    open_like,
    save,
    save_array,
    save_group,
    tree,
    zeros,
    zeros_like,
)
from .array import Array
from .convert import CopyReport, copy, copy_array
from .array_config import ArrayConfig
from .group import Group
from .convert.v2_to_v3 import migrate
from .pipeline.outbuf import release_memory
from .unsupported import UnsupportedArray, UnsupportedNode
from .storage import LocalStore, MemoryStore, Store

# `from .array import Array` binds the submodule zarrbolt.array; the function wins the name.
from .api import array  # noqa: E402,F811

__all__ = [
    "Array",
    "ArrayConfig",
    "CopyReport",
    "copy",
    "copy_array",
    "UnsupportedArray",
    "UnsupportedNode",
    "create_hierarchy",
    "empty_like",
    "from_array",
    "full_like",
    "ones_like",
    "open_like",
    "save",
    "save_group",
    "tree",
    "zeros_like",
    "Group",
    "LocalStore",
    "MemoryStore",
    "Store",
    "__version__",
    "array",
    "config",
    "consolidate_metadata",
    "create",
    "create_array",
    "create_group",
    "empty",
    "errors",
    "full",
    "group",
    "load",
    "migrate",
    "ones",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "release_memory",
    "save_array",
    "show_versions",
    "to_dask",
    "zeros",
]


# Subpackages not imported by ``import zarrbolt`` (they are not needed for reading and writing
# arrays, and some bring optional dependencies: zarr-python for codec_pipeline): imported on first
# attribute access, as SciPy does, so that ``zarrbolt.ome.open_image`` works after ``import zarrbolt``.
_LAZY_SUBMODULES = frozenset({"ome", "dask", "fsck", "cli", "codec_pipeline", "zarr_python"})


def __getattr__(name: str) -> object:
    # zarrbolt.to_dask lives in zarrbolt.dask, imported on first use (dask itself only when called)
    if name == "to_dask":
        from .dask import to_dask

        return to_dask
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'zarrbolt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _LAZY_SUBMODULES)


def _versions() -> dict[str, str]:
    import platform
    import sys

    import numpy as np

    from ._ext import _blosc1, _blosc2, _deflate, _lz4, _zstd

    out = {
        "zarrbolt": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": np.__version__,
    }
    out.update(_zstd.library_version())
    out.update(_deflate.library_version())
    lz4 = _lz4.library_version()
    source = "liblz4" if lz4.get("lz4_source") == "liblz4" else "c-blosc2's copy"
    out["lz4"] = f"{lz4['lz4']} ({source})"
    out["c-blosc2 (decode)"] = _blosc2.library_version()
    out["c-blosc (encode)"] = f"{_blosc1.library_version()} (compressors: {', '.join(_blosc1.compressors())})"
    from . import kernels

    out["crc32c implementation"] = kernels.crc32c_implementations()[0]
    out["threads"] = str(config.get("threads"))
    return out


def show_versions() -> None:
    """Print zarrbolt's version and the versions of every C library linked into it (zstd,
    libdeflate, lz4, c-blosc2, c-blosc), the CRC32C implementation in use and the thread count."""
    v = _versions()
    w = max(len(k) for k in v)
    for k, val in v.items():
        print(f"{k:<{w}} : {val}")
