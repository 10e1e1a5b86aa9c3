#!/usr/bin/env bash
# Twenty-fourth session, call 11 (H100): the user's build on 16 cores — `pip install .` of the
# Python package alone (libcoda + coda._C, no tests, bench or example programs), cold.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name --format=csv,noheader; nproc
export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
t0=$SECONDS
timeout 400 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/bpkg . > "$OUT/r/build_pkg.log" 2>&1
echo "cold package build (16 jobs) rc=$? in $((SECONDS - t0)) s"
python3 scripts/ninja_slowest.py /tmp/bpkg 5 > "$OUT/r/slowest_pkg.txt" 2>&1; cat "$OUT/r/slowest_pkg.txt"
cp /tmp/bpkg/.ninja_log "$OUT/r/ninja_log_pkg.txt"
