"""Opening and listing a hierarchy: with consolidated metadata (one read) against listing the
store and reading each node's zarr.json.  A local store makes the difference small in time; the
store operations counted by ``track_store_calls`` are what an object store pays per request."""

import shutil

import zarrbolt as zb

from ._layouts import data_root

GROUPS, ARRAYS = 20, 20


def _build(root: str) -> None:
    g = zb.open_group(root, mode="w")
    for i in range(GROUPS):
        s = g.create_group(f"g{i}")
        for j in range(ARRAYS):
            s.create_array(f"a{j}", shape=(100, 100), dtype="f4", chunks=(50, 50), attributes={"j": j})


class Hierarchy:
    params = [[False, True]]
    param_names = ["consolidated"]

    def setup_cache(self):
        root = data_root("hierarchy")
        _build(f"{root}/plain.zarr")
        shutil.copytree(f"{root}/plain.zarr", f"{root}/cons.zarr")
        zb.consolidate_metadata(f"{root}/cons.zarr")
        return root

    def _path(self, root, consolidated):
        return f"{root}/{'cons' if consolidated else 'plain'}.zarr"

    def time_open_and_list(self, root, consolidated):
        g = zb.open_group(self._path(root, consolidated), mode="r")
        g.members(max_depth=None)

    def track_store_calls(self, root, consolidated):
        calls = {"n": 0}
        store = zb.LocalStore(self._path(root, consolidated), read_only=True)
        for name in ("get", "exists", "list_prefix", "list_dir"):
            orig = getattr(store, name)

            def counted(*a, _orig=orig, **kw):
                calls["n"] += 1
                return _orig(*a, **kw)

            setattr(store, name, counted)
        zb.open_group(store, mode="r").members(max_depth=None)
        return calls["n"]

    track_store_calls.unit = "store calls"
