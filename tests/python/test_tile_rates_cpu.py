# SPDX-License-Identifier: BSD-3-Clause
"""scripts/tile_rates.py on made-up ops rows: each forward row's fused kernel rate goes to its
config, its plain GEMM and matmul rates to the baselines of its shape; backward, cross-entropy and
failed-to-run rows, and rows at another M, are left out."""
import importlib.util
import pathlib
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "tile_rates.py"
sys.path.insert(0, str(SCRIPT.parent))  # as when run: its sibling issue13_bars.py
spec = importlib.util.spec_from_file_location("tile_rates", SCRIPT)
tile_rates = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tile_rates)

MNK = [1000, 2000, 500]
FLOPS = 2.0 * 1000 * 2000 * 500


def row(name, kernel, coda_ms, gemm_ms=None, matmul_ms=None, m=1000, mnk=MNK):
    return {"name": name, "M": m, "mnk": [m, *mnk[1:]], "kernel": kernel, "coda_ms": coda_ms,
            "baseline": {"coda_gemm": gemm_ms, "torch_matmul": matmul_ms}}


def test_rates_group_by_config_and_shape():
    rows = [row("linear_rope", "pingpong along n swizzle 2", 4.0, gemm_ms=2.0, matmul_ms=2.5),
            row("linear_qknorm_rope", "pingpong along m swizzle 8", 5.0, gemm_ms=2.0, matmul_ms=2.5),
            row("linear_rmsnorm_rope", "pingpong_128x192 along n swizzle 1", 2.5)]
    got = tile_rates.rates(rows)[(2000, 500)]
    tf = lambda ms: FLOPS / ms / 1e9  # noqa: E731
    assert got["pingpong"] == pytest.approx([tf(4.0), tf(5.0)])
    assert got["pingpong_128x192"] == pytest.approx([tf(2.5)])
    assert got["coda gemm"] == pytest.approx([tf(2.0), tf(2.0)])
    assert got["matmul"] == pytest.approx([tf(2.5), tf(2.5)])


def test_rows_that_are_not_one_forward_gemm_are_left_out():
    rows = [row("linear_swiglu_bwd", "pingpong along n swizzle 2", 1.0),
            row("linear_cross_entropy", "ovcoop_128x256 along m swizzle 2", 1.0),
            row("linear_cross_entropy_fwd_bwd", None, 1.0),
            row("linear_rope", "pingpong along n swizzle 2", None),  # did not run
            row("linear_rope", "pingpong along n swizzle 2", 1.0, m=2000)]
    assert tile_rates.rates(rows, m=1000) == {}
    assert list(tile_rates.rates(rows)) == [(2000, 500)]  # the M = 2000 row, once M is not fixed


def test_config_of_names_the_tile_part_of_a_kernel():
    assert tile_rates.config_of("pingpong_128x192 along n swizzle 2") == "pingpong_128x192"
    assert tile_rates.config_of("coop heuristic swizzle 1") == "coop"
    assert tile_rates.config_of(None) is None
