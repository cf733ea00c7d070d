"""What a copy did (:class:`CopyReport`) and how it tells its progress (:class:`Progress`)."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import Any

from ..errors import DiskFullError, StoreError, StoreFullError

_NO_SPACE = (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC))


class Progress:
    """Progress of a copy: :meth:`start` once with the totals, :meth:`advance` after each
    block, :meth:`close` at the end.  This base class shows nothing; the command line's
    progress bar is a subclass."""

    def start(self, total_bytes: int, total_units: int, label: str = "") -> None:
        pass

    def advance(self, nbytes: int, nunits: int) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class CopyReport:
    """The outcome of :func:`zarrbolt.copy` / :func:`zarrbolt.copy_array`.

    ``arrays`` / ``groups``: node paths copied (``""`` is the root); ``skipped``: ``(path,
    reason)`` of source nodes left out (``skip_errors=True``); ``bytes_copied``: decoded bytes
    read and written; ``units_written``: destination shards (or chunks, when unsharded) the
    copy wrote, of which ``units_stored`` were stored and ``units_fill`` held only the fill
    value and were left out (as zarr-python leaves them out); ``units_skipped``: found complete
    and kept (``resume=True``); ``max_block_bytes``:
    the largest block held in memory; ``memory_bound``: the bound the blocks were sized by;
    ``interrupted``: True when a Ctrl-C stopped the copy (completed units are intact and the
    metadata of unfinished arrays is not written: run again with ``resume=True``)."""

    source: str = ""
    destination: str = ""
    arrays: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    bytes_copied: int = 0
    units_written: int = 0
    units_stored: int = 0
    units_fill: int = 0
    units_skipped: int = 0
    max_block_bytes: int = 0
    memory_bound: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A human-readable summary (what the CLI prints).

        Returns
        -------
        str
            Arrays and groups copied, bytes and rate, shards stored, left out as all fill
            value and resumed, the memory
            bound, and one line per skipped node and note.
        """
        rate = self.bytes_copied / self.seconds / 1e6 if self.seconds > 0 else 0.0
        parts = [(f"copied {len(self.arrays)} array(s), {len(self.groups)} group(s): "
                  f"{_human(self.bytes_copied)} in {self.seconds:.2f} s ({rate:.0f} MB/s), "
                  f"{self.units_stored} shard(s)/chunk(s) stored")]
        if self.units_fill:
            parts.append(f"{self.units_fill} left out as all fill value")
        if self.units_skipped:
            parts.append(f"{self.units_skipped} already complete (resumed)")
        parts.append(f"blocks up to {_human(self.max_block_bytes)} (bound {_human(self.memory_bound)})")
        out = ", ".join(parts)
        for path, why in self.skipped:
            out += f"\nskipped /{path}: {why}"
        for note in self.notes:
            out += f"\nnote: {note}"
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-serialisable dict (what ``zarrbolt cp --json`` prints).

        Returns
        -------
        dict
            Every field of the report; ``skipped`` as lists.
        """
        d = dict(self.__dict__)
        d["skipped"] = [list(s) for s in self.skipped]
        return d


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def no_space(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the disk or quota is full."""
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 10:
        if isinstance(e, StoreFullError):
            return True
        if isinstance(e, OSError) and e.errno in _NO_SPACE:
            return True
        if isinstance(e, OSError) and "No space left" in str(e):
            return True
        e = e.__cause__ or e.__context__
        seen += 1
    return False


def as_disk_full(exc: BaseException, where: str) -> BaseException:
    """A :class:`~zarrbolt.errors.DiskFullError` for a full disk, else ``exc`` itself."""
    if isinstance(exc, (OSError, StoreError)) and not isinstance(exc, DiskFullError) and no_space(exc):
        err = DiskFullError(f"{where}: no space left on the destination ({exc}); the shards written so far are "
                            "complete, the array's metadata was not written: free space and run again with --resume")
        err.__cause__ = exc
        return err
    return exc
