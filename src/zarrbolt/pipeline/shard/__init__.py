"""Shard I/O: what the read and write planners do with the shards of a sharded array, beyond the
shard format itself (``codecs/sharding.py``: JSON, layout, encode/decode of a shard, the index
codec).

- :mod:`.index`: a shard's index fetched from a Store, an async source or an open file, and
  validated (one error text per failure); the cache of indexes read from async sources.
- :mod:`.fetch`: which shard each wanted inner chunk is in, the work items of a read, its windows
  (the one C rule, ``zb_shard_windows``), the reads through the Store API into a thread's arena,
  and the fetch of a shard's wanted parts from an async source.
- :mod:`.encode`: a shard's inner chunks encoded (and decoded for merges) by one C call each way,
  and a shard stored on a thread of its own while the next one is encoded.
- :mod:`.storing`: how a shard is written (whole, streamed, stored behind, rewritten, appended to,
  merged through the store, conditionally): one decision, and each way.
"""

from .index import INDEX_CACHE
from .storing import ShardWriter

__all__ = ["INDEX_CACHE", "ShardWriter"]
