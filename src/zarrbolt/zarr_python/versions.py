"""Which zarr-python releases zarrbolt's codec pipeline works with, and the check made before
the pipeline is imported: an unsupported release gets one line naming the versions
(:class:`~zarrbolt.errors.ZarrVersionError`) instead of an ImportError deep inside zarr-python.

The pipeline uses zarr-python's codec-pipeline API of 3.4 (``GetResult``, the chunk spec of
rectilinear grids); zarr-python 3.4 needs Python 3.12 or later, as zarrbolt does (SPEC 0)."""

from __future__ import annotations

import re

# (oldest supported, first unsupported): the ``zarr`` extra's pin in pyproject.toml
SUPPORTED = ((3, 4), (4, 0))
SUPPORTED_TEXT = f">={SUPPORTED[0][0]}.{SUPPORTED[0][1]},<{SUPPORTED[1][0]}"


def parse_version(text: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a version string (``"3.4.2"``, ``"3.5.0.dev12+g..."``), or None."""
    m = re.match(r"\s*(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_zarr_version(version: str | None = None) -> None:
    """Raise :class:`~zarrbolt.errors.ZarrVersionError` unless zarr-python ``version`` (default:
    the installed one) is supported."""
    from ..errors import ZarrVersionError

    if version is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            version = dist_version("zarr")
        except PackageNotFoundError:
            import zarr

            version = str(getattr(zarr, "__version__", "unknown"))
    v = parse_version(version)
    if v is None or not SUPPORTED[0] <= v < SUPPORTED[1]:
        raise ZarrVersionError(
            f"zarrbolt's codec pipeline supports zarr-python {SUPPORTED_TEXT}, found zarr-python {version}: "
            f"pip install 'zarr{SUPPORTED_TEXT}' (zarr-python 3.4 needs Python 3.12 or later)")
