# SPDX-License-Identifier: BSD-3-Clause
"""scripts/op_choice_replay.py --price: each build's choice read at its own candidate column of a
tuner row (a choice no candidate is stays unpriced), summarised as geomean / worst / rows within
0.92 of the row's best."""
import importlib.util
import pathlib
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "op_choice_replay.py"
sys.path.insert(0, str(SCRIPT.parent))  # as when run: its sibling coda_choose.py
spec = importlib.util.spec_from_file_location("op_choice_replay", SCRIPT)
replay_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(replay_script)

ROWS = [
    {"candidates": [{"kernel": "pingpong along n swizzle 2", "x_matmul": 1.10},
                    {"kernel": "coop along n swizzle 4", "x_matmul": 1.00}],
     "today_kernel": "pingpong along n swizzle 2", "today_x_matmul": 1.00},
    {"candidates": [{"kernel": "pingpong along m swizzle 2", "x_matmul": 1.20},
                    {"kernel": "pingpong_128x192 along m swizzle 2", "x_matmul": 1.05}],
     "today_kernel": "pingpong along m swizzle 2", "today_x_matmul": 1.20},
]


def test_a_choice_is_priced_at_its_candidate_column_not_at_todays_reading():
    # Row 1's today reads 1.00, its own column 1.10: the column is what counts.
    values = replay_script.price(ROWS, ["pingpong along n swizzle 2", "pingpong_128x192 along m swizzle 2"])
    assert values == [1.00 / 1.10, 1.0]


def test_a_choice_that_is_no_candidate_stays_unpriced():
    assert replay_script.price(ROWS, ["coop heuristic swizzle 1", "pingpong along m swizzle 2"]) == [1.05 / 1.20]


def test_the_summary_counts_rows_within_0_92():
    assert replay_script.price_summary([1.0, 0.9]) == "0.949 / 0.90 / 1 of 2"
    assert replay_script.price_summary([]) == "no priced row"


def test_a_row_is_queried_by_its_op_key():
    # Logged with its key; an older log names only its case, a second shape of a keyed op.
    assert replay_script.choose_query({"op": "linear_rmsnorm_bwd", "name": "linear_rmsnorm_bwd_qkv",
                                       "M": 1, "N": 2, "K": 3}) == "op linear_rmsnorm_bwd 1 2 3"
    assert replay_script.op_key({"name": "linear_rmsnorm_bwd_qkv"}) == "linear_rmsnorm_bwd"
    assert replay_script.op_key({"name": "linear_bias_gelu_save_pre"}) == "linear_bias_gelu_save_pre"
    assert replay_script.op_key({"name": "linear_swiglu_no_z"}) == "linear_swiglu"


def test_a_heuristic_raster_is_priced_as_the_one_cutlass_runs():
    # CUTLASS walks along M where the grid has more cluster columns than rows, else along N.
    # The 8B QKV dgrad (M = 16384, N = 4096) under Cooperative 128 x 256, 2 x 1: 64 cluster rows,
    # 16 columns: along N. A 1024-token RMSNorm backward at N = 8192: 4 rows, 32 columns: along M.
    assert replay_script.candidate_name("coop_128x256_2x1 heuristic s1", 16384, 4096) == "coop along n swizzle 1"
    assert replay_script.candidate_name("coop_128x256_2x1 heuristic s1", 1024, 8192) == "coop along m swizzle 1"
    assert replay_script.candidate_name("pingpong_128x192_2x1 heuristic s2", 4096, 2048) == (
        "pingpong_128x192 along n swizzle 2")
    # Without a shape (or with an explicit raster) the name is spelled as before.
    assert replay_script.candidate_name("coop_128x256_2x1 heuristic s1") == "coop heuristic swizzle 1"
    assert replay_script.candidate_name("pingpong_128x128_2x1 along_m s2", 8, 8) == "pingpong along m swizzle 2"


def test_prices_are_grouped_by_op_key():
    rows = [dict(ROWS[0], name="linear_rmsnorm_bwd_qkv"), dict(ROWS[1], op="linear_swiglu", name="linear_swiglu")]
    by_op = replay_script.price_by_op(rows, ["pingpong along n swizzle 2", "coop heuristic swizzle 1"])
    # The second row's choice is no candidate: its op is listed with no priced row.
    assert by_op == {"linear_rmsnorm_bwd": [1.00 / 1.10], "linear_swiglu": []}
