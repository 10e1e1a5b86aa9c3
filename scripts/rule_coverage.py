#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How close a fused op's untuned rule comes to the best kernel, from `coda-bench tune-ops` logs
(every candidate's median per-round ratio to cuBLAS, per shape). Issue 13 asks that the rule alone
be within 0.92 of the best candidate on every benchmarked shape; this prints, per log, how many
shapes it is, the misses, and the same for every fixed candidate (what a rule could be built on).

    python3 scripts/rule_coverage.py bench/results/tune_ops_fwd.h100.log bench/results/tune_ops_fwd.h200.log

The rule is restated from detail::forward_program_rule (src/ops/op_checks.cpp), and for the
QK-norm ops that save Pre from detail::fallback_of (the same file: the base op's choice in
Pingpong, since under Cooperative the Pre tile's store stages leave the mainloop two): keep them in
step.
"""
import re
import statistics
import sys

CANDIDATE = re.compile(r"\s+candidate (\w+)\s+along (M|N) swizzle (\d+)\s+[\d.]+ ms\s+([\d.]+) x cuBLAS")
ROW = re.compile(r"\{OpKey::(\w+), (\d+), (\d+), (\d+),.*// (\w+):")


def forward_program_rule(m, n, k):
    coop = k >= 8192
    rows, cols = ((m + 127) // 128 + 1) // 2 * 2, -(-n // (256 if coop else 128))
    along_m = rows < cols and m * k * 2 <= 16 << 20
    raster = "M" if along_m else "N"
    return ("coop", raster, 4) if coop else ("pingpong", raster, 2 if along_m else 1)


def untuned_choice(op, m, n, k):
    """What an op runs at a shape no table row is near."""
    _, raster, swizzle = forward_program_rule(m, n, k)
    return ("pingpong", raster, swizzle) if op.endswith("QknormRopeSavePre") else forward_program_rule(m, n, k)


def shapes(log):
    """(op, model, (m, n, k), {candidate: ratio}) per tuned shape: a row line closes its candidates."""
    candidates = {}
    for line in open(log):
        if m := CANDIDATE.match(line):
            candidates[(m[1], m[2], int(m[3]))] = float(m[4])
        elif m := ROW.match(line):
            yield m[1], m[5], (int(m[2]), int(m[3]), int(m[4])), candidates
            candidates = {}


def coverage(rows, pick):
    fractions = [min(c.values()) / c[pick(op, *mnk)] for op, _, mnk, c in rows]
    return sum(f >= 0.92 for f in fractions), fractions


def main():
    for log in sys.argv[1:]:
        rows = list(shapes(log))
        if not rows:
            sys.exit(f"{log}: no candidate lines (a tune-ops log from d276a61 on prints them)")
        within, fractions = coverage(rows, untuned_choice)
        print(f"{log}: the rule is within 0.92 of the best on {within}/{len(rows)} shapes "
              f"(best/rule median {statistics.median(fractions):.3f}, min {min(fractions):.3f})")
        for (op, model, _, c), f in zip(rows, fractions):
            if f < 0.92:
                print(f"  miss {op} {model}: {f:.3f} (best {min(c, key=c.get)})")
        for cand in sorted(rows[0][3]):
            hits, fr = coverage(rows, lambda _op, _m, _n, _k, cand=cand: cand)
            print(f"  fixed {cand}: {hits}/{len(rows)}, min {min(fr):.3f}")


if __name__ == "__main__":
    main()
