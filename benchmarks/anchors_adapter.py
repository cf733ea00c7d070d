"""zarrbolt adapter for ``benchmarks/anchors_bench.py`` (the cross-system harness).

    python benchmarks/anchors_bench.py --adapter benchmarks/anchors_adapter.py:make_adapter \
        --systems zarrbolt,zarr-python,zarrs,tensorstore

zarrbolt must be importable by the harness's interpreter (``pip install .`` into that venv).
"""

from __future__ import annotations

from anchors_bench import Adapter, Unsupported  # provided by the harness


def source_commit(module_file: str) -> str:
    """The git commit of the checkout zarrbolt was built from (``+dirty`` when it has changes),
    for the performance page: the checkout of ``module_file`` when zarrbolt runs from it, else
    this adapter's (``make perf-run`` installs zarrbolt from the checkout it runs in)."""
    import os
    import subprocess

    for where in (os.path.dirname(module_file), os.path.dirname(os.path.abspath(__file__))):
        try:
            head = subprocess.run(["git", "-C", where, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        return head + ("+dirty" if dirty else "")
    return ""


def make_adapter(threads: int) -> Adapter:
    import zarrbolt
    from zarrbolt.errors import MetadataError
    from zarrbolt.metadata import DataType

    zarrbolt.config.set(threads=threads)

    def open_(path: str, layout: dict):
        try:
            return zarrbolt.open_array(path, mode="r")
        except MetadataError as e:  # e.g. a codec zarrbolt does not implement
            raise Unsupported(f"{type(e).__name__}: {e}") from None

    def read(h, sel):
        return h[sel]

    def write(path: str, layout: dict, data) -> None:
        meta = layout["metadata"]
        dt = DataType.parse(meta["data_type"])
        a = zarrbolt.create_array(
            path,
            shape=tuple(meta["shape"]),
            dtype=dt,
            chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
            codecs=meta["codecs"],
            fill_value=dt.parse_fill_value(meta["fill_value"]),
            chunk_key_encoding=meta.get("chunk_key_encoding"),
            overwrite=True,
        )
        a[...] = data

    return Adapter(
        name="zarrbolt",
        settings={"threads": threads, "note": "zarrbolt.config threads = size of the shared decode/encode pool"},
        open=open_,
        read=read,
        write=write,
        versions={"zarrbolt": zarrbolt.__version__, "commit": source_commit(zarrbolt.__file__)},
    )
