#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Merges the rows of a tuner's table into the table of the GPU it ran on: a row with the same key
is replaced, a new one appended, the other rows stay, and each merged row's comment gets `label`
(say which run it came from). The rows say which table: `{OpKey::…, M, N, K, …}` rows (from
`python -m coda.bench tune` or `coda-bench tune-ops`) go to src/ops/op_table_<gpu>.inc,
`{OperandLayout::…, M, N, K, …}` rows (from `coda-bench tune`) to src/gemm/kernel_table_<gpu>.inc.

    python3 scripts/merge_table.py tune-out/op_table.inc h100 "python -m coda.bench tune, dea5558"
"""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
KEY = re.compile(r"\{(OpKey|OperandLayout)::(\w+), (\d+), (\d+), (\d+),")
TABLES = {"OpKey": "ops/op_table_{gpu}.inc", "OperandLayout": "gemm/kernel_table_{gpu}.inc"}


def merge(table_text: str, tuned: list[str], label: str) -> str:
    """`table_text` with the `tuned` rows merged in (see the module's docstring)."""
    rows = {KEY.match(line).groups(): line + (f" ({label})" if label else "") for line in tuned}
    out = []
    for line in table_text.split("\n"):
        m = KEY.match(line)
        out.append(rows.pop(m.groups()) if m and m.groups() in rows else line)
    while out and out[-1] == "":
        out.pop()
    out.extend(rows.values())
    return "\n".join(out) + "\n"


def table_for(tuned: list[str], gpu: str) -> pathlib.Path:
    """The table the rows belong to; all rows must be of one kind."""
    kinds = {KEY.match(line).group(1) for line in tuned}
    if len(kinds) != 1:
        sys.exit(f"merge_table.py: the tuned file has {'no rows' if not kinds else 'rows of both tables'}")
    return SRC / TABLES[kinds.pop()].format(gpu=gpu)


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("h100", "h200"):
        sys.exit("usage: merge_table.py <tuned table .inc> {h100|h200} [label]")
    tuned = [line.rstrip("\n") for line in open(sys.argv[1]) if KEY.match(line)]
    table = table_for(tuned, sys.argv[2])
    table.write_text(merge(table.read_text(), tuned, sys.argv[3] if len(sys.argv) > 3 else ""))
    print(f"{len(tuned)} rows merged into {table}")


if __name__ == "__main__":
    main()
