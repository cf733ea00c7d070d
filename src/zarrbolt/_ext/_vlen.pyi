"""``vlen-utf8`` / ``vlen-bytes`` (numcodecs' byte format): compiled module ``_vlen.pyx``."""

from typing import Any, Literal

import numpy as np
from typing_extensions import Buffer

STRING_DTYPE: np.dtypes.StringDType
"""The numpy ``StringDType()`` instance decoded ``"stringdtype"`` arrays have."""

def item_count(data: Buffer) -> int:
    """The item count an encoded chunk claims (CorruptChunkError when it has under 4 bytes)."""

def decode(data: Buffer, n: int, kind: Literal["str", "bytes", "stringdtype"]) -> np.ndarray[Any, Any]:
    """The 1-d array of the ``n`` items of an encoded chunk."""

def encode_objects(arr: np.ndarray[Any, Any], kind: Literal["str", "bytes"]) -> bytes:
    """Encode a contiguous 1-d object array of str (kind "str") or bytes (kind "bytes")."""

def encode_strings(arr: np.ndarray[Any, Any]) -> bytes:
    """Encode a contiguous 1-d numpy StringDType array; the copying runs without the GIL."""
