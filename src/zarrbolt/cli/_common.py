"""What the commands share: store options, opening nodes, sizes, the progress bar."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..convert.report import Progress


def add_store_options(p: argparse.ArgumentParser, *names: str) -> None:
    """``--storage-options JSON`` (and one per extra name, e.g. ``dst``) for remote URLs."""
    p.add_argument("--storage-options", default=None, metavar="JSON",
                   help="options for remote URLs as JSON, e.g. '{\"endpoint_url\": \"http://...\", \"anon\": true}' "
                        "(default: the standard environment variables, e.g. AWS_ENDPOINT_URL)")
    for n in names:
        p.add_argument(f"--{n}-storage-options", default=None, metavar="JSON",
                       help=f"options for the {n} URL (default: --storage-options)")


def storage_options(args: argparse.Namespace, name: str | None = None) -> dict[str, Any] | None:
    text = getattr(args, f"{name}_storage_options", None) if name else None
    if text is None:
        text = args.storage_options
    if text is None:
        return None
    from ..errors import StoreError

    try:
        obj = json.loads(text)
    except ValueError as e:
        raise StoreError(f"--storage-options is not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise StoreError("--storage-options must be a JSON object")
    return obj


def is_url(s: str) -> bool:
    from ..storage.urls import url_scheme

    sch = url_scheme(s)
    return sch is not None and sch != "file"


def open_node(path: str, options: dict[str, Any] | None) -> Any:
    """The array or group at ``path`` (read-only)."""
    from ..api.opening import open as zb_open

    return zb_open(path, mode="r", storage_options=options if is_url(path) else None)


def pretty_json(obj: Any) -> str:
    """Indented JSON with short lists of numbers or strings on one line."""
    import re

    text = json.dumps(obj, indent=2)

    def join(m: Any) -> str:
        items = [x.strip() for x in m.group(1).split(",")]
        return "[" + ", ".join(items) + "]"

    return re.sub(r"\[\s*((?:(?:-?[\d.eE+-]+|\"[^\"\n]*\"|null|true|false),?\s*)+)\]", join, text)


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def parse_bytes(text: str) -> int:
    """``"512M"``, ``"2G"``, ``"1.5GiB"``, ``"1000000"`` as bytes."""
    from ..errors import MetadataError

    t = text.strip().upper().replace("IB", "").replace("B", "")
    mult = 1
    if t and t[-1] in "KMGT":
        mult = 1024 ** ("KMGT".index(t[-1]) + 1)
        t = t[:-1]
    try:
        v = float(t)
    except ValueError:
        raise MetadataError(f"not a size: {text!r} (e.g. 512M, 2G)") from None
    if v <= 0:
        raise MetadataError(f"size must be positive: {text!r}")
    return int(v * mult)


def want_bar(args: argparse.Namespace) -> bool:
    """A progress bar: on a terminal (stderr), with tqdm installed, unless ``--no-progress``."""
    if getattr(args, "no_progress", False):
        return False
    if getattr(args, "progress", False):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _width() -> dict[str, Any]:
    """tqdm's width: follow the terminal, or a fixed one where the terminal reports none (a
    pseudo-terminal without a size, where tqdm would draw an empty bar)."""
    import os
    import shutil

    try:
        if os.get_terminal_size(sys.stderr.fileno()).columns > 0:
            return {"dynamic_ncols": True}
    except (OSError, ValueError, AttributeError):
        pass
    size = shutil.get_terminal_size((100, 24))
    return {"ncols": size.columns or 100, "nrows": size.lines or 24}


class Bar(Progress):
    """A tqdm bar per array: bytes, rate and ETA, and the destination shards (chunks) done.
    Without tqdm a line at the end of each array."""

    def __init__(self, unit_name: str = "shards", enabled: bool = True):
        self.unit_name = unit_name
        self.enabled = enabled
        self._bar: Any = None
        self._units = self._total_units = 0
        try:
            import tqdm  # noqa: F401

            self._tqdm = enabled
        except ImportError:
            self._tqdm = False

    def start(self, total_bytes: int, total_units: int, label: str = "") -> None:
        self.close()
        self._units, self._total_units = 0, total_units
        if not self.enabled or not self._tqdm:
            return
        from tqdm import tqdm

        self._bar = tqdm(total=total_bytes, unit="B", unit_scale=True, unit_divisor=1024, desc=label or None,
                         file=sys.stderr, leave=True, **_width())
        self._bar.set_postfix_str(f"{self.unit_name} 0/{total_units}", refresh=False)

    def advance(self, nbytes: int, nunits: int) -> None:
        self._units += nunits
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self.unit_name} {self._units}/{self._total_units}", refresh=False)
            self._bar.update(nbytes)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
