#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where a kernel's extra time goes, instruction by instruction: the warp-stall samples and
executed instructions of two Nsight Compute SASS pages (`ncu --page source --csv --print-source
sass`, as scripts/ncu-candidate.sh and ncu-op.sh write them), summed per opcode and sorted by
the difference. With a fused kernel and its plain twin, the mainloop's opcodes cancel and what is
left is the epilogue's cost (docs/benchmarks.md §8).

    python3 scripts/ncu_sass_diff.py fused.sass.csv twin.sass.csv [rows]
"""
import collections
import csv
import sys


def read_sass(path):
    """(column names, instruction rows) of an ncu SASS page in CSV."""
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    return rows[head], [r for r in rows[head + 1:] if r and r[0].startswith("0x")]


def opcode(source):
    """The opcode of a SASS line without its predicate and modifiers ("@!P0 BRA 0x…" -> "BRA")."""
    words = source.split()
    if not words:
        return ""
    return (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]


def per_opcode(path):
    names, rows = read_sass(path)
    samples = names.index("Warp Stall Sampling (All Samples)")
    executed = names.index("Instructions Executed")
    source = names.index("Source")
    stalls, counts = collections.Counter(), collections.Counter()
    for r in rows:
        op = opcode(r[source])
        if not op:
            continue
        stalls[op] += int(r[samples] or 0)
        counts[op] += int(r[executed] or 0)
    return stalls, counts


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    (sa, na), (sb, nb) = per_opcode(sys.argv[1]), per_opcode(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    print(f"samples: {sum(sa.values())} vs {sum(sb.values())}")
    print(f"{'opcode':14s} {'samples A':>10s} {'samples B':>10s} {'A - B':>8s} {'executed A':>12s} {'executed B':>12s}")
    for op in sorted(set(sa) | set(sb), key=lambda o: sb[o] - sa[o])[:top]:
        print(f"{op:14s} {sa[op]:10d} {sb[op]:10d} {sa[op] - sb[op]:8d} {na[op]:12d} {nb[op]:12d}")


if __name__ == "__main__":
    main()
