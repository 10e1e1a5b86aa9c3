#!/usr/bin/env bash
# Twenty-fourth session, call 12 (H100): the cold 16-core builds again with the kernel units listed
# longest first (scripts/instances.py build_order): the package alone, then the test build.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name --format=csv,noheader; nproc; which ccache || echo "no ccache"
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
t0=$SECONDS
timeout 280 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/bpkg2 . > "$OUT/r/build_pkg.log" 2>&1
echo "cold package build (16 jobs) rc=$? in $((SECONDS - t0)) s"
python3 scripts/ninja_slowest.py /tmp/bpkg2 3 2>&1 | head -2; cp /tmp/bpkg2/.ninja_log "$OUT/r/ninja_log_pkg.txt"
t0=$SECONDS
timeout 300 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/b16b \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build16.log" 2>&1
echo "cold test build (16 jobs) rc=$? in $((SECONDS - t0)) s"
python3 scripts/ninja_slowest.py /tmp/b16b 3 2>&1 | head -2; cp /tmp/b16b/.ninja_log "$OUT/r/ninja_log_tests.txt"
