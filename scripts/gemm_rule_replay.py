#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Prices the plain GEMM's current choice on GPU tuner logs, before a GPU runs it.

`coda-bench tune` prints per shape the choice the build made ("today"), and in the same rounds each
config's best candidate with its cuBLAS/coda ratio ("each config's best" line, bf648fc on). This
asks the current build for its choice at every logged shape (`coda-bench choose`, no GPU) and
prices it: the logged ratio where it is the logged choice, else its config's best in those rounds,
an upper bound when its raster, swizzle or decomposition differ from that candidate's. It prints
the changed shapes and how many shapes each choice has within 0.92 of the shape's best candidate.

    python3 scripts/gemm_rule_replay.py <build>/bench/coda-bench h100 bench/results/session19/gemm_tune_m1024.h100.log ...

A replay is a prediction, not a measurement: run the tuner on the GPU once it is at hand.
"""
import re
import sys

from coda_choose import choose

SHAPE = re.compile(r"(\S+)\s+(\S+)\s+(fwd|dgrad|wgrad)\s+(\d+)x\s*(\d+)x\s*(\d+)\s+today (.+?)\s+pick .+?"
                   r"head to head\s+(\S+)(?: %)?\s+-> (\w+)\s+cuBLAS/coda ([\d.]+)")
CONFIG_BEST = re.compile(r"(\w+_\d+x\d+_\dx\d) (\w+ s\d+(?: \w+)?) ([\d.]+)")


def parse(text):
    """Per logged shape: pass, M, N, K, today's choice and ratio, {config: (candidate, ratio)}."""
    lines = text.split("\n")
    shapes = []
    for line, following in zip(lines, lines[1:] + [""]):
        m = SHAPE.match(line)
        if not m or "each config's best" not in following:
            continue
        written = float(m[10])
        gain = float(m[8]) / 100 if m[8] != "-" else 0.0
        shapes.append({
            "label": f"{m[1]} {m[2]} {m[3]}", "pass": m[3], "mnk": (int(m[4]), int(m[5]), int(m[6])),
            "today": m[7].split(),
            # The written ratio is the pick's where the pick replaced today's choice.
            "today_ratio": written * (1 - gain) if m[9] == "pick" else written,
            "best": {c: (cand, float(r)) for c, cand, r in CONFIG_BEST.findall(following)},
        })
    return shapes


def same_choice(a, b):
    """Two choices in the tuner's spelling; the decomposition counts for stream-K only."""
    return a[:3] == b[:3] and (not a[0].startswith("skcoop") or a[3:] == b[3:])


def replay(shapes, choices):
    """(old within, new within, changed rows) for `choices`, the new choice per shape."""
    old = new = 0
    changed = []
    for s, choice in zip(shapes, choices):
        top = max(r for _, r in s["best"].values())
        if same_choice(choice, s["today"]):
            price = s["today_ratio"]
        else:
            price = s["best"].get(choice[0], ("", float("nan")))[1]
            changed.append((s, choice, price, top))
        old += s["today_ratio"] >= 0.92 * top
        new += price >= 0.92 * top
    return old, new, changed


def choices(coda_bench, gpu, shapes):
    queries = [f"{s['pass']} {s['mnk'][0]} {s['mnk'][1]} {s['mnk'][2]}" for s in shapes]
    return [c.split() for c in choose(coda_bench, gpu, queries)]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    coda_bench, gpu, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
    total_old = total_new = total = 0
    for log in logs:
        shapes = parse(open(log).read())
        if not shapes:
            sys.exit(f"{log}: no shape with an \"each config's best\" line (a tune log from bf648fc on)")
        old, new, changed = replay(shapes, choices(coda_bench, gpu, shapes))
        print(f"{log}: within 0.92 of the best, logged choice {old}/{len(shapes)}, "
              f"current choice {new}/{len(shapes)} (an upper bound where it changed)")
        for s, choice, price, top in changed:
            print(f"  {s['label']} {'x'.join(map(str, s['mnk']))}: {' '.join(s['today'])} "
                  f"{s['today_ratio']:.3f} -> {' '.join(choice)} <= {price:.3f} (best {top:.3f})")
        total_old, total_new, total = total_old + old, total_new + new, total + len(shapes)
    print(f"all: {total_old} -> at most {total_new} of {total}")


if __name__ == "__main__":
    main()
