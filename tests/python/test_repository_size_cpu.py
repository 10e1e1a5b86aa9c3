# SPDX-License-Identifier: BSD-3-Clause
"""The tracked tree stays small enough to travel: the device tool copies the working tree to the
GPU machine with a call's carried wheels and binaries under one 64 MiB cap, and raw benchmark
results grew it to 40 MB by the thirty-ninth session (a call was refused). Older sessions' raw
folders go into bench/results/archive/ (docs/benchmarks.md §4)."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT_MB = 32  # half the cap: room for a call's wheels and binaries


def tracked_bytes() -> int:
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True,
                           capture_output=True).stdout.split(b"\0")
    return sum((ROOT / f.decode()).stat().st_size for f in files if f and (ROOT / f.decode()).is_file())


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout (CI runs in one)")
def test_the_tracked_tree_leaves_room_in_a_device_call():
    size_mb = tracked_bytes() / 1e6
    assert size_mb < LIMIT_MB, (
        f"the tracked tree is {size_mb:.1f} MB, over {LIMIT_MB} MB: archive the oldest "
        "bench/results/sessionNN/ folders (docs/benchmarks.md §4)")
