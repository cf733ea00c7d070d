"""CRC-32C, strided copies and transposes: compiled module ``_kernels.pyx``
(the public face is :mod:`zarrbolt.kernels`)."""

from collections.abc import Sequence
from typing import Any

import numpy as np
from typing_extensions import Buffer, CapsuleType

CRC32C_DECODE_STEP: CapsuleType
"""``zarrbolt.bb_inplace_fn`` capsule: check and strip the trailing CRC-32C."""
CRC32C_ENCODE_STEP: CapsuleType
"""``zarrbolt.bb_inplace_fn`` capsule: append the CRC-32C."""

def crc32c_implementations() -> list[str]:
    """The CRC32C implementations usable on this CPU, the dispatched (fastest) one first."""

def crc32c(data: Buffer, value: int = 0, *, impl: str | None = None) -> int:
    """CRC-32C of the bytes of ``data`` continuing from ``value``."""

def strided_copy(dst: np.ndarray[Any, Any], src: np.ndarray[Any, Any], stream: bool = False,
                 src_order: bool = False) -> None:
    """``dst[...] = src`` for arrays of equal shape and itemsize."""

def transpose(src: np.ndarray[Any, Any], order: Sequence[int],
              out: np.ndarray[Any, Any] | None = None) -> np.ndarray[Any, Any]:
    """A C-contiguous copy of ``src.transpose(order)``."""

# testing aids
_TEST_DELTA_ENCODE: CapsuleType
_TEST_DELTA_DECODE: CapsuleType

def _strided_isas() -> list[str]: ...
def _strided_set_isa(name: str) -> str: ...
def _test_delta_params(decoded_itemsize: int, encoded_itemsize: int) -> bytes: ...
def _test_batches(fail: Sequence[bool], nworkers: int, spin: int = 0) -> tuple[int, int, int, bytes, int, int]: ...
