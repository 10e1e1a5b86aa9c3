#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Merges the rows of a `coda-bench tune-ops` table (e.g. one run with --ops) into the table of
the GPU it ran on, src/ops/op_table_<gpu>.inc: a row with the same (op, M, N, K) is replaced, a
new one appended; the other rows stay. Each merged row's comment gets `label` (say which run it
came from).

    python3 scripts/merge_op_table.py tuned_op_table.inc h200 "tune-ops --bwd, 1959663"
"""
import pathlib
import re
import sys

OPS = pathlib.Path(__file__).resolve().parent.parent / "src" / "ops"
KEY = re.compile(r'\{OpKey::(\w+), (\d+), (\d+), (\d+),')


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("h100", "h200"):
        sys.exit("usage: merge_op_table.py <tuned op_table.inc> {h100|h200} [label]")
    table = OPS / f"op_table_{sys.argv[2]}.inc"
    tuned = [line.rstrip("\n") for line in open(sys.argv[1]) if KEY.match(line)]
    label = sys.argv[3] if len(sys.argv) > 3 else ""
    rows = {KEY.match(line).groups(): line + (f" ({label})" if label else "") for line in tuned}
    out = []
    for line in table.read_text().split("\n"):
        m = KEY.match(line)
        out.append(rows.pop(m.groups()) if m and m.groups() in rows else line)
    while out and out[-1] == "":
        out.pop()
    out.extend(rows.values())
    table.write_text("\n".join(out) + "\n")
    print(f"{len(tuned)} rows merged into {table}")


if __name__ == "__main__":
    main()
