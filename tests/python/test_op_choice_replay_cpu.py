# SPDX-License-Identifier: BSD-3-Clause
"""scripts/op_choice_replay.py on two op-tuner rows: a current choice is priced at its candidate's
time, or at today's where it is the kernel that ran; the tuner's names match coda-bench choose's."""
import importlib.util
import pathlib
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "op_choice_replay.py"
sys.path.insert(0, str(SCRIPT.parent))  # as when run: its sibling coda_choose.py
spec = importlib.util.spec_from_file_location("op_choice_replay", SCRIPT)
replay_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(replay_script)

ROWS = [
    {"name": "linear_rope", "shape": "1B", "M": 3000, "N": 3072, "K": 2048,
     "today_kernel": "pingpong along n swizzle 1", "today_x_matmul": 1.417,
     "candidates": [{"kernel": "pingpong along n swizzle 1", "x_matmul": 1.40},
                    {"kernel": "coop along m swizzle 2", "x_matmul": 1.259}]},
    {"name": "linear_rmsnorm_bwd", "shape": "1B", "M": 3000, "N": 2048, "K": 16384,
     "today_kernel": "coop heuristic swizzle 1", "today_x_matmul": 1.374,
     "candidates": [{"kernel": "pingpong along n swizzle 2", "x_matmul": 1.293}]},
]


def test_candidate_names_match_the_tuners():
    assert replay_script.candidate_name("pingpong_128x128_2x1 along_n s2") == "pingpong along n swizzle 2"
    assert replay_script.candidate_name("coop_128x256_2x1 heuristic s1") == "coop heuristic swizzle 1"


def test_replay_prices_a_choice_at_its_candidate_or_todays_time():
    # The first row's choice changes to its best candidate; the second stays today's kernel, which
    # no candidate names but today's time prices.
    logged, current, unpriced, changed = replay_script.replay(
        ROWS, ["coop along m swizzle 2", "coop heuristic swizzle 1"])
    assert (logged, current, unpriced) == (1, 2, 0)  # 1.259 / 1.417 = 0.889 missed before
    assert [(row["name"], now) for row, _, now, _ in changed] == [("linear_rope", 1.259)]
    # A changed choice no candidate names stays unpriced.
    assert replay_script.replay(ROWS, ["coop along m swizzle 2", "coop along n swizzle 8"])[2] == 1


def test_a_second_shape_case_is_queried_by_its_op():
    row = {"name": "linear_rmsnorm_bwd_qkv", "op": "linear_rmsnorm_bwd", "M": 16384, "N": 4096, "K": 6144}
    assert replay_script.choose_query(row) == "op linear_rmsnorm_bwd 16384 4096 6144"
    assert replay_script.choose_query(ROWS[0]) == "op linear_rope 3000 3072 2048"  # rows before "op"
