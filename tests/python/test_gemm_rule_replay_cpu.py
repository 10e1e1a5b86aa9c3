# SPDX-License-Identifier: BSD-3-Clause
"""scripts/gemm_rule_replay.py on a two-shape excerpt of a `coda-bench tune` log: it reads each
shape's logged choice and ratio (the pick's ratio scaled back by its head-to-head gain) and prices
a changed choice at its config's best candidate of the same rounds."""
import importlib.util
import pathlib
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "gemm_rule_replay.py"
sys.path.insert(0, str(SCRIPT.parent))  # as when run: its sibling coda_choose.py
spec = importlib.util.spec_from_file_location("gemm_rule_replay", SCRIPT)
replay_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(replay_script)

LOG = """coda-bench tune on NVIDIA H100 80GB HBM3, M = 1024
1B   o        fwd     1024x  2048x  2048  today skcoop_128x256_2x1 heuristic s1 heuristic pick pingpong_128x128_2x1 along_n s2      sweep 32.9 %  head to head   33.7 %  -> pick  cuBLAS/coda 0.938  diff 0.0e+00
     each config's best, cuBLAS/coda:  coop_128x256_1x2 along_n s1 0.801  skcoop_128x256_2x1 along_m s1 stream_k 0.607  pingpong_128x128_2x1 along_n s2 0.909
8B   o        fwd     1024x  4096x  4096  today pingpong_128x128_2x1 heuristic s1    pick pingpong_128x128_2x1 along_m s4      sweep  0.3 %  head to head        -  -> kept  cuBLAS/coda 0.985  diff 0.0e+00
     each config's best, cuBLAS/coda:  coop_128x256_2x1 along_n s4 0.970  pingpong_128x128_2x1 along_m s4 0.989
"""


def test_parse_reads_todays_choice_and_ratio():
    shapes = replay_script.parse(LOG)
    assert [s["mnk"] for s in shapes] == [(1024, 2048, 2048), (1024, 4096, 4096)]
    first, second = shapes
    assert first["today"] == ["skcoop_128x256_2x1", "heuristic", "s1", "heuristic"]
    assert abs(first["today_ratio"] - 0.938 * (1 - 0.337)) < 1e-9  # the pick replaced it
    assert second["today_ratio"] == 0.985  # kept: the written ratio is today's
    assert first["best"]["pingpong_128x128_2x1"] == ("along_n s2", 0.909)
    assert first["best"]["skcoop_128x256_2x1"] == ("along_m s1 stream_k", 0.607)


def test_replay_prices_a_changed_choice_at_its_configs_best():
    shapes = replay_script.parse(LOG)
    choices = [["pingpong_128x128_2x1", "heuristic", "s1"], ["pingpong_128x128_2x1", "heuristic", "s1"]]
    old, new, changed = replay_script.replay(shapes, choices)
    assert (old, new) == (1, 2)  # the stream-K choice at 0.62 of 0.909 misses; Pingpong does not
    assert len(changed) == 1 and changed[0][2] == 0.909
    # A stream-K choice differs by its decomposition too.
    assert not replay_script.same_choice(["skcoop_128x256_2x1", "heuristic", "s1", "stream_k"],
                                         ["skcoop_128x256_2x1", "heuristic", "s1", "heuristic"])
