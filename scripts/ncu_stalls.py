#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What one kernel's warps wait on: the warp-stall samples of an Nsight Compute SASS page
(`ncu --page source --csv --print-source sass`, as scripts/ncu-op.sh writes it) summed per stall
reason, then per range of code addresses (BIN bytes from the kernel's start) with each range's
commonest opcodes and reasons — the mainloop, the unrolled epilogue and the producer warps sit
in different ranges (docs/benchmarks.md §8).

    python3 scripts/ncu_stalls.py kernel.sass.csv [BIN, default 0x800]
"""
import collections
import sys

from ncu_sass_diff import opcode, read_sass


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    names, rows = read_sass(sys.argv[1])
    width = int(sys.argv[2], 0) if len(sys.argv) > 2 else 0x800
    samples = names.index("Warp Stall Sampling (All Samples)")
    source = names.index("Source")
    reasons = [(i, n[len("stall_"):]) for i, n in enumerate(names)
               if n.startswith("stall_") and "Not Issued" not in n]
    start = int(rows[0][0], 16)
    total, by_reason = 0, collections.Counter()
    ranges = collections.defaultdict(lambda: [0, collections.Counter(), collections.Counter()])
    for r in rows:
        s = int(r[samples] or 0)
        total += s
        bin_ = ranges[(int(r[0], 16) - start) // width * width]
        bin_[0] += s
        bin_[1][opcode(r[source])] += 1
        for i, reason in reasons:
            by_reason[reason] += int(r[i] or 0)
            bin_[2][reason] += int(r[i] or 0)
    print(f"{total} samples over {len(rows)} instructions")
    for reason, n in by_reason.most_common(10):
        print(f"  {reason:20s} {n:8d} {n / max(total, 1):6.1%}")
    print(f"per {width:#x} bytes of code (ranges with >= 1 % of the samples):")
    for offset in sorted(ranges):
        s, ops, why = ranges[offset]
        if s >= total / 100:
            print(f"  {offset:#7x} {s / total:6.1%}  ops {' '.join(o for o, _ in ops.most_common(4))}"
                  f"  waits {', '.join(w for w, _ in why.most_common(3))}")


if __name__ == "__main__":
    main()
