"""The zarr-python releases zarrbolt's codec pipeline supports: the installed one (the reference
venv's) passes the check made before the pipeline is imported; an older or a next-major release
gets one line naming the supported versions and the one found (ZarrVersionError, an
ImportError), not an ImportError from deep inside zarr-python."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("zarr")

import zarrbolt  # noqa: E402
from zarrbolt.errors import ZarrVersionError  # noqa: E402
from zarrbolt.zarr_python.versions import SUPPORTED_TEXT, check_zarr_version, parse_version


def test_the_installed_zarr_python_is_supported():
    import zarr

    check_zarr_version()
    check_zarr_version(zarr.__version__)


@pytest.mark.parametrize("version", ["3.1.6", "3.0.0", "2.18.3", "4.0.0", "not-a-version"])
def test_an_unsupported_release_gets_one_line(version):
    with pytest.raises(ZarrVersionError) as e:
        check_zarr_version(version)
    text = str(e.value)
    assert "\n" not in text and SUPPORTED_TEXT in text and f"found zarr-python {version}" in text
    assert isinstance(e.value, ImportError) and isinstance(e.value, zarrbolt.errors.ZarrboltError)


def test_versions_parse():
    assert parse_version("3.4.2") == (3, 4) and parse_version("3.10.0.dev3+g1") == (3, 10)
    check_zarr_version("3.10.1")


def test_the_pipeline_module_imports_with_the_supported_release():
    r = subprocess.run([sys.executable, "-c", "import zarrbolt.codec_pipeline as c; print(c.ZarrboltCodecPipeline)"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ZarrboltCodecPipeline" in r.stdout, r.stderr
