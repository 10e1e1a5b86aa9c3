#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Op-table rows from two `python -m coda.bench tune` runs on one GPU, one as the GPU comes and one
sustained (`--sustained MS`), for scripts/merge_table.py: the kernel that is best over both clock
states, where the two runs disagree.

Why not scripts/agreed_picks.py alone: on the H100 the states disagree in one direction (thirty-
seventh session): rows tuned at the boost clock to Pingpong 128 x 128 ran 7-14 % behind Pingpong
128 x 192 sustained, while at the boost clock 128 x 192 was within 0-3 % of them; so the boost run
keeps today's choice, the sustained run picks 128 x 192, and "both picked" changes nothing. A
training step runs mostly sustained; a benchmark of a cold GPU at the boost clock.

The rule, per table key (op, M, N, K; every model of that shape counts): among the picks either run
confirmed head to head (`written`), take the one whose sweep readings (× matmul, every model, both
states) have the lowest mean; write it where that mean is at least MIN_GAIN below today's choice's
and, in each state, its mean is at most MAX_LOSS above today's there (no state pays for the other).

    python3 scripts/both_states_picks.py BOOST/tune.json SUSTAINED/tune.json [MIN_GAIN MAX_LOSS] > rows.inc
    python3 scripts/merge_table.py rows.inc h100 "python -m coda.bench tune, both clock states, <commit>"
"""
import json
import statistics
import sys

MIN_GAIN = 0.02
MAX_LOSS = 0.02


def readings(boost_rows: list[dict], sustained_rows: list[dict]) -> dict:
    """Per table key: today's kernel, every candidate's × matmul per state (a list over models), the
    confirmed picks ({kernel: table row}) and a model name for the comment."""
    keys = {}
    for state, rows in (("boost", boost_rows), ("sustained", sustained_rows)):
        for r in rows:
            k = keys.setdefault((r["op"], r["M"], r["N"], r["K"]),
                                {"today": r["today_kernel"], "x": {}, "confirmed": {}, "models": []})
            if r["shape"] not in k["models"]:
                k["models"].append(r["shape"])
            for c in r["candidates"]:
                if c["x_matmul"] is not None:
                    k["x"].setdefault(c["kernel"], {}).setdefault(state, []).append(c["x_matmul"])
            if r["today_x_matmul"] is not None:
                k["x"].setdefault("today", {}).setdefault(state, []).append(r["today_x_matmul"])
            if r.get("written"):
                k["confirmed"][r["pick"]] = r["table_row"]
    return keys


def decide(key: dict, min_gain: float = MIN_GAIN, max_loss: float = MAX_LOSS):
    """(pick, its mean, today's mean, per-state means {state: (pick, today)}) or None."""
    x = key["x"]
    today = x.get("today", {})
    if set(today) != {"boost", "sustained"}:
        return None
    mean = statistics.mean

    def overall(kernel):
        return mean([v for state in ("boost", "sustained") for v in x[kernel].get(state, [])])

    candidates = [k for k in key["confirmed"] if set(x.get(k, {})) == {"boost", "sustained"}]
    if not candidates:
        return None
    pick = min(candidates, key=overall)
    states = {s: (mean(x[pick][s]), mean(today[s])) for s in ("boost", "sustained")}
    if overall(pick) > (1 - min_gain) * overall("today"):
        return None
    if any(p > (1 + max_loss) * t for p, t in states.values()):
        return None
    return pick, overall(pick), overall("today"), states


def rows(boost_rows: list[dict], sustained_rows: list[dict], min_gain: float = MIN_GAIN,
         max_loss: float = MAX_LOSS) -> list[str]:
    out = []
    for key in readings(boost_rows, sustained_rows).values():
        decision = decide(key, min_gain, max_loss)
        if decision is None:
            continue
        pick, pick_mean, today_mean, states = decision
        per_state = ", ".join(f"{s} {p:.3f} (was {t:.3f})" for s, (p, t) in states.items())
        out.append(f"{key['confirmed'][pick]}  // {'/'.join(key['models'])}: {pick_mean:.3f} x matmul "
                   f"over both clock states, was {today_mean:.3f}; {per_state}")
    return out


def main() -> None:
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    limits = [float(a) for a in sys.argv[3:5]] or [MIN_GAIN, MAX_LOSS]
    with open(sys.argv[1]) as b, open(sys.argv[2]) as s:
        out = rows(json.load(b)["rows"], json.load(s)["rows"], *limits)
    print("\n".join(out))
    print(f"{len(out)} rows best over both clock states", file=sys.stderr)


if __name__ == "__main__":
    main()
