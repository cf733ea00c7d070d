"""Dtype casts (``cast_value``) and ``scale_offset`` arithmetic: compiled module ``_numeric.pyx``."""

from typing import Any

import numpy as np
import numpy.typing as npt

ROUNDING: dict[str, int]
"""Rounding mode name -> C code."""
OUT_OF_RANGE: dict[str | None, int]
"""``out_of_range`` mode (None: error) -> C code."""

def type_code(dt: npt.DTypeLike) -> int:
    """The C type code of a native bool, integer or float dtype; ValueError otherwise."""

def cast_options(rounding: str, out_of_range: str | None, scalar_map: Any, src_dt: npt.DTypeLike,
                 dst_dt: npt.DTypeLike) -> tuple[int, int, np.ndarray[Any, Any] | None, np.ndarray[Any, Any] | None]:
    """Checked cast options: ``(rounding code, out_of_range code, map keys, map outputs)``."""

def cast_value(src: npt.ArrayLike, dtype: npt.DTypeLike, rounding: str = "nearest-even",
               out_of_range: str | None = None, scalar_map: Any = None,
               out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """``src`` converted to ``dtype`` with the ``cast_value`` codec's rounding and range rules."""

def scale_offset(src: npt.ArrayLike, offset: Any, scale: Any, decode: bool,
                 out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """The ``scale_offset`` codec: ``(x - offset) * scale`` (encode) or ``x / scale + offset`` (decode)."""

def scale_offset_cast(src: npt.ArrayLike, offset: Any, scale: Any, dtype: npt.DTypeLike,
                      rounding: str = "nearest-even", out_of_range: str | None = None, scalar_map: Any = None,
                      out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """Fused ``scale_offset`` encode then ``cast_value`` to ``dtype``."""

def cast_scale_offset_decode(src: npt.ArrayLike, dtype: npt.DTypeLike, offset: Any, scale: Any,
                             rounding: str = "nearest-even", out_of_range: str | None = None,
                             scalar_map: Any = None, out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """Fused ``cast_value`` decode to ``dtype`` then ``scale_offset`` decode."""

# testing aids
def _numeric_isas() -> list[str]: ...
def _numeric_set_isa(name: str) -> str: ...
