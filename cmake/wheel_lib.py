"""Locate a header and a static library shipped inside an installed wheel.

Usage: python wheel_lib.py DIST HEADER LIBNAME
Prints "<include dir>;<library path>" or exits 1.  Used by cmake/ZarrboltDeps.cmake to find
c-blosc (PyPI ``blosc``) and c-blosc2 (PyPI ``blosc2``) in the build environment without
importing them.
"""
import sys
from importlib import metadata


def main() -> int:
    dist_name, header, libname = sys.argv[1:4]
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return 1
    inc = lib = None
    for f in dist.files or ():
        name = f.name
        if name == header and inc is None and "include" in str(f):
            inc = dist.locate_file(f).resolve().parent
        elif name == libname and lib is None:
            lib = dist.locate_file(f).resolve()
    if inc is None or lib is None or not lib.exists():
        return 1
    sys.stdout.write(f"{inc.as_posix()};{lib.as_posix()};{dist.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
