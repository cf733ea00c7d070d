"""Shared setup of the ecosystem tests (zarr-python, dask, xarray, ome-zarr-py).

They run under the reference virtualenv (``make test`` runs them there with zarrbolt installed);
under the main one (no zarr-python) every module skips itself with ``pytest.importorskip``.

- Where zarr-python is importable, ``zarrbolt.codec_pipeline`` is imported up front, which registers
  zarrbolt's pipeline with zarr-python also for an in-place build (no entry-point metadata).
- Every test here gets a timeout (``ZARRBOLT_ECOSYSTEM_TIMEOUT`` seconds, default 300) when
  pytest-timeout is installed, so a hung event loop or dask cluster fails instead of stalling CI.
- Fixtures: ``pipeline_path`` (the dotted path users configure), ``zarr_config`` (zarr-python's
  config with zarrbolt's pipeline selected for the test, restored afterwards) and
  ``fallback_counts`` (zarrbolt's fallback counter, cleared before the test).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

PIPELINE_PATH = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
HERE = Path(__file__).resolve().parent
TIMEOUT_S = float(os.environ.get("ZARRBOLT_ECOSYSTEM_TIMEOUT", "300"))

HAVE_ZARR = importlib.util.find_spec("zarr") is not None
if HAVE_ZARR:
    try:
        import zarrbolt.codec_pipeline  # noqa: F401  (registers ZarrboltCodecPipeline)
    except ModuleNotFoundError as e:  # a zarrbolt without the pipeline: its tests fail, others run
        if e.name != "zarrbolt.codec_pipeline":
            raise


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("timeout") or TIMEOUT_S <= 0:
        return
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIMEOUT_S))


@pytest.fixture(scope="session")
def pipeline_path() -> str:
    return PIPELINE_PATH


@pytest.fixture
def zarr_config():
    """zarr-python's ``zarr.config`` with ``codec_pipeline.path`` set to zarrbolt's pipeline."""
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("zarrbolt.codec_pipeline")
    with zarr.config.set({"codec_pipeline.path": PIPELINE_PATH}):
        yield zarr.config


@pytest.fixture
def fallback_counts():
    """``zarrbolt.codec_pipeline.fallback_counts``, emptied before the test and after it."""
    pytest.importorskip("zarr")
    cp = pytest.importorskip("zarrbolt.codec_pipeline")
    cp.fallback_counts.clear()
    yield cp.fallback_counts
    cp.fallback_counts.clear()
