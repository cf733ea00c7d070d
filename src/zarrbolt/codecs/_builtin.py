"""Imports every built-in codec module so that each registers itself."""

from . import bytes_codec, compressors, crc32c, numeric, reshape, sharding, transpose  # noqa: F401
