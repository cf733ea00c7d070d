"""Smoke test of an installed zarrbolt wheel (``make wheel-smoke``): run by a bare virtualenv's
Python with ``python -I`` under ``env -i`` (no compiler, nothing but the venv on PATH).

Checks that zarrbolt and every compiled module load from the venv's site-packages, that the wheel
links no shared library outside the interpreter's own process (static zstd, libdeflate, lz4,
c-blosc, c-blosc2), and writes + reads back a sharded array through each compressor."""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from pathlib import Path


def _site_dirs() -> list[Path]:
    return [Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")]


def check_location() -> None:
    import zarrbolt

    here = Path(zarrbolt.__file__).resolve()
    if not any(here.is_relative_to(d) for d in _site_dirs()):
        raise SystemExit(f"zarrbolt imported from {here}, not from the venv's site-packages")
    ext_dir = here.parent / "_ext"
    exts = sorted(p.name for p in ext_dir.iterdir() if p.suffix in (".so", ".pyd"))
    expected = {"_blosc1", "_blosc2", "_checksum32", "_deflate", "_delta", "_downsample", "_kernels", "_lz4", "_numeric",
                "_plans", "_shard", "_vlen", "_zstd"}
    found = {name.split(".")[0] for name in exts}
    if expected - found:
        raise SystemExit(f"compiled modules missing from the wheel: {sorted(expected - found)}")
    for name in sorted(expected):
        __import__(f"zarrbolt._ext.{name}")
    stubs = sorted(p.name for p in ext_dir.glob("*.pyi"))
    if len(stubs) != len(expected) or not (here.parent / "py.typed").is_file():
        raise SystemExit(f"py.typed / stubs missing from the wheel: {stubs}")
    print(f"zarrbolt {zarrbolt.__version__} from {here.parent}: {len(found)} compiled modules, {len(stubs)} stubs")


def check_no_shared_libs() -> None:
    """/proc/self/maps after importing every module: no zstd/deflate/lz4/blosc shared object."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        return
    libs = {line.split()[-1] for line in maps.read_text().splitlines() if ".so" in line.split()[-1]}
    import zarrbolt

    ours = str(Path(zarrbolt.__file__).resolve().parent)
    bad = [lib for lib in libs if not lib.startswith(ours)
           and any(k in os.path.basename(lib) for k in ("zstd", "deflate", "lz4", "blosc"))]
    if bad:
        raise SystemExit(f"shared libraries loaded that should be linked statically: {bad}")
    print(f"{len(libs)} shared objects mapped, none of zstd/libdeflate/lz4/blosc outside zarrbolt's own modules")


def roundtrip(root: str) -> None:
    import numpy as np

    import zarrbolt as zb

    rng = np.random.default_rng(20)
    data = (rng.integers(0, 4096, size=(96, 80, 72))).astype("uint16")
    compressors = {
        "zstd": [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
        "gzip": [{"name": "gzip", "configuration": {"level": 5}}],
        "blosc-lz4": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                          "typesize": 2, "blocksize": 0}}],
        "blosc-zstd": [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                           "typesize": 2, "blocksize": 0}}],
    }
    for label, comp in compressors.items():
        path = os.path.join(root, f"{label}.zarr")
        z = zb.create_array(path, shape=data.shape, chunks=(16, 16, 24), shards=(48, 32, 72), dtype="uint16",
                            compressors=comp)
        z[:] = data
        back = zb.open_array(path, mode="r")
        if not np.array_equal(back[:], data):
            raise SystemExit(f"{label}: the sharded array read back differs from what was written")
        if not np.array_equal(back[5:77, 3:61, 10:11], data[5:77, 3:61, 10:11]):
            raise SystemExit(f"{label}: a partial read differs")
        nshards = sum(len(files) for _, _, files in os.walk(os.path.join(path, "c")))
        print(f"{label}: wrote + read {data.nbytes} bytes in {nshards} shards")


def main() -> None:
    check_location()
    with tempfile.TemporaryDirectory() as root:
        roundtrip(root)
    check_no_shared_libs()
    print("wheel smoke test: ok")


if __name__ == "__main__":
    main()
    sys.exit(0)
