# SPDX-License-Identifier: BSD-3-Clause
"""Where a run's numbers come from: the commit of the code that produced them (coda-train and the
benchmarks label their JSON with it)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def git_commit() -> str | None:
    """$CODA_COMMIT when set (a copy of the tree whose git history is not its own); else git's, when
    the package runs from a checkout; else the commit the installed package was built from
    (`<hash>-dirty` if its tracked files had changes; written by CMake into coda/_build_commit.py)."""
    if os.environ.get("CODA_COMMIT"):
        return os.environ["CODA_COMMIT"]
    if (REPO_ROOT / ".git").exists():
        try:
            return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                                  text=True, check=True, timeout=30).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        from coda._build_commit import COMMIT
    except ImportError:
        return None
    return COMMIT
