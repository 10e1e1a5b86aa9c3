#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The verdict of an A/B of two wheels run by scripts/wheel-ab.sh: per clock state and row, CODA's
time under the new wheel over the old one, its × matmul in each, and the kernels each ran.

    python3 scripts/ab_summary.py DIR

DIR holds one `python -m coda.bench ops` output folder per pass, named STATE_PASS[_MODEL] (e.g.
boost_o1_8B, sustained_n2_1B): passes o1, o2 ran the old wheel, n1, n2 the new, in the order
o1 n1 n2 o2 so that a drift in the GPU's clock cancels (docs/benchmarks.md §5.1). A row counts
only where both wheels checked their outputs. The spread is the larger of the two pairs' own
relative differences: a new ÷ old within it is noise (the A/A of identical kernels in the same
order read 0.98–1.02 on an H100, thirty-eighth session).

Rows whose kernel is the same under both wheels are the run's controls: per clock state and model,
their geometric mean new ÷ old is what the GPU drifted between the passes (the fortieth session's
8B RoPE control read 0.938 in one), and each changed row's new ÷ old is also printed divided by it
(`÷ controls`; "—" where that state and model have no control, "control" on the controls).
"""
import json
import math
import pathlib
import re
import statistics
import sys

PASS = re.compile(r"^(?P<state>[a-z]+)_(?P<side>[on])(?P<n>[12])(?:_.+)?$")


def rows_by_pass(root: pathlib.Path) -> dict:
    """{(state, row key): {"o": [row, ...], "n": [row, ...]}} over every pass folder under root."""
    table: dict = {}
    for ops_json in sorted(root.glob("*/ops.json")):
        m = PASS.match(ops_json.parent.name)
        if not m:
            continue
        for row in json.loads(ops_json.read_text())["rows"]:
            key = (m["state"], row["name"], row["shape"], row["M"])
            table.setdefault(key, {"o": [], "n": []})[m["side"]].append(row)
    return table


def verdict(old: list, new: list) -> dict | None:
    """new ÷ old time, × matmul on both sides and the pairs' spread; None without both wheels."""
    if not old or not new or not all(r.get("check_passed") for r in old + new):
        return None
    def ms(rows):
        return [r["coda_ms"] for r in rows]
    def x_matmul(rows):
        return statistics.mean(r["ratios"]["coda/torch_matmul"] for r in rows)
    spread = max((max(v) - min(v)) / min(v) for v in (ms(old), ms(new)))
    return {"ratio": statistics.mean(ms(new)) / statistics.mean(ms(old)), "spread": spread,
            "old_x": x_matmul(old), "new_x": x_matmul(new),
            "kernels": (old[0].get("kernel") or "—", new[0].get("kernel") or "—")}


def is_control(v: dict) -> bool:
    """A row whose kernel did not change (one with no kernel name, "—", is not known unchanged)."""
    old_k, new_k = v["kernels"]
    return old_k == new_k and old_k != "—"


def control_drift(verdicts: dict) -> dict:
    """{(state, model): geometric mean new ÷ old of the controls (is_control)}."""
    ratios: dict = {}
    for (state, _, shape, _), v in verdicts.items():
        if is_control(v):
            ratios.setdefault((state, shape), []).append(v["ratio"])
    return {key: math.exp(statistics.mean(math.log(r) for r in rs)) for key, rs in ratios.items()}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    table = rows_by_pass(pathlib.Path(argv[0]))
    if not table:
        print(f"no STATE_PASS folders with ops.json under {argv[0]}", file=sys.stderr)
        return 1
    verdicts = {key: verdict(sides["o"], sides["n"]) for key, sides in sorted(table.items())}
    drift = control_drift({k: v for k, v in verdicts.items() if v is not None})
    print("| state | op | model | M | new ÷ old time | pairs' spread | ÷ controls | × matmul old → new "
          "| kernel old → new |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (state, name, shape, m), v in verdicts.items():
        if v is None:
            print(f"| {state} | {name} | {shape} | {m} | — (a pass is missing or failed its check) | | | | |")
            continue
        old_k, new_k = v["kernels"]
        kernels = old_k if old_k == new_k else f"{old_k} → {new_k}"
        control = drift.get((state, shape))
        if is_control(v):
            versus = "control"
        else:
            versus = f"{v['ratio'] / control:.3f}" if control else "—"
        print(f"| {state} | {name} | {shape} | {m} | {v['ratio']:.3f} | {v['spread']:.3f} | {versus} "
              f"| {v['old_x']:.3f} → {v['new_x']:.3f} | {kernels} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
