"""What the ``numcodecs.*`` codecs share: numcodecs' ``id`` configuration member."""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError


def check_numcodecs_id(conf: dict[str, Any], name: str) -> None:
    """numcodecs' ``id`` member, allowed when it names codec ``name`` ("numcodecs.<id>"), as
    zarr-python accepts it (and drops it when it writes)."""
    if "id" in conf and conf["id"] != name.removeprefix("numcodecs."):
        raise MetadataError(f"codec {name!r}: id {conf['id']!r} does not name this codec")
