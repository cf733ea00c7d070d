"""c-blosc2 (decodes Zarr ``blosc`` chunks): compiled module ``_blosc2.pyx``."""

from typing_extensions import Buffer, CapsuleType

DECODE_STEP: CapsuleType
"""``zarrbolt.bb_fn`` capsule: the decode step of the fused read pipeline."""
GETITEM_FN: CapsuleType
"""``zarrbolt.getitem_fn`` capsule: partial (block-wise) decoding."""
SIZES_FN: CapsuleType
"""``zarrbolt.sizes_fn`` capsule: the sizes a chunk header declares."""

def cbuffer_sizes(data: Buffer) -> tuple[int, int, int]:
    """``(nbytes, cbytes, blocksize)`` from the chunk header, checked against ``len(data)``."""

def decompress(data: Buffer, expected_nbytes: int) -> bytes:
    """Decode a whole chunk whose header must declare exactly ``expected_nbytes`` bytes."""

def decompress_into(data: Buffer, out: Buffer) -> int:
    """Decode a whole chunk into the writable buffer ``out``; return the bytes written."""

def getitem(data: Buffer, start: int, nitems: int, out: Buffer) -> int:
    """Decode items ``[start, start + nitems)`` into ``out``; return the bytes written."""

def library_version() -> str:
    """The c-blosc2 version string."""

# testing aids: switch zarrbolt's fast paths off/on, returning the previous setting
def _set_fast_bitshuffle(on: bool) -> bool: ...
def _set_fast_lz4(on: bool) -> bool: ...
def _bitshuffle_isas() -> list[str]: ...
def _bitshuffle_set_isa(name: str) -> str: ...
def _bitunshuffle(data: Buffer, typesize: int) -> bytes: ...
