"""libdeflate: gzip members and zlib streams: compiled module ``_deflate.pyx``."""

from typing import Any

from typing_extensions import Buffer, CapsuleType

GZIP_DECODE_STEP: CapsuleType
GZIP_ENCODE_STEP: CapsuleType
GZIP_PREFIX_FN: CapsuleType
ZLIB_DECODE_STEP: CapsuleType
ZLIB_ENCODE_STEP: CapsuleType
ZLIB_PREFIX_FN: CapsuleType

def library_version() -> dict[str, str]:
    """``{"libdeflate": version}``."""

def gzip_compress(data: Buffer, level: int = 6) -> bytes:
    """One RFC 1952 gzip member of ``data`` (``level`` 0..12)."""

def gzip_decompress(data: Buffer, max_size: int) -> bytes:
    """Decode one or more concatenated gzip members; at most ``max_size`` bytes are allocated."""

def gzip_decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode gzip ``data`` into the writable buffer ``out``; return the number of bytes written."""

def gzip_decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of gzip ``data``."""

def gzip_encode_params(level: int) -> bytes:
    """The parameter block of ``GZIP_ENCODE_STEP``."""

def zlib_compress(data: Buffer, level: int = 1) -> bytes:
    """One zlib stream of ``data``; ``level`` -1..9 (Python's zlib levels, -1 = 6)."""

def zlib_decompress(data: Buffer, max_size: int) -> bytes:
    """Decode the zlib stream ``data``; at most ``max_size`` bytes are allocated."""

def zlib_decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""

def zlib_decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of the zlib stream ``data``."""

def zlib_encode_params(level: int) -> bytes:
    """The parameter block of ``ZLIB_ENCODE_STEP`` for ``level`` (-1..9)."""

def zlib_compress_bound(n: int) -> int:
    """Worst-case encoded size of ``n`` bytes at any level."""

def _run_bb_step(capsule: CapsuleType, params: bytes, data: Buffer, cap: int) -> bytes: ...
def _run_aa_step(capsule: CapsuleType, params: bytes, data: Buffer, nelem: int, out: Buffer) -> Any: ...
