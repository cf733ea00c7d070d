"""The codec pipeline: chain validation and binding, chunk encode/decode, batching."""
