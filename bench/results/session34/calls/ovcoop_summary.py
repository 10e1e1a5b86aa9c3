#!/usr/bin/env python3
"""Session 34: read `coda-bench tune-ops --epilogue-cost` logs and compare, per op, the overlapped
Cooperative kernel (ovcoop) with the Cooperative one (coop) at the same raster and swizzle (fused
and plain twin, geomean of the 8 pairs) and the best candidate of each config (x cuBLAS).
Blocks of candidate lines are named by the op-table rows the log ends with (same order)."""
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


for path in sys.argv[1:]:
    print(f"== {path}")
    for (name, m, n, k), b in blocks(open(path).read()):
        pairs = [(v, b[("coop_128x256_2x1", r, s)]) for (c, r, s), v in b.items()
                 if c == "ovcoop_128x256_2x1" and ("coop_128x256_2x1", r, s) in b]
        best = {}
        for (c, r, s), v in b.items():
            if c not in best or v[1] < best[c][1][1]:
                best[c] = (f"{r}{s}", v)
        fused = geomean([o[0] / c[0] for o, c in pairs])
        twin = geomean([o[2] / c[2] for o, c in pairs])
        order = sorted(best.items(), key=lambda kv: kv[1][1][1])
        cells = ", ".join(f"{c.replace('_2x1', '')} {rs} {v[1]:.3f} (epi {v[3]:.3f})" for c, (rs, v) in order)
        print(f"{name:28s} N={n:>6s} K={k:>5s}  ovcoop/coop: fused {fused:.3f} twin {twin:.3f} | best x cuBLAS: {cells}")
