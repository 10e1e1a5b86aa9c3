#!/usr/bin/env python3
"""Session 35: read `coda-bench tune-ops --epilogue-cost` logs; per op, config B against config A
at the same raster and swizzle (fused and plain twin, geomean of the pairs), and each config's best
candidate (x cuBLAS). Usage: k32_summary.py A B log..."""
import math
import re
import sys

CAND = re.compile(r"  candidate (\S+)\s+along (\S) swizzle (\d)\s+([\d.]+) ms\s+([\d.]+) x cuBLAS"
                  r"\s+plain twin ([\d.]+) ms\s+epilogue ([\d.]+) x")


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def blocks(text):
    out, cur, seen = [], None, set()
    for line in text.splitlines():
        m = CAND.match(line)
        if not m:
            continue
        key = m.group(1, 2, 3)
        if cur is None or key in seen:
            cur, seen = {}, set()
            out.append(cur)
        seen.add(key)
        cur[key] = tuple(float(x) for x in m.group(4, 5, 6, 7))
    names = re.findall(r"^\{OpKey::k(\w+), (\d+), (\d+), (\d+)", text, re.M)
    return list(zip(names, out))


a, b_ = sys.argv[1], sys.argv[2]
for path in sys.argv[3:]:
    print(f"== {path}")
    for (name, m, n, k), blk in blocks(open(path).read()):
        pairs = [(v, blk[(a, r, s)]) for (c, r, s), v in blk.items() if c == b_ and (a, r, s) in blk]
        fused = geomean([x[0] / y[0] for x, y in pairs])
        plain = geomean([x[2] / y[2] for x, y in pairs])
        best = {}
        for (c, r, s), v in blk.items():
            if c not in best or v[1] < best[c][0]:
                best[c] = (v[1], f"{r}{s}", v[3])
        bests = "  ".join(f"{c.split('_')[0]} {x:.3f}({rs},epi {e:.2f})" for c, (x, rs, e) in best.items())
        print(f"{name:28s} {n:>6}x{k:<5} {b_}/{a}: fused {fused:.3f} plain {plain:.3f} | {bests}")
