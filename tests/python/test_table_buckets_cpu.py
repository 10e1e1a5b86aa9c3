# SPDX-License-Identifier: BSD-3-Clause
"""scripts/table_buckets.py without a GPU: each table's M buckets per (op, N, K), and the buckets
one GPU's table has that another's lacks (the tuning left to do)."""
import pathlib
import sys

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
