"""Shared test helpers live beside the tests (numeric_chains.py): make them importable under
pytest's importlib import mode."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
