# SPDX-License-Identifier: BSD-3-Clause
"""Test setup: the `coda` package is the installed one (pip install ., which builds coda._C); a
checkout without an install falls back to <repo>/python for the pure-Python modules.

GPU tests carry the `hopper` marker: without a Hopper GPU they report *skipped* (CI has none);
with CODA_REQUIRE_GPU=1 (the device script) a missing GPU fails them instead."""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("coda") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))


def _hopper() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device"
    if torch.cuda.get_device_capability() != (9, 0):
        return f"{torch.cuda.get_device_name()} is not a Hopper (sm_90) GPU"
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "hopper: needs a Hopper GPU (skipped without one)")


def pytest_collection_modifyitems(config, items):
    why = _hopper()
    if why is None:
        return
    if os.environ.get("CODA_REQUIRE_GPU") == "1":
        raise pytest.UsageError(f"CODA_REQUIRE_GPU=1 but {why}")
    for item in items:
        if "hopper" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=why))
