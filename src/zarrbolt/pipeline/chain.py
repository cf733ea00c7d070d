"""The codec chain lives with the codecs (:mod:`zarrbolt.codecs.chain`); re-exported here for
the pipeline's users."""

from ..codecs.chain import BoundChain, CodecChain, wrap_codec_error

__all__ = ["BoundChain", "CodecChain", "wrap_codec_error"]
