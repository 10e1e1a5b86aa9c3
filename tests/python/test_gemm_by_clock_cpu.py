# SPDX-License-Identifier: BSD-3-Clause
"""scripts/gemm_by_clock.py on made-up rows: each round lands in its clock bin by the mean of the
two blocks' clocks, per K, rounds without a clock or a time are left out, and a bin reads the
geometric mean of its rounds' coda_gemm ÷ matmul."""
import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "gemm_by_clock.py"
spec = importlib.util.spec_from_file_location("gemm_by_clock", SCRIPT)
by_clock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(by_clock)


def row(k, coda_gemm, matmul, clocks_ours, clocks_theirs):
    return {"mnk": [4096, 4096, k],
            "rounds_ms": {"coda_gemm": coda_gemm, "torch_matmul": matmul},
            "rounds_sm_mhz": {"coda_gemm": clocks_ours, "torch_matmul": clocks_theirs}}


def test_rounds_bin_by_mean_clock_and_k():
    rows = [
        row(4096, [1.0, 2.0, 1.0], [1.0, 1.0, 1.0], [1500, 1980, None], [1500, 1980, 1500]),
        row(4096, [4.0], [2.0], [1990], [1970]),      # mean 1980: the top bin with the 2.0 above
        row(2048, [0.5], [1.0], [1500], [1500]),
        {"mnk": [1, 1, 4096], "rounds_ms": {"coda": [1.0]}, "rounds_sm_mhz": {}},  # no GEMM pair
    ]
    points = by_clock.rounds(rows)
    assert len(points) == 4  # the round without a clock is left out
    cells = by_clock.by_clock(points)
    assert cells[(1400, 1600, 4096)] == (1.0, 1)
    assert cells[(1950, 2100, 4096)] == (2.0, 2)
    assert cells[(1400, 1600, 2048)] == (0.5, 1)
    assert len(cells) == 3
