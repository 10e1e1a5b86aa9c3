"""Session 29: per op row and kernel candidate, x matmul in each tuner run (old/new processes in
turn, each candidate timed against torch.matmul in the same rounds) and new ÷ old of the means."""
import json
import statistics
import sys

runs = sys.argv[1:]
table = {}
for run in runs:
    version = run.rsplit("_", 1)[1]
    for row in json.load(open(f"{run}/tune.json"))["rows"]:
        key = (row["op"], row["shape"], row["M"])
        for c in row.get("candidates", []):
            table.setdefault(key, {}).setdefault(c["kernel"], {}).setdefault(version, []).append(c["x_matmul"])
for key, kernels in table.items():
    print(" ".join(map(str, key)))
    for kernel, by in sorted(kernels.items(), key=lambda kv: min(kv[1].get("new", [9]))):
        old, new = by.get("old", []), by.get("new", [])
        ratio = statistics.mean(new) / statistics.mean(old) if old and new else float("nan")
        print(f"  {kernel:40s} old {' '.join(f'{x:.3f}' for x in old):14s} new {' '.join(f'{x:.3f}' for x in new):14s} new/old {ratio:.3f}")
