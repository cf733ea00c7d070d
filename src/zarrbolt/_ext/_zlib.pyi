"""numcodecs' ``zlib`` codec (libdeflate): compiled module ``_zlib.pyx``."""

from typing import Any

from typing_extensions import Buffer, CapsuleType

DECODE_STEP: CapsuleType
ENCODE_STEP: CapsuleType
PREFIX_FN: CapsuleType

def compress(data: Buffer, level: int = 1) -> bytes:
    """One zlib stream of ``data``; ``level`` -1..9 (Python's zlib levels, -1 = 6)."""

def decompress(data: Buffer, max_size: int) -> bytes:
    """Decode the zlib stream ``data``; at most ``max_size`` bytes are allocated."""

def decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""

def decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of the zlib stream ``data``."""

def encode_params(level: int) -> bytes:
    """The parameter block of the encode step for ``level`` (-1..9)."""

def compress_bound(n: int) -> int:
    """Worst-case encoded size of ``n`` bytes at any level."""

def library_version() -> dict[str, str]:
    """``{"libdeflate": version}``."""

def _run_bb_step(capsule: CapsuleType, params: bytes, data: Buffer, cap: int) -> bytes: ...
def _run_aa_step(capsule: CapsuleType, params: bytes, data: Buffer, nelem: int, out: Buffer) -> Any: ...
