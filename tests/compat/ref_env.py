"""The environment of the reference-venv subprocesses (zarr-python, tensorstore, numcodecs)."""

from __future__ import annotations

import os

_SANITIZER_VARS = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")


def ref_env() -> dict[str, str]:
    """This process's environment, except under ``make asan-test``/``tsan-test``
    (``ZARRBOLT_SANITIZER`` set): there the sanitizer runtimes are not preloaded into the
    reference Python, and ``PYTHONPATH`` (the sanitizer build, made for this Python's version) is
    dropped, so the reference venv uses the zarrbolt installed in it (``make refinstall``)."""
    env = dict(os.environ)
    if env.get("ZARRBOLT_SANITIZER"):
        for name in (*_SANITIZER_VARS, "PYTHONPATH"):
            env.pop(name, None)
    return env
