"""numcodecs' Jenkins lookup3 and Fletcher-32 checksums: compiled module ``_checksum32.pyx``."""

from typing_extensions import Buffer

def jenkins_lookup3(data: Buffer, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 hashlittle of ``data`` (a C-contiguous uint8 buffer)."""

def fletcher32(data: Buffer) -> int:
    """HDF5's Fletcher-32 of ``data`` (a C-contiguous uint8 buffer)."""
