"""zstd: compiled module ``_zstd.pyx``."""

from typing_extensions import Buffer, CapsuleType

DECODE_STEP: CapsuleType
ENCODE_STEP: CapsuleType
PREFIX_FN: CapsuleType

def compress(data: Buffer, level: int = 0, checksum: bool = False) -> bytes:
    """A zstd frame of ``data`` (content size recorded)."""

def decompress(data: Buffer, max_size: int) -> bytes:
    """Decode every frame of ``data``; at most ``max_size`` bytes are allocated."""

def decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""

def decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of a zstd frame."""

def library_version() -> dict[str, str]:
    """``{"zstd": version}``."""

def encode_params(level: int, checksum: bool) -> bytes:
    """The parameter block of ``ENCODE_STEP``."""

def _compress_nosize(data: Buffer, level: int = 0, checksum: bool = False) -> bytes: ...
