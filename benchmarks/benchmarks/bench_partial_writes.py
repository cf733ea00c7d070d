"""asv benchmarks of partial writes into sharded arrays (layout b of ``_layouts.py``: shards
128x256x256 of 64^3 inner chunks, blosc zstd bitshuffle), in both ``shard_update`` modes, and of
full writes of an array whose shards overhang its edge.  ``benchmarks/partial_writes.py`` runs
the same workloads against zarr-python, zarrs and tensorstore (at the harness's volume size).

* ``inner``: one 64^3 inner chunk rewritten inside an existing shard;
* ``slab``: a z-slab 8 planes deep across all shards (inside inner chunks);
* ``append``: a growing stack: resize by 8 planes, then write them (time per step);
* ``edge``: a full write of a 96-plane volume in 128-plane shards (every shard an edge shard)."""

import os
import shutil
import tempfile

import numpy as np

import zarrbolt as zb

from ._layouts import LAYOUTS, SHAPE, data_root, volume

_MODES = ["rewrite", "append"]


class PartialWrites:
    params = [_MODES]
    param_names = ["shard_update"]
    timeout = 300
    rounds = 1
    repeat = (1, 5, 4.0)
    number = 1

    def setup_cache(self):
        root = data_root("pw")
        zb.create_array(f"{root}/b.zarr", shape=SHAPE, **LAYOUTS["b"])[...] = volume(SHAPE)
        return root

    def setup(self, root, mode):
        try:
            zb.config.get("shard_update")
        except KeyError:
            raise NotImplementedError("the shard_update option is missing in this commit") from None
        self.root = tempfile.mkdtemp(prefix="zb-asv-pw-")
        shutil.copytree(f"{root}/b.zarr", f"{self.root}/b.zarr")
        self.arr = zb.open_array(f"{self.root}/b.zarr", mode="r+")
        self.u16 = self.arr[:64]
        self._cfg = zb.config.set(shard_update=mode)
        self._cfg.__enter__()
        self.rng = np.random.default_rng(0)
        self.block = np.ascontiguousarray(self.u16[:64, :64, :64][::-1])
        self.slab = np.ascontiguousarray(self.u16[:8][:, ::-1])
        self.depth = 8
        self.grow = zb.create_array(f"{self.root}/grow.zarr", shape=(8,) + SHAPE[1:], **LAYOUTS["b"])
        self.grow[...] = self.slab

    def teardown(self, root, mode):
        self._cfg.__exit__(None, None, None)
        shutil.rmtree(self.root, ignore_errors=True)

    def time_inner_chunk(self, root, mode):
        z, y, x = (int(self.rng.integers(0, s // 64)) * 64 for s in SHAPE)
        self.arr[z:z + 64, y:y + 64, x:x + 64] = self.block

    def time_slab_8(self, root, mode):
        z = int(self.rng.integers(0, SHAPE[0] // 64)) * 64 + 8 * int(self.rng.integers(1, 7))
        self.arr[z:z + 8] = self.slab

    def time_append_8_planes(self, root, mode):
        if self.depth + 8 > SHAPE[0]:  # start a new stack (asv repeats the call)
            self.grow.resize((8,) + SHAPE[1:])
            self.depth = 8
        self.grow.resize((self.depth + 8,) + SHAPE[1:])
        self.grow[self.depth:self.depth + 8] = self.slab
        self.depth += 8

    def track_inner_chunk_bytes_written(self, root, mode):
        """Bytes one 64^3 inner chunk write stores (the shard rewritten, or what is appended)."""
        shard = os.path.join(self.root, "b.zarr", "c", "0", "0", "0")
        st = os.stat(shard)
        self.arr[64:128, 64:128, 64:128] = self.block
        new = os.stat(shard)
        return new.st_size if new.st_ino != st.st_ino else new.st_size - st.st_size

    track_inner_chunk_bytes_written.unit = "bytes"


class EdgeShardWrite:
    """A full write whose every shard overhangs the array (96 planes, shards 128 deep)."""

    timeout = 300
    rounds = 1
    repeat = (1, 5, 4.0)
    number = 1

    def setup(self):
        self.out = tempfile.mkdtemp(prefix="zb-asv-edge-")
        self.data = volume(SHAPE)[:96]

    def teardown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def time_full_edge_shards(self):
        a = zb.create_array(f"{self.out}/e.zarr", shape=self.data.shape, overwrite=True, **LAYOUTS["b"])
        a[...] = self.data

