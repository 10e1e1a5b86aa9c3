# SPDX-License-Identifier: BSD-3-Clause
"""`python -m coda.bench ksweep` fits t(K) = a + b·K by least squares (exact on a line, the
least-squares line on noisy points, an error without two distinct K), reads a row's median clock,
rejects bad arguments by name before anything runs, and refuses to run without a GPU with a clear
message."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coda.bench import ksweep

REPO = Path(__file__).resolve().parents[2]


def test_fit_recovers_a_line_and_the_least_squares_one():
    a, b = ksweep.fit_line([1024, 2048, 4096], [0.1 + 0.001 * k for k in (1024, 2048, 4096)])
    assert abs(a - 0.1) < 1e-12 and abs(b - 0.001) < 1e-15
    # Points (0, 0), (1, 1), (2, 1): slope 0.5, intercept 1/6.
    a, b = ksweep.fit_line([0, 1, 2], [0, 1, 1])
    assert abs(b - 0.5) < 1e-12 and abs(a - 1 / 6) < 1e-12
    with pytest.raises(ValueError, match="two distinct K"):
        ksweep.fit_line([4096, 4096], [1.0, 1.1])


def test_median_clock_skips_unsampled_rounds():
    row = {"rounds_sm_mhz": {"coda": [1500, None, 1700, 1600]}}
    assert ksweep.median_mhz(row, "coda") == 1600
    assert ksweep.median_mhz(row, "torch_matmul") is None


def test_refuses_without_a_gpu():
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "CUDA_VISIBLE_DEVICES": ""}
    completed = subprocess.run([sys.executable, "-m", "coda.bench", "ksweep"], cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2 and "needs a CUDA GPU" in completed.stderr


@pytest.mark.parametrize("argv, message", [
    (["--ks", "1024,x"], "--ks takes comma-separated integers"),
    (["--ks", "0,1024"], "--ks takes positive depths"),
    (["--m", "0"], "--m and --n must be positive"),
    (["--config", "coop_128x256_2x1,along_n"], "--config takes CONFIG,RASTER,SWIZZLE"),
])
def test_bad_arguments_are_named(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        ksweep.parse_args(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_arguments_parse_to_depths_and_a_forced_kernel():
    args = ksweep.parse_args(["--ks", "1024,4096", "--config", "coop_128x256_2x1,along_n,4"])
    assert args.ks == [1024, 4096] and args.config == ("coop_128x256_2x1", "along_n", 4)
