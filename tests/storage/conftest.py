"""The ``store`` fixture of the store tests: a MemoryStore and a LocalStore."""

from __future__ import annotations

import pytest

from zarrbolt.storage import LocalStore, MemoryStore, Store


@pytest.fixture(params=["memory", "local"])
def store(request, tmp_path) -> Store:
    # the local root does not exist yet: it must be created on the first write
    return MemoryStore() if request.param == "memory" else LocalStore(tmp_path / "root")
