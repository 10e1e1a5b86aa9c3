#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A change to the library's host code (a choice rule, a table) measured on one GPU in one call:
# coda-bench from two prebuilt folders (scripts/build-wheel.sh with CODA_BINARIES=1, once at the
# change and once at its baseline), run as new, old, new on the same machine (docs/benchmarks.md
# §5.1), then the device suite of the new build. Run on the GPU machine from the repository root:
#   scripts/prebuilt-aba.sh NEW_DIR OLD_DIR gemm --passes fwd --tokens 3000,12000 --rounds 5
# For a host-only change both builds share one build tree: build, copy .prebuilt/coda-bench,
# coda_device_tests and COMMIT to NEW_DIR; `git stash` (or check out the old files), rebuild
# (seconds), copy to OLD_DIR; restore. Carry both folders (about 25 MB each).
# Output: $OUT/aba.tgz (a device call brings back few files) with <pass>.json and <pass>.log per
# pass and device_tests.log; the last line of each pass's table is printed.
set -uo pipefail
new=$1 old=$2; shift 2
out=${OUT:-$PWD}/aba
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1
status=0
for pass in new1 old new2; do
  dir=$new; [ "$pass" = old ] && dir=$old
  CODA_COMMIT=$(cat "$dir/COMMIT" 2>/dev/null || echo "$dir") \
    "$dir/coda-bench" "$@" --json "$out/$pass.json" > "$out/$pass.log" 2>&1 || status=1
  echo "$pass: $(grep -i "geomean" "$out/$pass.log" | tail -1)"
done
"$new/coda_device_tests" --gtest_brief=1 > "$out/device_tests.log" 2>&1 || status=1
tail -2 "$out/device_tests.log"
tar czf "${OUT:-$PWD}/aba.tgz" -C "$(dirname "$out")" aba
exit $status
