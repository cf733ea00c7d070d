"""An array's own runtime configuration (zarr-python's ``ArrayConfig``): ``config=`` of
``create_array`` / ``open_array`` / ``Array.with_config``.  Options left out follow the global
configuration (:mod:`zarrbolt.config`) at the time of each read or write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import config as _config
from .errors import MetadataError, UnknownConfigKeyError

_KEYS = ("order", "write_empty_chunks", "read_missing_chunks")


@dataclass(frozen=True)
class ArrayConfig:
    """``order``: memory order of the arrays reads return (``"C"``/``"F"``);
    ``write_empty_chunks``: store chunks that hold only the fill value; ``read_missing_chunks``:
    False makes reading a chunk that is not stored raise ``ChunkNotFoundError``.  None: the
    global option.

    Parameters
    ----------
    order, write_empty_chunks, read_missing_chunks
        The options (None: the global option).
    """

    order: str | None = None
    write_empty_chunks: bool | None = None
    read_missing_chunks: bool | None = None

    def __post_init__(self) -> None:
        if self.order not in (None, "C", "F"):
            raise MetadataError(f"array config: order must be 'C' or 'F', got {self.order!r}")
        for k in ("write_empty_chunks", "read_missing_chunks"):
            v = getattr(self, k)
            if v is not None and not isinstance(v, bool):
                raise MetadataError(f"array config: {k} must be a bool, got {v!r}")

    @classmethod
    def parse(cls, obj: Any) -> ArrayConfig:
        """From None, an ArrayConfig, zarr-python's ArrayConfig or a mapping of option names."""
        if obj is None:
            return cls()
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, Mapping):
            if all(hasattr(obj, k) for k in _KEYS):  # zarr-python's ArrayConfig
                return cls(**{k: getattr(obj, k) for k in _KEYS})
            raise MetadataError(f"array config must be a mapping, got {type(obj).__name__}")
        unknown = [k for k in obj if k not in _KEYS]
        if unknown:
            raise UnknownConfigKeyError(
                f"unknown array config option(s) {unknown}; zarrbolt honours {list(_KEYS)}"
            )
        return cls(**dict(obj))

    def merged(self, other: Any) -> ArrayConfig:
        """This config with the options set in ``other`` replaced."""
        o = ArrayConfig.parse(other)
        return ArrayConfig(**{k: getattr(o, k) if getattr(o, k) is not None else getattr(self, k) for k in _KEYS})

    def resolved(self) -> ArrayConfig:
        """Every option with a value (the global one where this config has none)."""
        return ArrayConfig(**{k: getattr(self, k) if getattr(self, k) is not None else _config.get(k) for k in _KEYS})

    def value(self, key: str) -> Any:
        """The value of option ``key``: this configuration's, else the global option's."""
        v = getattr(self, key)
        return _config.get(key) if v is None else v
