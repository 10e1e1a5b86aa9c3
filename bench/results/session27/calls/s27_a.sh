#!/usr/bin/env bash
# Twenty-seventh session, call 1 (H100): the main job as the README runs it (coda-train, README
# defaults) and the Python GPU tests, on the carried wheel built here at this session's first commit
# (device code of c370e80, unchanged since: the SwiGLU backward's Pingpong subtile).
set -u
mkdir -p "$OUT"
whl=$(ls .prebuilt/coda-*.whl)
t0=$SECONDS
CODA_WHEEL=$whl OUT=$OUT/train timeout 420 scripts/device-run.sh train > "$OUT/train.log" 2>&1
echo "train rc=$? in $((SECONDS - t0)) s"; grep -A8 "^variant" "$OUT/train.log" | head -10; grep -E "PASS|MISS|Error" "$OUT/train.log" | head -8
t0=$SECONDS
CODA_WHEEL=$whl OUT=$OUT/pytest timeout 420 scripts/device-run.sh pytest > "$OUT/pytest_run.log" 2>&1
echo "pytest rc=$? in $((SECONDS - t0)) s"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/pytest_run.log" | head -20
rm -f "$OUT"/*/0-all.tgz "$OUT"/*/install.log
