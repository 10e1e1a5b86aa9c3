#!/usr/bin/env bash
# Twenty-fifth session, call 1 (H100): the cold test build (scripts/test.sh's: pip install . with
# the tests and bench, 16 jobs) of 64b2595 (one unit per program) and then of this tree (a
# header's kernels share units), on the same machine; the second build stays installed.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
nproc; free -g | head -2
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
ln -sfn "$repo/third_party" "$repo/.prebuilt/old_src/third_party"
build() {  # label, source folder, build folder
  local t0=$SECONDS
  (cd "$2" && timeout 300 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir="$3" \
    -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build_$1.log" 2>&1)
  echo "$1: cold test build (16 jobs) rc=$? in $((SECONDS - t0)) s"
  python3 scripts/ninja_slowest.py "$3" 12 > "$OUT/r/slowest_$1.txt" 2>&1; cat "$OUT/r/slowest_$1.txt"
  grep -v "^#" "$3/.ninja_log" > "$OUT/r/ninja_log_$1.txt"
}
build old_64b2595 "$repo/.prebuilt/old_src" /tmp/b_old
build new "$repo" /tmp/b_new
ls -la /tmp/b_new/tests/coda_device_tests /tmp/b_new/bench/coda-bench 2>&1 | tail -2
