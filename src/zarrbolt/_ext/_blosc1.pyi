"""c-blosc 1.x (writes the Zarr ``blosc`` codec's format): compiled module ``_blosc1.pyx``."""

from typing_extensions import Buffer, CapsuleType

ENCODE_STEP: CapsuleType
"""``zarrbolt.bb_fn`` capsule: the encode step of the fused write pipeline."""

def compress(data: Buffer, typesize: int, clevel: int, shuffle: int, cname: str, blocksize: int = 0) -> bytes:
    """A c-blosc 1.x chunk of ``data``."""

def library_version() -> str:
    """The c-blosc 1.x version string."""

def compressors() -> list[str]:
    """The compressor names compiled into c-blosc 1.x."""

def zstd_context_reuse() -> bool:
    """Whether c-blosc's zstd blocks are compressed with a context kept per thread."""

def encode_params(clevel: int, shuffle: int, typesize: int, cname: str, blocksize: int = 0) -> bytes:
    """The parameter block of ``ENCODE_STEP``."""
