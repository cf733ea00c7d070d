"""``zarrbolt fsck``: check a local Zarr hierarchy for what crashed or concurrent writers
and damaged disks leave behind, and optionally clean it.

``zarrbolt fsck PATH [--clean] [--older-than S] [--json]`` prints :func:`zarrbolt.fsck.fsck`'s
report; exit status 0 when nothing is wrong, 1 when something is, 2 when the path cannot be
checked."""

from __future__ import annotations

from typing import Any


def add_parser(subparsers: Any) -> None:
    """Add ``fsck`` to the ``zarrbolt`` command's subparsers."""
    from ..storage._local_safety import ORPHAN_AGE

    p = subparsers.add_parser(
        "fsck", help="check a local Zarr hierarchy (strays, temporary files, torn chunks, unfinished copies)",
        description="Check a local Zarr hierarchy for what crashed or concurrent writers and damaged disks leave "
                    "behind: orphaned temporary files, stray keys, torn or undecodable chunks, bad shard indexes, "
                    "nodes with metadata of both Zarr formats, and arrays an interrupted `zarrbolt cp` left "
                    "unfinished; optionally remove the orphaned temporary files.  Exit status 0: nothing wrong, "
                    "1: problems found, 2: the path cannot be checked.")
    p.add_argument("path", help="the directory of the hierarchy (a local store root)")
    p.add_argument("--clean", action="store_true", help="remove orphaned temporary files of dead writers")
    p.add_argument("--older-than", type=float, default=ORPHAN_AGE, metavar="SECONDS",
                   help="temporary files of other hosts (or unknown writers) older than this are orphans "
                        f"(default {ORPHAN_AGE:.0f})")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    """Run ``zarrbolt fsck``: 0 when nothing is wrong, 1 when something is, 2 when the path
    cannot be checked."""
    import json

    from ..errors import StoreError
    from ..fsck import fsck

    try:
        report = fsck(args.path, clean=args.clean, older_than=args.older_than)
    except (StoreError, OSError) as e:
        print(f"zarrbolt fsck: {e}")
        return 2
    print(json.dumps(report.to_json(), indent=2) if args.json else report.summary())
    return 0 if report.ok else 1
