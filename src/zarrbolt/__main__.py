"""Command line: ``python -m zarrbolt ...`` (see :mod:`zarrbolt.cli`)."""

from __future__ import annotations

import sys

from .cli import main
from .cli.demo import synthetic_volume

__all__ = ["main", "synthetic_volume"]

if __name__ == "__main__":
    sys.exit(main())
