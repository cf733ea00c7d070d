"""numcodecs' ``delta`` codec kernels: compiled module ``_delta.pyx``."""

from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer, CapsuleType

ENCODE_STEP: CapsuleType
DECODE_STEP: CapsuleType

def type_code(dtype: npt.DTypeLike) -> int:
    """The ``ZB_T_*`` code of a native integer or float dtype; ValueError otherwise."""

def params(dtype: npt.DTypeLike, astype: npt.DTypeLike) -> bytes:
    """The parameter block of the fused steps for ``dtype`` -> ``astype``."""

def encode(x: npt.ArrayLike, astype: npt.DTypeLike, out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """Delta-encode ``x`` (flattened in C order) into an ``astype`` array of its shape."""

def decode(y: npt.ArrayLike, dtype: npt.DTypeLike, out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """The running sum of ``y`` as a ``dtype`` array of its shape."""

def supported(dtype: npt.DTypeLike, astype: npt.DTypeLike) -> bool:
    """True when the kernels handle ``dtype`` -> ``astype``."""

def _run_bb_step(capsule: CapsuleType, params: bytes, data: Buffer, cap: int) -> bytes: ...
def _run_aa_step(capsule: CapsuleType, params: bytes, data: Buffer, nelem: int, out: Buffer) -> Any: ...
