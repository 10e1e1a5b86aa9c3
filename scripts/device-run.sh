#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The GPU work in one command on a Hopper machine. Logs and JSON go under $OUT (default
# ./device-out); a short table is printed last.
#   scripts/device-run.sh train      the main job: install the Python package (pip install ., an
#                                    incremental build in $CODA_BUILD_DIR) and run coda-train
#                                    (TRAIN_ARGS: its flags)
#   scripts/device-run.sh pytest     install, then the Python GPU tests (parity, opcheck, compile,
#                                    CUDA graphs), a missing GPU failing them
#   scripts/device-run.sh layer      install, then the layer benchmark (python -m coda.bench layer,
#                                    LAYER_ARGS; Liger from the carried .whl/)
#   scripts/device-run.sh [all|test|bench|epilogue|ops|ops-bwd|tune|tune-ops]
#                                    the C++ side: build (16 jobs) -> GPU tests -> GEMM benchmark
#                                    against cuBLAS -> epilogue and op benchmarks
# Environment:
#   CODA_PREBUILT=DIR  run the binaries in DIR (coda_device_tests, coda-bench) instead of building
#                      (compile on a CPU machine, carry DIR; see README)
#   CODA_COMMIT, CODA_DATE  label the JSON (default: git, today)
#   BENCH_ARGS         extra coda-bench arguments (e.g. "--models 8B --rounds 5")
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
export CODA_COMMIT=${CODA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export CODA_DATE=${CODA_DATE:-$(date -u +%Y-%m-%d)}

nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv \
  > "$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"

# The Python side: one pip install (CMake through scikit-build-core; a warm build dir rebuilds
# only what changed), then the mode's command, from outside the checkout so that `coda` is the
# installed package.
install_package() {
  local t0=$SECONDS
  [ -d third_party/cutlass ] || [ -n "${CUTLASS_DIR:-}" ] || scripts/fetch-cutlass.sh
  python3 -m pip install --no-build-isolation --no-deps -v \
    -Cbuild-dir="${CODA_BUILD_DIR:-${TMPDIR:-/tmp}/coda-build}" . > "$out/install.log" 2>&1 \
    || { tail -40 "$out/install.log"; exit 1; }
  echo "package installed in $((SECONDS - t0)) s"
}
repo=$PWD
case "$mode" in
  train)
    install_package
    # shellcheck disable=SC2086
    (cd "$out" && PYTHONUNBUFFERED=1 python3 -m coda.train --out "$out" ${TRAIN_ARGS:-})
    exit $? ;;
  pytest)
    install_package
    (cd "$out" && CODA_REQUIRE_GPU=1 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" \
      2>&1 | tee "$out/pytest.log" | tail -40)
    exit $? ;;
  layer)
    install_package
    if ls .whl/liger_kernel-*.whl > /dev/null 2>&1; then
      python3 -m pip install -q --no-index --no-deps --target "${TMPDIR:-/tmp}/coda-whl" .whl/*.whl \
        && export PYTHONPATH="${TMPDIR:-/tmp}/coda-whl${PYTHONPATH:+:$PYTHONPATH}"
    fi
    # shellcheck disable=SC2086
    (cd "$out" && PYTHONUNBUFFERED=1 python3 -m coda.bench layer --out "$out" ${LAYER_ARGS:-})
    exit $? ;;
esac

if [ -n "${CODA_PREBUILT:-}" ]; then
  bin=$CODA_PREBUILT
else
  [ -d third_party/cutlass ] || [ -n "${CUTLASS_DIR:-}" ] || scripts/fetch-cutlass.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 \
    || { tail -20 "$out/configure.log"; exit 1; }
  cmake --build build -j 16 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  mkdir -p build/bin
  cp build/tests/coda_device_tests build/bench/coda-bench build/bin/
  bin=build/bin
fi

status=0
if [ "$mode" = all ] || [ "$mode" = test ]; then
  "$bin/coda_device_tests" --gtest_output=json:"$out/device_tests.json" > "$out/device_tests.log" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|seed" "$out/device_tests.log" | tail -30
  [ $rc -eq 0 ] || status=1
fi
if [ "$mode" = all ] || [ "$mode" = bench ]; then
  # shellcheck disable=SC2086
  "$bin/coda-bench" gemm --json "$out/gemm.json" ${BENCH_ARGS:-} > "$out/bench_gemm.log" 2>&1 \
    || status=1
  sed -n '/^| shape/,$p' "$out/bench_gemm.log"
  grep -E "ERROR|coda-bench:" "$out/bench_gemm.log" || true
fi
if [ "$mode" = all ] || [ "$mode" = epilogue ]; then
  # shellcheck disable=SC2086
  "$bin/coda-bench" epilogue --json "$out/epilogue.json" ${BENCH_ARGS:-} \
    > "$out/bench_epilogue.log" 2>&1 || status=1
  sed -n '/^| family/,$p' "$out/bench_epilogue.log"
  grep -E "ERROR|coda-bench:" "$out/bench_epilogue.log" || true
fi
# One pass of the ops benchmark (fwd or bwd): coda-bench, then the unfused stock-PyTorch
# baselines in the same call, joined into ops_<pass>.json.
run_ops() {
  local pass=$1
  # shellcheck disable=SC2086
  "$bin/coda-bench" ops "--$pass" --json "$out/ops_${pass}_coda.json" ${BENCH_ARGS:-} \
    > "$out/bench_ops_$pass.log" 2>&1 || status=1
  grep -E "ERROR|coda-bench:" "$out/bench_ops_$pass.log" || true
  if python3 -c "import torch" 2> /dev/null; then
    # shellcheck disable=SC2086
    python3 "bench/torch_ops_$pass.py" --json "$out/torch_ops_$pass.json" ${BENCH_ARGS:-} \
      > "$out/torch_ops_$pass.log" 2>&1 || status=1
    python3 scripts/merge_ops_json.py "$out/ops_${pass}_coda.json" "$out/torch_ops_$pass.json" \
      > "$out/ops_$pass.json" 2> "$out/ops_${pass}_table.md" || status=1
    cat "$out/ops_${pass}_table.md"
  else
    sed -n '/^| op/,$p' "$out/bench_ops_$pass.log"
  fi
}
if [ "$mode" = all ] || [ "$mode" = ops ]; then run_ops fwd; fi
if [ "$mode" = all ] || [ "$mode" = ops-bwd ]; then run_ops bwd; fi
if [ "$mode" = tune ]; then
  # shellcheck disable=SC2086
  "$bin/coda-bench" tune --table-out "$out/kernel_table.inc" ${BENCH_ARGS:-} \
    > "$out/tune.log" 2>&1 || status=1
  tail -50 "$out/tune.log"
fi
if [ "$mode" = tune-ops ]; then  # e.g. BENCH_ARGS="--ops linear_qknorm_rope --models 70B"
  # shellcheck disable=SC2086
  "$bin/coda-bench" tune-ops --table-out "$out/op_table.inc" ${BENCH_ARGS:-} \
    > "$out/tune_ops.log" 2>&1 || status=1
  tail -50 "$out/tune_ops.log"
fi
exit $status
