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
    """Progress: on a terminal (stderr) unless ``--no-progress``; elsewhere only with ``--progress``
    (or ``--json``'s quiet wins)."""
    if getattr(args, "no_progress", False):
        return False
    if getattr(args, "progress", False):
        return True
    if getattr(args, "json", False):
        return False
    return _is_terminal()


def add_progress_options(p: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (by default progress is shown on a terminal only)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", action="store_true",
                   help="show progress even when stderr is not a terminal (a line per second)")
    g.add_argument("--no-progress", action="store_true", help="no progress (none is shown when not a terminal)")


def _is_terminal() -> bool:
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


def _interval(terminal: bool) -> float:
    """Seconds between two redraws: ``ZARRBOLT_PROGRESS_INTERVAL``, else 0.1 on a terminal and
    1 in a log (``--progress`` when not a terminal)."""
    import os

    try:
        return max(0.0, float(os.environ["ZARRBOLT_PROGRESS_INTERVAL"]))
    except (KeyError, ValueError):
        return 0.1 if terminal else 1.0


class Bar(Progress):
    """Progress of a command, on stderr: a tqdm bar (bytes, rate, ETA, and the units done, e.g.
    destination shards) when tqdm is installed and stderr is a terminal; otherwise a plain line,
    redrawn in place on a terminal, or written once a second when not one.  ``count_only``: the
    units are all there is to count (no bytes).  Thread-safe: writes report from their threads.
    Redrawn at most every ``ZARRBOLT_PROGRESS_INTERVAL`` seconds (0.1 on a terminal)."""

    def __init__(self, unit_name: str = "shards", enabled: bool = True, *, count_only: bool = False):
        import threading

        self.unit_name = unit_name
        self.enabled = enabled
        self.count_only = count_only
        self._lock = threading.Lock()
        self._bar: Any = None
        self._terminal = _is_terminal()
        self._interval = _interval(self._terminal)
        self._label = ""
        self._done = self._total = self._units = self._total_units = 0
        self._t0 = self._shown_at = 0.0
        self._shown = ""
        self._open = False
        self._tqdm = False
        if enabled and self._terminal:
            try:
                import tqdm  # noqa: F401

                self._tqdm = True
            except ImportError:
                pass

    def start(self, total_bytes: int, total_units: int, label: str = "") -> None:
        import time

        self.close()
        with self._lock:
            self._label, self._units, self._total_units = label, 0, total_units
            self._done, self._total = 0, total_units if self.count_only else total_bytes
            self._t0 = time.monotonic()
            self._shown_at, self._shown = 0.0, ""
            if not self.enabled:
                return
            self._open = True
            if self._tqdm:
                from tqdm import tqdm

                kw: dict[str, Any] = ({"unit": self.unit_name} if self.count_only else
                                      {"unit": "B", "unit_scale": True, "unit_divisor": 1024})
                self._bar = tqdm(total=self._total, desc=label or None, file=sys.stderr, leave=True,
                                 mininterval=self._interval, miniters=1, **kw, **_width())
                if not self.count_only:
                    self._bar.set_postfix_str(f"{self.unit_name} 0/{total_units}", refresh=False)
            else:
                self._draw(force=True)

    def set_total(self, total_units: int) -> None:
        """A new number of units (``count_only``: one that grows as the work is planned)."""
        with self._lock:
            self._total_units = total_units
            if self.count_only:
                self._total = total_units
                if self._bar is not None:
                    self._bar.total = total_units
                    self._bar.refresh()

    def advance(self, nbytes: int, nunits: int) -> None:
        with self._lock:
            self._units += nunits
            self._done += nunits if self.count_only else nbytes
            if self._bar is not None:
                if not self.count_only:
                    self._bar.set_postfix_str(f"{self.unit_name} {self._units}/{self._total_units}", refresh=False)
                self._bar.update(nunits if self.count_only else nbytes)
            elif self._open:
                self._draw()

    def _text(self) -> str:
        import time

        pct = 100 * self._done / self._total if self._total else 100.0
        head = f"{self._label}: " if self._label else ""
        if self.count_only:
            return f"{head}{pct:3.0f}% {self._units}/{self._total_units} {self.unit_name}"
        rate = self._done / max(time.monotonic() - self._t0, 1e-9) / 1e6
        return (f"{head}{pct:3.0f}% {human(self._done)} / {human(self._total)}, {self.unit_name} "
                f"{self._units}/{self._total_units}, {rate:.0f} MB/s")

    def _draw(self, force: bool = False, end: str = "") -> None:
        import time

        now = time.monotonic()
        if not force and now - self._shown_at < self._interval:
            return
        text = self._text()
        if text == self._shown and not end:
            return
        same, self._shown_at, self._shown = text == self._shown, now, text
        try:
            if self._terminal:
                sys.stderr.write(end if same else f"\r{text}\x1b[K{end}")
            else:
                sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            self.enabled = self._open = False

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            elif self._open:
                self._draw(force=True, end="\n" if self._terminal else "")
            self._open = False
