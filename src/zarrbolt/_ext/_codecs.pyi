"""zstd and gzip (libdeflate): compiled module ``_codecs.pyx``."""

from typing_extensions import Buffer, CapsuleType

ZSTD_DECODE_STEP: CapsuleType
ZSTD_ENCODE_STEP: CapsuleType
ZSTD_PREFIX_FN: CapsuleType
GZIP_DECODE_STEP: CapsuleType
GZIP_ENCODE_STEP: CapsuleType
GZIP_PREFIX_FN: CapsuleType

def zstd_compress(data: Buffer, level: int = 0, checksum: bool = False) -> bytes:
    """A zstd frame of ``data`` (content size recorded)."""

def zstd_decompress(data: Buffer, max_size: int) -> bytes:
    """Decode every frame of ``data``; at most ``max_size`` bytes are allocated."""

def zstd_decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""

def zstd_decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of a zstd frame."""

def gzip_compress(data: Buffer, level: int = 6) -> bytes:
    """One RFC 1952 gzip member of ``data`` (``level`` 0..12)."""

def gzip_decompress(data: Buffer, max_size: int) -> bytes:
    """Decode one or more concatenated gzip members; at most ``max_size`` bytes are allocated."""

def gzip_decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode gzip ``data`` into the writable buffer ``out``; return the number of bytes written."""

def gzip_decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of gzip ``data``."""

def library_versions() -> dict[str, str]:
    """Versions of the linked libraries: ``{"zstd": ..., "libdeflate": ...}``."""

def zstd_encode_params(level: int, checksum: bool) -> bytes:
    """The parameter block of ``ZSTD_ENCODE_STEP``."""

def gzip_encode_params(level: int) -> bytes:
    """The parameter block of ``GZIP_ENCODE_STEP``."""

def _zstd_compress_nosize(data: Buffer, level: int = 0, checksum: bool = False) -> bytes: ...
