#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The rows two tuner runs on the same GPU both picked over the choice before, for
scripts/merge_table.py.

A tuner run confirms each pick head to head against the choice it would replace, but on shapes
where the menu holds several near-equal kernels two runs often confirm different ones; what both
agree on is that the choice before is slower. So a shape becomes a row only where both runs
picked (any kernel), and the row is the pick its own run scored higher. A shape one run picked
and the other kept stays as it is. Reads the tables the tuners write: `coda-bench tune`'s
(`{OperandLayout::…}` rows, every shape, "(pick, …)" or "(kept: …)"; scored by cuBLAS/coda,
higher is better) and `python -m coda.bench tune`'s op_table.inc (`{OpKey::…}` rows, confirmed
picks only; scored by "× matmul", lower is better).

    python3 scripts/agreed_picks.py run1/gemm_tune_m1536.inc run2/gemm_tune_m1536.inc > agreed.inc
    python3 scripts/merge_table.py agreed.inc h100 "coda-bench tune, two runs at <commit>"
"""
import re
import sys

from merge_table import KEY

GEMM_SCORE = re.compile(r"// [^:]*: ([0-9.]+) \(")
OP_SCORE = re.compile(r"// [^:]*: ([0-9.]+) x matmul")


def picks(text: str) -> dict[tuple, str]:
    """Each picked row by its table key (merge_table.KEY: table, layout or op, M, N, K)."""
    rows = {}
    for line in text.splitlines():
        key = KEY.match(line)
        if key and "(kept" not in line:
            rows[key.groups()] = line
    return rows


def score(row: str) -> float:
    """Higher is better: cuBLAS/coda for a GEMM row, 1 / (× matmul) for an op row."""
    gemm = GEMM_SCORE.search(row)
    if row.startswith("{OperandLayout::") and gemm:
        return float(gemm.group(1))
    op = OP_SCORE.search(row)
    if op:
        return 1.0 / float(op.group(1))
    raise ValueError(f"no score in row: {row}")


def agreed(first: str, second: str) -> list[str]:
    """The rows both tables picked, each the higher-scoring run's, in the first table's order."""
    a, b = picks(first), picks(second)
    out = []
    for key, row in a.items():
        if key in b:
            best = row if score(row) >= score(b[key]) else b[key]
            out.append(best + " (both runs picked over the choice before)")
    return out


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f1, open(sys.argv[2]) as f2:
        rows = agreed(f1.read(), f2.read())
    print("\n".join(rows))
    print(f"{len(rows)} rows both runs picked", file=sys.stderr)


if __name__ == "__main__":
    main()
