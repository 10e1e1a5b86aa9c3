#!/usr/bin/env bash
# Twenty-seventh session, call 6 (asked for an H200, ran on an H100): the main job as the README runs it (coda-train, README
# defaults) on the carried wheel (30b2b42: c370e80's kernels), a second run.
set -u
mkdir -p "$OUT"
t0=$SECONDS
CODA_WHEEL=$(ls .prebuilt/coda-*.whl) OUT=$OUT/train timeout 400 scripts/device-run.sh train > "$OUT/train.log" 2>&1
echo "train rc=$? in $((SECONDS - t0)) s"; grep -A6 "^variant" "$OUT/train.log" | head -7; grep -E "PASS|MISS|Error" "$OUT/train.log" | sort -u | head -5
rm -f "$OUT"/*/0-all.tgz "$OUT"/*/install.log
