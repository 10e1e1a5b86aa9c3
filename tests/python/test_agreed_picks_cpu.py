# SPDX-License-Identifier: BSD-3-Clause
"""scripts/agreed_picks.py on excerpts of both tuners' tables: a shape becomes a row only where
both runs picked, and the row is the pick its own run scored higher (cuBLAS/coda for the GEMM,
× matmul for an op); a shape one run kept is left out."""
import importlib.util
import pathlib
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "agreed_picks.py"
sys.path.insert(0, str(SCRIPT.parent))  # as when run: its sibling merge_table.py
spec = importlib.util.spec_from_file_location("agreed_picks", SCRIPT)
agreed_picks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agreed_picks)

PP = "{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2, Decomposition::kHeuristic}},"
COOP = "{TileConfig::kCoop128x256Cluster1x2, RasterOrder::kAlongN, 4, Decomposition::kHeuristic}},"
GEMM_1 = f"""// `coda-bench tune` on NVIDIA H100 80GB HBM3, M = 1536
{{OperandLayout::kAkBk, 1536, 3072, 2048, {PP}  // 1B qkv fwd: 0.811 (pick, 4.2 % faster than the choice before, head to head)
{{OperandLayout::kAkBn, 1536, 2048, 3072, {COOP}  // 1B qkv dgrad: 0.828 (pick, 3.2 % faster than the choice before, head to head)
{{OperandLayout::kAkBk, 1536, 2048, 8192, {PP}  // 1B down fwd: 0.876 (kept: best within 0.2 %)
"""
GEMM_2 = f"""{{OperandLayout::kAkBk, 1536, 3072, 2048, {COOP}  // 1B qkv fwd: 0.798 (pick, 6.8 % faster than the choice before, head to head)
{{OperandLayout::kAkBn, 1536, 2048, 3072, {PP}  // 1B qkv dgrad: 0.835 (pick, 4.6 % faster than the choice before, head to head)
{{OperandLayout::kAkBk, 1536, 2048, 8192, {COOP}  // 1B down fwd: 0.880 (pick, 2.1 % faster than the choice before, head to head)
"""
OP_1 = f"""{{OpKey::kLinearSwiglu, 6225, 28672, 4096, {PP}  // 8B: 1.083 x matmul, was 1.146 (head to head)
{{OpKey::kLinearRope, 6225, 6144, 4096, {PP}  // 8B: 1.103 x matmul, was 1.119 (head to head)
"""
OP_2 = f"""{{OpKey::kLinearSwiglu, 6225, 28672, 4096, {COOP}  // 8B: 1.071 x matmul, was 1.150 (head to head)
"""


def test_gemm_rows_both_runs_picked_take_the_higher_cublas_ratio():
    rows = agreed_picks.agreed(GEMM_1, GEMM_2)
    assert len(rows) == 2  # the down projection: run 1 kept it
    qkv_fwd, qkv_dgrad = rows
    assert qkv_fwd.startswith("{OperandLayout::kAkBk, 1536, 3072, 2048, {TileConfig::kPingpong")  # 0.811 > 0.798
    assert qkv_dgrad.startswith("{OperandLayout::kAkBn, 1536, 2048, 3072, {TileConfig::kPingpong")  # 0.835 > 0.828
    assert all(r.endswith("(both runs picked over the choice before)") for r in rows)


def test_op_rows_take_the_lower_matmul_ratio_and_need_both_runs():
    rows = agreed_picks.agreed(OP_1, OP_2)
    assert len(rows) == 1  # linear_rope: only run 1 wrote a row
    assert rows[0].startswith("{OpKey::kLinearSwiglu, 6225, 28672, 4096, {TileConfig::kCoop")  # 1.071 < 1.083
