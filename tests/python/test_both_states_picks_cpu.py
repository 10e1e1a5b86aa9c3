# SPDX-License-Identifier: BSD-3-Clause
"""scripts/both_states_picks.py on two tuner runs (as the GPU comes, sustained): a confirmed pick
becomes a row where its mean over both states is >= 2 % below today's choice and neither state
loses > 2 % to today's; the best-mean of several confirmed picks is the row."""
import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "both_states_picks.py"
spec = importlib.util.spec_from_file_location("both_states_picks", SCRIPT)
both = importlib.util.module_from_spec(spec)
spec.loader.exec_module(both)

TODAY = "pingpong along n swizzle 2"
WIDE = "pingpong_128x192 along n swizzle 1"
WIDE_M = "pingpong_128x192 along m swizzle 2"


def row(shape, today_x, candidates, pick=None, written=False, op="kLinearRope", n=6144):
    return {"op": op, "shape": shape, "M": 16384, "N": n, "K": 4096, "today_kernel": TODAY,
            "today_x_matmul": today_x, "candidates": [{"kernel": k, "x_matmul": v} for k, v in candidates.items()],
            "pick": pick, "written": written, "table_row": f"{{OpKey::{op}, 16384, {n}, 4096, <{pick}>}},"}


def test_a_pick_sustained_alone_confirmed_is_written_when_the_boost_state_loses_little():
    boost = [row("8B", 1.00, {TODAY: 1.00, WIDE: 1.01})]
    sustained = [row("8B", 1.12, {TODAY: 1.12, WIDE: 0.99}, pick=WIDE, written=True)]
    out = both.rows(boost, sustained)
    assert len(out) == 1 and out[0].startswith(f"{{OpKey::kLinearRope, 16384, 6144, 4096, <{WIDE}>}},")
    assert "boost 1.010 (was 1.000), sustained 0.990 (was 1.120)" in out[0]


def test_no_row_where_the_other_state_loses_more_than_the_bound():
    boost = [row("1B", 0.94, {TODAY: 0.94, WIDE: 0.985})]  # 4.8 % behind at the boost clock
    sustained = [row("1B", 1.07, {TODAY: 1.07, WIDE: 0.98}, pick=WIDE, written=True)]
    assert both.rows(boost, sustained) == []


def test_no_row_without_a_confirmed_pick_or_below_the_gain():
    boost = [row("8B", 1.00, {TODAY: 1.00, WIDE: 0.99})]
    sustained = [row("8B", 1.00, {TODAY: 1.00, WIDE: 0.995})]  # nothing confirmed
    assert both.rows(boost, sustained) == []
    sustained = [row("8B", 1.00, {TODAY: 1.00, WIDE: 0.995}, pick=WIDE, written=True)]  # 0.75 % gain
    assert both.rows(boost, sustained) == []


def test_models_of_one_shape_pool_and_the_best_mean_confirmed_pick_wins():
    boost = [row("8B", 1.00, {TODAY: 1.00, WIDE: 1.02, WIDE_M: 1.00}),
             row("Qwen3-8B", 1.00, {TODAY: 1.00, WIDE: 1.01, WIDE_M: 1.01})]
    sustained = [row("8B", 1.12, {TODAY: 1.12, WIDE: 0.99, WIDE_M: 0.99}, pick=WIDE, written=True),
                 row("Qwen3-8B", 1.02, {TODAY: 1.02, WIDE: 0.98, WIDE_M: 0.95}, pick=WIDE_M, written=True)]
    out = both.rows(boost, sustained)
    assert len(out) == 1 and f"<{WIDE_M}>" in out[0] and "8B/Qwen3-8B" in out[0]
