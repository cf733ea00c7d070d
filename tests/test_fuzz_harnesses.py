"""The fuzz harnesses (fuzz/, see fuzz/README.md) over their generated seed corpora, in the normal
build: every seed must end in success or a typed zarrbolt error and pass the harness's oracles.
Keeps the harnesses and make_corpus.py working between fuzzing campaigns (`make fuzz`)."""

from __future__ import annotations

import importlib
import os
import sys

import pytest

pytest.importorskip("atheris", reason="atheris (a test dependency: make venv) is not installed")

FUZZ = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz")
HARNESSES = sorted(f[len("fuzz_"):-3] for f in os.listdir(FUZZ) if f.startswith("fuzz_") and f.endswith(".py"))


@pytest.fixture(scope="module")
def fuzz_path():
    sys.path.insert(0, FUZZ)
    yield
    sys.path.remove(FUZZ)


def test_every_harness_has_seeds(fuzz_path):
    make_corpus = importlib.import_module("make_corpus")
    assert HARNESSES and all(hasattr(make_corpus, f"seeds_{h}") for h in HARNESSES)


@pytest.mark.parametrize("name", HARNESSES)
def test_seeds_pass(fuzz_path, name):
    make_corpus = importlib.import_module("make_corpus")
    common = importlib.import_module("common")
    harness = importlib.import_module(f"fuzz_{name}")
    seeds = list(getattr(make_corpus, f"seeds_{name}")())
    assert seeds
    for seed in seeds[:: max(1, len(seeds) // 150)]:  # at most ~150 per harness: seconds, not minutes
        try:
            harness.one_input(seed)
        except common.ACCEPTED:
            pass
