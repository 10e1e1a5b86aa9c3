#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""CODA's plain GEMM against PyTorch's matmul by SM clock, from `python -m coda.bench ops` JSONs:
every round of every row that timed both (`coda_gemm`, `torch_matmul`), binned by the two blocks'
mean NVML clock, per K (the GEMM's depth), as a geometric mean of coda_gemm ÷ matmul.

    python3 scripts/gemm_by_clock.py bench/results/ops_py.h100.json bench/results/ops_py_sustained.h100.json

Why: the decoder-layer profile of the 43rd session put CODA's fused GEMMs ~7 % behind cuBLAS's at
8B widths, while the benchmark of record's sustained runs put its plain GEMM level with matmul. Read
by clock, the two agree: the menu's kernels keep up with cuBLAS's at the clock of a power-capped
training step and fall behind at the boost clock (docs/design.md §10.4). A round's clock is NVML's
median over its block (docs/benchmarks.md §5.0); rows differ between bins, so a bin is a
cross-row figure, not a controlled one.
"""
import json
import math
import sys

BINS_MHZ = (0, 1400, 1600, 1800, 1950, 2100)


def rounds(rows):
    """(clock MHz, K, coda_gemm ÷ matmul) for every round that timed both with a clock."""
    out = []
    for r in rows:
        ms, mhz = r.get("rounds_ms", {}), r.get("rounds_sm_mhz", {})
        pairs = zip(ms.get("coda_gemm") or [], ms.get("torch_matmul") or [],
                    mhz.get("coda_gemm") or [], mhz.get("torch_matmul") or [])
        for ours, theirs, clock_ours, clock_theirs in pairs:
            if ours and theirs and clock_ours and clock_theirs:
                out.append(((clock_ours + clock_theirs) / 2, r["mnk"][2], ours / theirs))
    return out


def by_clock(points):
    """{(low MHz, high MHz, K): (geomean ratio, rounds)} over BINS_MHZ."""
    cells = {}
    for clock, k, ratio in points:
        for low, high in zip(BINS_MHZ, BINS_MHZ[1:]):
            if low <= clock < high:
                cells.setdefault((low, high, k), []).append(math.log(ratio))
    return {key: (math.exp(sum(v) / len(v)), len(v)) for key, v in sorted(cells.items())}


def main(paths):
    points = [p for path in paths for p in rounds(json.load(open(path))["rows"])]
    for (low, high, k), (ratio, n) in by_clock(points).items():
        print(f"{low}-{high} MHz, K = {k}: coda_gemm / matmul {ratio:.3f} over {n} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
