#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Issue 13's bars, counted from a `python -m coda.bench ops` JSON (e.g. bench/results/ops_py.h100.json),
per M, and how many of those verdicts the run's own rounds leave open.

    python3 scripts/issue13_bars.py bench/results/ops_py.h100.json [more.json ...]
    python3 scripts/issue13_bars.py NEW.json --against OLD.json

--against: also CODA's own time NEW ÷ OLD per row (geomean over the rows both checked) and the
rows whose kernel changed, as a record is compared with the previous one on the same GPU kind
(a cross-run figure: unchanged rows move by a few %, docs/benchmarks.md §5).

The bars (issue 13): every fused forward op ≤ 1.06 × PyTorch's matmul of its shape; every fused
backward op ≤ 1.10 × its dgrad GEMM; the loss-only cross-entropy ≤ 1.10; the cross-entropy
forward + backward ≤ 1.10 × its three GEMMs; every row faster than torch.compile. A row's ratio is
the median of its per-round ratios (the JSON's `ratios`, docs/benchmarks.md §3).

"split": rows whose per-round ratios lie on both sides of the bar, so the verdict rests on which
rounds the median falls between. In the 34th session's H100 run, PyTorch's matmul at the 8B QKV
shape read 1.03 ms in some rounds and 1.09-1.22 in others of the same row while CODA's kernels held
within 1-2 % (bench/RESULTS.md, thirty-fifth session): such rows pass or fail by the baseline's
mode, not by the kernel.
"""
import json
import math
import sys

BACKWARD = ("_bwd", "_bwd_qkv")
COMPILE = "faster than torch.compile"


def bar_of(name):
    """(group, (numerator, denominator) variants, bar) of an ops-benchmark row."""
    if name == "linear_cross_entropy_fwd_bwd":
        return "CE fwd+bwd <= 1.10 x its GEMMs", ("coda", "torch_gemms"), 1.10
    if name == "linear_cross_entropy":
        return "loss-only CE <= 1.10", ("coda", "torch_matmul"), 1.10
    if name.endswith(BACKWARD):
        return "backward <= 1.10", ("coda", "torch_matmul"), 1.10
    return "forward <= 1.06", ("coda", "torch_matmul"), 1.06


def count(cell, ratio, rounds, x, y, passes):
    """Adds one verdict to cell = [passed, split, total]: `passes(ratio)` for the row's ratio, split
    where the per-round ratios x/y fall on both sides of it."""
    per_round = [a / b for a, b in zip(rounds.get(x, []), rounds.get(y, []))]
    cell[0] += passes(ratio)
    cell[1] += bool(per_round) and passes(min(per_round)) and not passes(max(per_round))
    cell[2] += 1


def has_verdict(r) -> bool:
    """A row that ran and passed its check: a failed or unrun row is no verdict (the ops table says why)."""
    return bool(r.get("check_passed")) and not r.get("errors")


def verdicts(rows):
    """{M: {group: [passed, split, total]}}, the faster-than-compile count as its own group."""
    out = {}
    for r in rows:
        if not has_verdict(r):
            continue
        per_m = out.setdefault(r["M"], {})
        rounds = r.get("rounds_ms", {})
        group, (x, y), bar = bar_of(r["name"])
        for name, (a, b), passes in ((group, (x, y), lambda q: q <= bar),
                                     (COMPILE, ("coda", "compile"), lambda q: q < 1)):
            ratio = r["ratios"].get(f"{a}/{b}")
            if ratio is not None:
                count(per_m.setdefault(name, [0, 0, 0]), ratio, rounds, a, b, passes)
    return out


def geomeans(rows):
    """{M: {ratio: (geomean, rows)}} of coda/torch_matmul over the rows held to matmul (not the CE
    forward + backward, held to its three GEMMs) and coda/compile over every row with a verdict: the
    one-line summary a record compares across runs."""
    logs = {}
    for r in rows:
        if not has_verdict(r):
            continue
        _, (_, held_to), _ = bar_of(r["name"])
        for key in (f"coda/{held_to}", "coda/compile"):
            if key == "coda/torch_gemms":
                continue
            ratio = r["ratios"].get(key)
            if ratio:
                logs.setdefault(r["M"], {}).setdefault(key, []).append(math.log(ratio))
    return {m: {k: (math.exp(sum(v) / len(v)), len(v)) for k, v in per_m.items()}
            for m, per_m in logs.items()}


def slower_than_compile(rows):
    """(M, op, shape, coda/compile) of the checked rows torch.compile beats."""
    return [(r["M"], r["name"], r.get("shape"), r["ratios"]["coda/compile"]) for r in rows
            if has_verdict(r) and (r["ratios"].get("coda/compile") or 0) >= 1]


def against(new_rows, old_rows):
    """(geomean of coda_ms new ÷ old, rows, [(M, op, shape, ratio, old kernel, new kernel)]) over
    the rows both runs checked; the list holds those whose kernel changed."""
    def checked(rows):
        return {(r["M"], r["name"], r.get("shape")): r for r in rows if has_verdict(r)}
    new, old = checked(new_rows), checked(old_rows)
    common = sorted(new.keys() & old.keys())
    logs = [math.log(new[k]["coda_ms"] / old[k]["coda_ms"]) for k in common]
    changed = [(*k, new[k]["coda_ms"] / old[k]["coda_ms"], old[k].get("kernel"), new[k].get("kernel"))
               for k in common if old[k].get("kernel") != new[k].get("kernel")]
    return (math.exp(sum(logs) / len(logs)) if logs else float("nan")), len(common), changed


def main(args):
    old_path = None
    if "--against" in args:
        i = args.index("--against")
        if i + 1 >= len(args):
            print("--against needs the previous run's JSON", file=sys.stderr)
            return 2
        old_path = args[i + 1]
        args = args[:i] + args[i + 2:]
    paths = args + ([old_path] if old_path else [])
    for path in paths:
        rows = json.load(open(path))["rows"]
        print(f"== {path}")
        means = geomeans(rows)
        for m, groups in sorted(verdicts(rows).items()):
            cells = "; ".join(f"{g}: {p}/{n} ({s} split)" for g, (p, s, n) in sorted(groups.items()))
            print(f"M = {m}: {cells}")
            print(f"M = {m}: geomean " + ", ".join(
                f"{k} {g:.3f} over {n} rows" for k, (g, n) in sorted(means.get(m, {}).items())))
        for m, name, shape, ratio in sorted(slower_than_compile(rows)):
            print(f"M = {m}: torch.compile faster: {name} {shape} coda/compile {ratio:.3f}")
    if old_path:
        for path in args:
            ratio, n, changed = against(json.load(open(path))["rows"], json.load(open(old_path))["rows"])
            print(f"== {path} against {old_path}: CODA's time new / old, geomean {ratio:.3f} over {n} rows; "
                  f"kernel changed on {len(changed)}")
            for m, name, shape, r, was, now in changed:
                print(f"M = {m}: {name} {shape} new / old {r:.3f}: {was} -> {now}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
