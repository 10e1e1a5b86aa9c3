# SPDX-License-Identifier: BSD-3-Clause
"""scripts/table_buckets.py without a GPU: each table's M buckets per (op, N, K), and the buckets
one GPU's table has that another's lacks (the tuning left to do)."""
import math
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import table_buckets  # noqa: E402

ROW = "{{OpKey::{op}, {m}, {n}, {k}, {{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2, Decomposition::kHeuristic}}}},  // x"


def table(*rows):
    return "// a comment line\n" + "\n".join(ROW.format(op=op, m=m, n=n, k=k) for op, m, n, k in rows) + "\n"


def test_buckets_are_the_m_values_per_op_and_shape():
    t = table(("kLinearRope", 16384, 6144, 4096), ("kLinearRope", 5793, 6144, 4096),
              ("kLinearRope", 16384, 3072, 2048))
    assert table_buckets.buckets(t) == {("kLinearRope", 6144, 4096): [5793, 16384],
                                        ("kLinearRope", 3072, 2048): [16384]}


def test_gaps_name_the_m_another_gpu_has():
    h100 = table_buckets.buckets(table(("kLinearRope", 16384, 6144, 4096), ("kLinearRope", 4096, 6144, 4096)))
    h200 = table_buckets.buckets(table(("kLinearRope", 16384, 6144, 4096), ("kLinearSwiglu", 5793, 24576, 4096)))
    assert table_buckets.gaps({"h100": h100, "h200": h200}) == [
        ("h100", "kLinearSwiglu", 24576, 4096, [5793]),
        ("h200", "kLinearRope", 6144, 4096, [4096]),
    ]


def test_the_repository_tables_parse(capsys):
    assert table_buckets.main([str(REPO / p) for p in table_buckets.DEFAULT]) == 0
    out = capsys.readouterr().out
    assert out.startswith("h100: ") and "\nh200: " in out and "16384" in out


def test_reach_is_the_m_whose_nearest_row_is_this_one_within_an_octave():
    assert table_buckets.reach([4096, 5793, 16384], 5793) == pytest.approx((math.sqrt(4096 * 5793),
                                                                            math.sqrt(5793 * 16384)))
    assert table_buckets.reach([16384], 16384) == (8192, 32768)


def test_ab_m_reaches_each_changed_row_away_from_its_own_m_and_from_ties():
    t = table_buckets.buckets(table(("kLinearRope", 4096, 6144, 4096), ("kLinearRope", 4686, 6144, 4096),
                                    ("kLinearRope", 8192, 6144, 4096), ("kLinearSwiglu", 8192, 28672, 4096)))
    changed = [("kLinearRope", 8192, 6144, 4096), ("kLinearSwiglu", 8192, 28672, 4096)]
    picks = table_buckets.ab_ms(t, changed)
    # One M reaches both: above the rope row's tie with 4686 (6196) and not 8192 itself.
    assert [sorted(rows) for _, rows in picks] == [sorted(changed)]
    m = picks[0][0]
    assert (4686 * 8192) ** 0.5 < m < 2 * 8192 and m != 8192
    for op, row_m, n, k in changed:  # the nearest row of each changed (op, N, K) is the changed one
        assert min(t[op, n, k], key=lambda x: abs(math.log2(m / x))) == row_m
    # A row of 4096 with a neighbour at 4686: the M that reaches it lies below 4096's tie with 4686.
    (m2, rows2), = table_buckets.ab_ms(t, [("kLinearRope", 4096, 6144, 4096)])
    assert rows2 == [("kLinearRope", 4096, 6144, 4096)] and 2048 < m2 < (4096 * 4686) ** 0.5 and m2 != 4096
