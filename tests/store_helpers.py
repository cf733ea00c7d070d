"""Helpers shared by the store tests (tests/storage)."""

from __future__ import annotations

import os
from pathlib import Path

from zarrbolt.storage import local as local_mod

TMP = local_mod.TMP_PREFIX
VALUE = b"0123456789"


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)).replace(os.sep, "/") for p in root.rglob("*") if p.is_file())


def temp_files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(TMP)] if root.exists() else []
