"""Small validation helpers shared by the codec implementations."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MetadataError
from ..metadata._ext_obj import config_members


def config_dict(configuration: Any, name: str, allowed: set[str]) -> dict[str, Any]:
    """Codec ``name``'s configuration object (None: empty), refusing members outside ``allowed``."""
    return config_members(configuration, allowed, "codec", name)


def int_param(value: Any, name: str, param: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise MetadataError(f"codec {name!r}: {param} must be an integer, got {value!r}")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
        raise MetadataError(f"codec {name!r}: {param}={value} is outside {rng}")
    return int(value)


def as_bytes_view(data: Any) -> memoryview:
    mv = memoryview(data)
    if mv.ndim != 1 or mv.itemsize != 1 or not mv.c_contiguous:
        mv = mv.cast("B") if mv.c_contiguous else memoryview(bytes(mv))
    return mv
