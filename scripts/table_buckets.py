#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Which M each GPU's op table has a row at, per op and (N, K), and where one GPU has a bucket the
other lacks: the tuning a table still needs before it serves every M as well as the other's.

    python3 scripts/table_buckets.py [src/ops/op_table_h100.inc src/ops/op_table_h200.inc]
    python3 scripts/table_buckets.py --ab-m CHANGED.inc src/ops/op_table_h200.inc

The second form picks the M values at which a wheel A/B (scripts/wheel-ab.sh) reaches each changed
row (from a tuner's op_table.inc or both_states.inc): an M no row of its (op, N, K) has, whose
nearest row is the changed one. The 41st session's A/B at M = 4600 / 7300 missed four of its rows
because the H100 table has rows at 4686 and 7000 too.

An op's choice at an M the table has no row for is its nearest row's (ops::detail::op_choice,
tuned_shape_distance), so a shape whose rows are all at M = 16384 serves M = 4096 with the 16384
kernel; the fortieth session found the H200's table so (every Llama shape at 16384 only) and A/B'd
rows at 5793 and 11585 0.75-0.99 x their old time at untuned M (bench/RESULTS.md). No GPU needed.
"""
import math
import pathlib
import re
import sys

ROW = re.compile(r"^\{OpKey::(\w+), (\d+), (\d+), (\d+),", re.M)
DEFAULT = ["src/ops/op_table_h100.inc", "src/ops/op_table_h200.inc"]


def buckets(text: str) -> dict:
    """{(op, n, k): sorted M values} of one table's rows."""
    table: dict = {}
    for op, m, n, k in ROW.findall(text):
        table.setdefault((op, int(n), int(k)), set()).add(int(m))
    return {key: sorted(ms) for key, ms in table.items()}


def gaps(tables: dict) -> list:
    """(gpu, op, n, k, M values another GPU has at that (op, n, k) and this one lacks)."""
    out = []
    for gpu, table in tables.items():
        for key in sorted(set().union(*tables.values())):
            others = set().union(*(t.get(key, ()) for g, t in tables.items() if g != gpu))
            missing = sorted(others - set(table.get(key, ())))
            if missing:
                out.append((gpu, *key, missing))
    return out


def reach(ms: list, m: int) -> tuple:
    """(lo, hi): the M whose nearest row (|log2 M / row|, within an octave) is the row at m among
    the rows at `ms` of one (op, N, K); the row's own M excluded by the caller."""
    lower = [x for x in ms if x < m]
    upper = [x for x in ms if x > m]
    lo = max(math.sqrt(lower[-1] * m) if lower else 0.0, m / 2)
    hi = min(math.sqrt(m * upper[0]) if upper else math.inf, 2 * m)
    return lo, hi


def ab_ms(table: dict, changed: list) -> list:
    """[(M, [changed rows it reaches])], greedily: each M reaches the most rows not yet reached
    and, among those, stays furthest (in octaves) both from the edges of their reach and from their
    own M — an M a user might run, not the tuned one again nor a tie between two rows (ties go by
    table order). Candidates: M a multiple of 100."""
    intervals = {row: reach(table[row[0], row[2], row[3]], row[1]) for row in changed}

    def slack(m: int, row: tuple) -> float:
        lo, hi = intervals[row]
        return min(math.log2(m / lo), math.log2(hi / m), abs(math.log2(m / row[1])))

    left, out = set(changed), []
    while left:
        best, best_rows, best_slack = None, [], 0.0
        for m in range(100, 2 * max(r[1] for r in left) + 1, 100):
            rows = sorted(r for r in left if slack(m, r) > 0)
            worst = min((slack(m, r) for r in rows), default=0.0)
            if (len(rows), worst) > (len(best_rows), best_slack):
                best, best_rows, best_slack = m, rows, worst
        if best is None:  # a row none reaches (its neighbours at ±100): say so
            out.extend((None, [r]) for r in sorted(left))
            break
        out.append((best, best_rows))
        left -= set(best_rows)
    return out


def main_ab_m(changed_path: str, table_path: str) -> int:
    changed = [(op, int(m), int(n), int(k)) for op, m, n, k in ROW.findall(pathlib.Path(changed_path).read_text())]
    table = buckets(pathlib.Path(table_path).read_text())
    for op, m, n, k in changed:
        table.setdefault((op, n, k), [])
        if m not in table[op, n, k]:
            table[op, n, k] = sorted(table[op, n, k] + [m])
    for m, rows in ab_ms(table, changed):
        names = ", ".join(f"{op} {mm}x{n}x{k}" for op, mm, n, k in rows)
        print(f"M = {m}: {names}" if m else f"no M reaches {names}")
    return 0


def main(argv: list) -> int:
    if argv[:1] == ["--ab-m"]:
        if len(argv) != 3:
            sys.exit("usage: table_buckets.py --ab-m CHANGED.inc TABLE.inc")
        return main_ab_m(argv[1], argv[2])
    paths = [pathlib.Path(p) for p in (argv or DEFAULT)]
    tables = {}
    for path in paths:
        gpu = re.search(r"op_table_(\w+)\.inc$", path.name)
        tables[gpu.group(1) if gpu else path.name] = buckets(path.read_text())
    for gpu, table in tables.items():
        counts = sorted({m for ms in table.values() for m in ms})
        print(f"{gpu}: {sum(map(len, table.values()))} rows over {len(table)} (op, N, K); M buckets {counts}")
    missing = gaps(tables)
    print("| GPU | op | N | K | M another GPU has, this one lacks |")
    print("| --- | --- | --- | --- | --- |")
    for gpu, op, n, k, ms in missing:
        print(f"| {gpu} | {op} | {n} | {k} | {', '.join(map(str, ms))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
