"""Imports every built-in codec module so that each registers itself."""

from . import blosc, bytes_codec, crc32c, gzip, numeric, reshape, sharding, transpose, zstd  # noqa: F401
from . import vlen  # noqa: F401  (vlen-utf8, vlen-bytes)
from .numcodecs import checksums, compressors, filters  # noqa: F401  (the numcodecs.* codecs zarr-python writes)
