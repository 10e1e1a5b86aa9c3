#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Which M each GPU's op table has a row at, per op and (N, K), and where one GPU has a bucket the
other lacks: the tuning a table still needs before it serves every M as well as the other's.

    python3 scripts/table_buckets.py [src/ops/op_table_h100.inc src/ops/op_table_h200.inc]

An op's choice at an M the table has no row for is its nearest row's (ops::detail::op_choice,
tuned_shape_distance), so a shape whose rows are all at M = 16384 serves M = 4096 with the 16384
kernel; the fortieth session found the H200's table so (every Llama shape at 16384 only) and A/B'd
rows at 5793 and 11585 0.75-0.99 x their old time at untuned M (bench/RESULTS.md). No GPU needed.
"""
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


def main(argv: list) -> int:
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
