#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How close a fused op's untuned choice comes to the best kernel, from `coda-bench tune-ops` logs
(every candidate's median per-round ratio to cuBLAS, per shape). Issue 13 asks that the rule alone
be within 0.92 of the best candidate on every benchmarked shape; this prints, per log, how many
shapes it is, the misses, and the same for every fixed candidate (what a rule could be built on).

    python3 scripts/rule_coverage.py <build>/bench/coda-bench bench/results/tune_ops_fwd.h100.log bench/results/tune_ops_fwd.h200.log

The untuned choice is the build's own: `coda-bench choose --gpu untuned` runs
ops::detail::op_choice with no table, i.e. the op's fallback (detail::fallback_of: the forward
rule, the QK-norm save-Pre ops' base choice in Pingpong) fitted to the shape. No GPU is needed.
"""
import re
import statistics
import sys

from coda_choose import SHORT_CONFIG_NAMES, choose

CANDIDATE = re.compile(r"\s+candidate (\w+)\s+along (M|N) swizzle (\d+)\s+[\d.]+ ms\s+([\d.]+) x cuBLAS")
ROW = re.compile(r"\{OpKey::(\w+), (\d+), (\d+), (\d+),.*// (\w+):")


def untuned_choices(coda_bench, rows):
    """The build's choice per row with no table: (schedule, raster, swizzle) as the logs spell it."""
    def name(identifier):  # kLinearRmsnormSwiglu -> linear_rmsnorm_swiglu
        return re.sub(r"(?<!^)(?=[A-Z])", "_", identifier[1:]).lower()
    queries = [f"op {name(op)} {m} {n} {k}" for op, _, (m, n, k), _ in rows]
    choices = []
    for choice in choose(coda_bench, "untuned", queries):
        config, raster, swizzle = choice.split()[:3]
        choices.append((SHORT_CONFIG_NAMES.get(config, config),
                        raster[-1].upper(), int(swizzle[1:])))
    return choices


def shapes(log):
    """(op, model, (m, n, k), {candidate: ratio}) per tuned shape: a row line closes its candidates."""
    candidates = {}
    for line in open(log):
        if m := CANDIDATE.match(line):  # older logs name the two first configs short, newer in full
            candidates[(SHORT_CONFIG_NAMES.get(m[1], m[1]), m[2], int(m[3]))] = float(m[4])
        elif m := ROW.match(line):
            yield m[1], m[5], (int(m[2]), int(m[3]), int(m[4])), candidates
            candidates = {}


def coverage(rows, picks):
    fractions = [min(c.values()) / c[pick] for (_, _, _, c), pick in zip(rows, picks)]
    return sum(f >= 0.92 for f in fractions), fractions


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    coda_bench = sys.argv[1]
    for log in sys.argv[2:]:
        rows = list(shapes(log))
        if not rows:
            sys.exit(f"{log}: no candidate lines (a tune-ops log from d276a61 on prints them)")
        within, fractions = coverage(rows, untuned_choices(coda_bench, rows))
        print(f"{log}: the rule is within 0.92 of the best on {within}/{len(rows)} shapes "
              f"(best/rule median {statistics.median(fractions):.3f}, min {min(fractions):.3f})")
        for (op, model, _, c), f in zip(rows, fractions):
            if f < 0.92:
                print(f"  miss {op} {model}: {f:.3f} (best {min(c, key=c.get)})")
        for cand in sorted(rows[0][3]):
            hits, fr = coverage(rows, [cand] * len(rows))
            print(f"  fixed {cand}: {hits}/{len(rows)}, min {min(fr):.3f}")


if __name__ == "__main__":
    main()
