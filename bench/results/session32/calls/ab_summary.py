#!/usr/bin/env python3
"""Summary of an A/B of two builds in one call (processes old new new old, `python -m coda.bench ops`):
per row, the geomean of each build's coda time and of its ratios to torch.matmul and torch.compile
over its two processes, and new / old. Usage: ab_summary.py DIR (holding ab_<i>_<old|new>/ops.json)."""
import json
import math
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
runs = {}
for f in sorted(root.glob("ab_*_*/ops.json")):
    build = f.parent.name.split("_")[2]
    for r in json.loads(f.read_text())["rows"]:
        runs.setdefault((r["name"], r["shape"], r["M"]), {}).setdefault(build, []).append(r)


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


changed, same = [], []
for (name, shape, m), by in runs.items():
    old, new = by["old"], by["new"]
    t = {b: geomean(r["coda_ms"] for r in by[b]) for b in ("old", "new")}
    mm = {b: geomean(r["ratios"]["coda/torch_matmul"] for r in by[b]) for b in ("old", "new")}
    co = {b: geomean(r["ratios"]["coda/compile"] for r in by[b]) for b in ("old", "new")}
    kernels = {b: {r["kernel"] for r in by[b]} for b in ("old", "new")}
    differs = kernels["old"] != kernels["new"]
    (changed if differs else same).append(t["new"] / t["old"])
    print(f"{name:24s} {shape:9s} {m:6d} new/old {t['new'] / t['old']:.3f}  x matmul {mm['old']:.3f} -> {mm['new']:.3f}"
          f"  x compile {co['old']:.3f} -> {co['new']:.3f}  {'CHANGED ' + '/'.join(kernels['new']) if differs else ''}"
          f"  checks {all(r['check_passed'] for b in by for r in by[b])}")
print(f"changed rows: geomean new/old {geomean(changed):.3f} over {len(changed)}; "
      f"unchanged: {geomean(same):.3f} over {len(same)}")
