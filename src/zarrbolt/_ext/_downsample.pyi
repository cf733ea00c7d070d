"""Downsampling by 2 along chosen axes: compiled module ``_downsample.pyx``."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

METHODS: dict[str, int]
MAX_NDIM: int
MAX_HALVED: int

def supported(dtype: npt.DTypeLike, method: str) -> bool:
    """True when ``method`` runs in C for ``dtype``."""

def output_shape(shape: Sequence[int], halve: Sequence[bool]) -> tuple[int, ...]:
    """The shape ``downsample2`` returns for ``shape`` and ``halve``."""

def downsample2(
    block: npt.ArrayLike,
    halve: Sequence[bool],
    method: str = "mean",
    threads: int = 1,
    out: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]:
    """Halve ``block`` along the axes flagged in ``halve`` with ``method``."""

def _set_portable(on: bool) -> None:
    """Testing aid: use the portable kernels even where the CPU has AVX2 (same results)."""
