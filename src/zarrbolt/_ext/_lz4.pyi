"""numcodecs' ``lz4`` codec (header + LZ4 block): compiled module ``_lz4.pyx``."""

from typing import Any

from typing_extensions import Buffer, CapsuleType

DECODE_STEP: CapsuleType
ENCODE_STEP: CapsuleType
PREFIX_FN: CapsuleType

def compress(data: Buffer, acceleration: int = 1) -> bytes:
    """Header + LZ4 block of ``data`` (``acceleration`` < 1 means 1, as in numcodecs)."""

def decoded_size(data: Buffer) -> int:
    """The decoded size the header of ``data`` claims."""

def decompress(data: Buffer, max_size: int) -> bytes:
    """Decode ``data``: exactly the header's size, which must be at most ``max_size``."""

def decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode ``data`` into the writable buffer ``out``; return the number of bytes written."""

def decompress_prefix(data: Buffer, size: int, want: int) -> bytes:
    """The first ``want`` (or all ``size``) decoded bytes of ``data``."""

def encode_params(acceleration: int) -> bytes:
    """The parameter block of the encode step for ``acceleration``."""

def compress_bound(n: int) -> int:
    """Worst-case encoded size of ``n`` bytes, header included (0: more than LZ4 takes)."""

def library_version() -> dict[str, str | bool]:
    """``{"lz4": version, "lz4_source": "liblz4" | "c-blosc2", "lz4_partial": bool}``."""

def _run_bb_step(capsule: CapsuleType, params: bytes, data: Buffer, cap: int) -> bytes: ...
def _run_aa_step(capsule: CapsuleType, params: bytes, data: Buffer, nelem: int, out: Buffer) -> Any: ...
