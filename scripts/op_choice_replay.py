#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prices the fused ops' current choice on the op tuner's JSON, before a GPU runs it.

`python -m coda.bench tune` times, per row (op, M, N, K), every candidate kernel against
torch.matmul in the same rounds (`candidates`: kernel name, × matmul) and the choice the build made
(`today_x_matmul`). This asks the current build for its choice at every row
(`coda-bench choose --gpu GPU`, `op NAME M N K`, no GPU) and prices it at that candidate's
measured time, or at today's where it is the kernel the row ran (`today_kernel`); any other
choice no candidate is (CUTLASS's heuristic raster, which the candidates lack) stays unpriced. It
prints per file how many rows each choice has within 0.92 of the row's best candidate, and the
rows where the current choice is not the logged one.

    python3 scripts/op_choice_replay.py <build>/bench/coda-bench h100 bench/results/session18/tune_m*.h100.json

To compare builds (a rule or table change against the build before it), `--price` reads every
build's choice at its own candidate column — not an unchanged choice at the row's `today` reading,
which in kernels under ~100 µs differs from its candidate column by up to ±10 % (bench/RESULTS.md,
thirty-first session) — and prints per file, per op and overall, for each build, the geomean of
best ÷ choice, the worst, and the rows within 0.92 (a choice no candidate is stays unpriced):

    python3 scripts/op_choice_replay.py --price old=<build A>/bench/coda-bench,new=<build B>/bench/coda-bench h100 <tune.json ...>

GPU `h100-rule` / `h200-rule` prices that GPU's rule alone (its fallback, fitted; no op table):
what serves a width no table row is near.

Price on tuner runs at M the change was not tuned on. A replay is a prediction, not a
measurement: A/B the change on the GPU once it is at hand (docs/benchmarks.md §5.1).
"""
import json
import math
import pathlib
import re
import sys

from coda_choose import SHORT_CONFIG_NAMES, choose


def heuristic_raster(config, swizzle, m, n):
    """The raster CUTLASS's Heuristic option runs for `config` ("coop_128x256_2x1": tile, cluster)
    at M × N: along M where the grid has more cluster columns than rows, else along N, the grid
    rounded up to swizzle × cluster (tile_scheduler_params.h, get_rasterization_order). The tuner
    times explicit rasters only, so a heuristic choice is priced as the one it resolves to."""
    tile_m, tile_n = (int(x) for x in config.split("_")[-2].split("x"))
    cluster_m, cluster_n = (int(x) for x in config.split("_")[-1].split("x"))
    rows = -(-(-(-m // tile_m)) // (swizzle * cluster_m)) * swizzle  # cluster rows, swizzle-rounded
    cols = -(-(-(-n // tile_n)) // (swizzle * cluster_n)) * swizzle
    return "along_m" if cols > rows else "along_n"


def candidate_name(choice, m=None, n=None):
    """`coda-bench choose`'s "pingpong_128x128_2x1 along_n s2" as the tuner spells candidates; a
    heuristic raster resolved to the one it runs at M × N where they are given."""
    config, raster, swizzle = choice.split()[:3]
    if raster == "heuristic" and m is not None:
        raster = heuristic_raster(config, int(swizzle[1:]), m, n)
    name = SHORT_CONFIG_NAMES.get(config, config.rsplit("_", 1)[0])
    return f"{name} {raster.replace('_', ' ')} swizzle {swizzle[1:]}"


# The op-table keys' names (CODA_OP_KEYS: X(kId, "name", Params)).
OP_KEYS = re.findall(r'X\(k\w+, "(\w+)",',
                     (pathlib.Path(__file__).resolve().parent.parent / "include/coda/ops/op_key.hpp").read_text())


def op_key(row):
    """A tuner row's op-table key: "op" where the case is a second shape of an op (logged since the
    twenty-second session), else the longest key the case's name is or begins with (a log from
    before names its case only: linear_rmsnorm_bwd_qkv runs linear_rmsnorm_bwd)."""
    if "op" in row:
        return row["op"]
    name = row["name"]
    keys = [k for k in OP_KEYS if name == k or name.startswith(k + "_")]
    return max(keys, key=len) if keys else name


def choose_query(row):
    """`coda-bench choose`'s query for a tuner row, by its op-table key."""
    return f"op {op_key(row)} {row['M']} {row['N']} {row['K']}"


def replay(rows, choices):
    """(logged within, current within, unpriced, changed rows) over `rows` and their `choices`.
    A choice is priced at the candidate of its name, or at today's time where it is the kernel the
    row names as today's (`today_kernel`, logged since 1561102); else it stays unpriced."""
    logged = current = unpriced = 0
    changed = []
    for row, choice in zip(rows, choices):
        times = {c["kernel"]: c["x_matmul"] for c in row["candidates"]}
        best = min(times.values())
        logged += best / row["today_x_matmul"] >= 0.92
        was = row.get("today_kernel")
        now = row["today_x_matmul"] if choice == was else times.get(choice)
        if now is None:
            unpriced += 1
        else:
            current += best / now >= 0.92
        if choice != was:
            changed.append((row, choice, now, best))
    return logged, current, unpriced, changed


def price(rows, choices):
    """best ÷ choice for each row whose choice is one of its candidates (the others are left out)."""
    out = []
    for row, choice in zip(rows, choices):
        times = {c["kernel"]: c["x_matmul"] for c in row["candidates"] if c["x_matmul"]}
        if choice in times:
            out.append(min(times.values()) / times[choice])
    return out


def price_summary(values):
    """"geomean / worst / n of m within 0.92" of `price`'s values."""
    if not values:
        return "no priced row"
    geomean = math.exp(sum(math.log(v) for v in values) / len(values))
    return f"{geomean:.3f} / {min(values):.2f} / {sum(v >= 0.92 for v in values)} of {len(values)}"


def price_by_op(rows, choices):
    """`price` per op-table key: {op: [best ÷ choice, ...]} — which ops a rule serves worst."""
    by_op = {}
    for row, choice in zip(rows, choices):
        by_op.setdefault(op_key(row), []).extend(price([row], [choice]))
    return by_op


def main_price(builds, gpu, files):
    builds = dict(b.split("=", 1) for b in builds.split(","))
    every = {name: [] for name in builds}
    every_by_op = {name: {} for name in builds}
    for path in files:
        rows = [r for r in json.load(open(path))["rows"] if r.get("candidates")]
        line = []
        for name, coda_bench in builds.items():
            choices = [candidate_name(c, r["M"], r["N"])
                       for c, r in zip(choose(coda_bench, gpu, [choose_query(r) for r in rows]), rows)]
            values = price(rows, choices)
            every[name] += values
            for op, op_values in price_by_op(rows, choices).items():
                every_by_op[name].setdefault(op, []).extend(op_values)
            line.append(f"{name} {price_summary(values)}")
        print(f"{path}: " + "; ".join(line))
    for op in sorted({op for by_op in every_by_op.values() for op in by_op}):
        print(f"{op}: " + "; ".join(f"{name} {price_summary(by_op.get(op, []))}"
                                    for name, by_op in every_by_op.items()))
    print("all: " + "; ".join(f"{name} {price_summary(v)}" for name, v in every.items()))


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "--price":
        return main_price(sys.argv[2], sys.argv[3], sys.argv[4:])
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    coda_bench, gpu, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    for path in files:
        rows = [r for r in json.load(open(path))["rows"] if r.get("candidates")]
        choices = [candidate_name(c, r["M"], r["N"])
                   for c, r in zip(choose(coda_bench, gpu, [choose_query(r) for r in rows]), rows)]
        logged, current, unpriced, changed = replay(rows, choices)
        print(f"{path}: within 0.92 of the best, logged choice {logged}/{len(rows)}, current choice "
              f"{current}/{len(rows) - unpriced} priced ({unpriced} unpriced)")
        for row, choice, now, best in changed:
            if "today_kernel" not in row:
                continue  # an older log: which kernel ran is not known, only how fast
            was = row["today_kernel"]
            price = f"{now:.3f}" if now is not None else "not a candidate"
            print(f"  {row['name']} {row['shape']} M = {row['M']}: {was} {row['today_x_matmul']:.3f}"
                  f" -> {choice} {price} (best {best:.3f} x matmul)")

if __name__ == "__main__":
    main()
