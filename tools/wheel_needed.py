"""List the shared libraries (DT_NEEDED) each extension module of a Linux wheel loads, and fail
unless they are the C runtime alone: zstd, libdeflate, lz4, c-blosc and c-blosc2 are linked
statically, and auditwheel grafted nothing (no ``zarrbolt.libs/``).  Used by ``make wheel``."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ALLOWED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2",
           "ld-linux-aarch64.so.1", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"}


def needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], check=True, capture_output=True, text=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def main(wheel: str) -> int:
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        grafted = [n for n in names if ".libs/" in n]
        zf.extractall(tmp)
        mods = sorted(Path(tmp).rglob("*.so"))
        bad = {}
        for so in mods:
            libs = needed(so)
            print(f"{so.relative_to(tmp)}: {', '.join(libs)}")
            extra = sorted(set(libs) - ALLOWED)
            if extra:
                bad[so.name] = extra
    if grafted or bad or not mods:
        print(f"wheel_needed: grafted {grafted}, unexpected shared libraries {bad}, modules {len(mods)}")
        return 1
    print(f"wheel_needed: {len(mods)} extension modules load only the C runtime")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
