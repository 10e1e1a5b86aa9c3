#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The build's total wall time and its slowest steps, from a Ninja build directory's .ninja_log.

    python3 scripts/ninja_slowest.py <build_dir> [N]     # N slowest steps, default 10

.ninja_log (format v5): a "# ninja log v5" header, then one line per finished step,
"start_ms<TAB>end_ms<TAB>mtime<TAB>target<TAB>hash", times in ms since that ninja run started.
A target built again (an incremental build, a rebuild after a failure) appears again further
down: its last entry counts. The outputs of one multi-output step share its times and count
once. Lines are appended as steps finish, so end_ms only drops where a new ninja run starts:
the total wall time is that of the last run in the log (last end − first start).
"""
import pathlib
import sys


def read_log(path):
    """target -> (run, start_ms, end_ms, hash), the last entry per target; and the run count."""
    entries, run, last_end = {}, 0, -1
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            try:
                start, end = int(parts[0]), int(parts[1])
            except ValueError:
                continue
            if end < last_end:
                run += 1
            last_end = end
            entries[parts[3]] = (run, start, end, parts[4])
    return entries, run + 1


def main(argv):
    if len(argv) < 2 or len(argv) > 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    log = pathlib.Path(argv[1]) / ".ninja_log"
    count = int(argv[2]) if len(argv) == 3 else 10
    if not log.is_file():
        print(f"ninja_slowest: no {log}", file=sys.stderr)
        return 1
    entries, runs = read_log(log)
    if not entries:
        print(f"ninja_slowest: {log} has no build steps")
        return 0
    # One step per (run, start, end, hash): the outputs of one multi-output command share them.
    steps = {}
    for target, key in entries.items():
        steps.setdefault(key, []).append(target)
    last = [k for k in steps if k[0] == runs - 1]
    total = (max(k[2] for k in last) - min(k[1] for k in last)) / 1000
    summed = sum(k[2] - k[1] for k in steps) / 1000
    note = f", last of {runs} ninja runs" if runs > 1 else ""
    print(f"total wall: {total:.1f}s, sum of steps: {summed:.1f}s ({len(steps)} steps{note})")
    slowest = sorted(steps.items(), key=lambda kv: kv[0][2] - kv[0][1], reverse=True)[:count]
    for (_, start, end, _), targets in slowest:
        name = targets[0] + (f" (+{len(targets) - 1} outputs)" if len(targets) > 1 else "")
        print(f"{(end - start) / 1000:8.1f}s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
