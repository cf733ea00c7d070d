"""Shared by every harness in fuzz/: the acceptable outcomes and the atheris entry point.

A harness is ``fuzz/fuzz_<name>.py`` defining ``one_input(data: bytes) -> None`` and calling
``common.main(one_input)`` under ``if __name__ == "__main__"``.  An input may end in:

- a normal return;
- a ``zarrbolt.errors.ZarrboltError`` (the typed errors for bad input: ``CorruptChunkError``,
  ``ChecksumError``, ``MetadataError``, ...), swallowed by :func:`main`'s wrapper.

Anything else is a finding: another Python exception (libFuzzer writes the input to
``crash-<sha1>`` and the run stops), a sanitizer report (ASan, UBSan with halt_on_error), a
libFuzzer out-of-memory (one allocation or the process above ``-rss_limit_mb``: a size taken from
untrusted bytes without a bound) or a timeout (``-timeout``: a hang).

Harnesses also check properties beyond "no crash" where a cheap oracle exists (a decoded chunk's
size, the ISA variants of a kernel agreeing, CRC-32C against a bit-by-bit reference): a failed
check raises :class:`Finding`, which is never swallowed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import atheris

# zarrbolt's own Python modules are imported here, instrumented (coverage of the parsers and of
# the codec glue); the optional integrations that import third-party packages are left out.
# Harnesses import common before zarrbolt, so that every zarrbolt module is instrumented.
_SKIP = ("zarrbolt.dask", "zarrbolt.codec_pipeline", "zarrbolt.zarr_python", "zarrbolt.storage.object_store",
         "zarrbolt.storage.fsspec_store", "zarrbolt.__main__")
with atheris.instrument_imports(include=["zarrbolt"]):
    import importlib
    import pkgutil

    import zarrbolt
    from zarrbolt import errors

    for _m in pkgutil.walk_packages(zarrbolt.__path__, "zarrbolt."):
        if not _m.name.startswith(_SKIP) and "._ext." not in _m.name:
            importlib.import_module(_m.name)

ACCEPTED: tuple[type[BaseException], ...] = (errors.ZarrboltError,)


class Finding(AssertionError):
    """A property the harness checks failed (never an acceptable outcome)."""


def check(cond: Any, what: str) -> None:
    if not cond:
        raise Finding(what)


def accept(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; a typed zarrbolt error is an acceptable outcome (returns None)."""
    try:
        return fn()
    except ACCEPTED:
        return None


def main(one_input: Callable[[bytes], None]) -> None:
    """atheris entry point: ``python fuzz/fuzz_x.py [libFuzzer flags] [corpus dirs or files]``.
    Given only files (no flags needed), each is run once: the way to reproduce a crash."""

    def wrapped(data: bytes) -> None:
        try:
            one_input(data)
        except ACCEPTED:
            pass

    if os.environ.get("ZB_FUZZ_REPLAY") == "1":  # plain replay without libFuzzer (fuzz/README.md)
        for path in sys.argv[1:]:
            with open(path, "rb") as f:
                wrapped(f.read())
            print(f"replayed {path}: ok")
        return
    atheris.Setup(sys.argv, wrapped)
    atheris.Fuzz()
