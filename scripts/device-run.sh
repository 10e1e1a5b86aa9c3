#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The GPU work in one command on a Hopper machine. Logs and JSON go under $OUT (default
# ./device-out); a short table is printed last.
#   scripts/device-run.sh train      the main job: install the Python package (pip install ., an
#                                    incremental build in $CODA_BUILD_DIR) and run coda-train
#                                    (TRAIN_ARGS: its flags; TRAIN_GPUS=N: through torchrun on N
#                                    GPUs, data-parallel, e.g. TRAIN_ARGS="--parallel fsdp")
#   scripts/device-run.sh pytest     install, then the Python GPU tests (parity, opcheck, compile,
#                                    CUDA graphs), a missing GPU failing them; then the layer
#                                    parity tests again with the autotuner on (CODA_TUNE=1)
#   scripts/device-run.sh ops-py     install, then every fused op against torch.matmul, CODA's plain
#                                    GEMM, eager and torch.compile in one process, outputs
#                                    checked first (python -m coda.bench ops, OPS_ARGS), and issue
#                                    13's bars of the run; OPS_SUSTAINED=MS: the same run again with
#                                    --sustained MS into $OUT/ops_sustained (the clock of a training
#                                    step; docs/benchmarks.md §5.0: the record is kept in both states)
#   scripts/device-run.sh tune-py    install, then the op tuner (python -m coda.bench tune, TUNE_ARGS,
#                                    e.g. "--tokens 1024,12000 --rounds 3 --min-gain 1"): every
#                                    candidate against today's choice and matmul in the same
#                                    rounds; tune.json, tune.md, op_table.inc and the log in
#                                    $OUT/tune.tgz (a device call brings back few files);
#                                    TUNE_SUSTAINED=MS: the same run again with --sustained MS
#                                    (on the candidates within 3 % of today's in the first run,
#                                    --shortlist) and the rows best over both clock states (scripts/
#                                    both_states_picks.py, docs/benchmarks.md §5.1) in both_states.inc
#   scripts/device-run.sh layer      install, then the layer benchmark (python -m coda.bench layer,
#                                    LAYER_ARGS; Liger from the carried .whl/)
#   scripts/device-run.sh [all|test|bench|epilogue|ops|ops-bwd|tune|tune-ops]
#                                    the C++ side: build (16 jobs) -> GPU tests (the op tests
#                                    twice: autotuner off, then on) -> GEMM benchmark
#                                    against cuBLAS -> epilogue and op benchmarks
#   scripts/device-run.sh sanitize   build, then compute-sanitizer memcheck, racecheck, synccheck
#                                    and initcheck over coda_device_tests, the four at once, each
#                                    within SANITIZE_SECONDS (420): memcheck and synccheck the
#                                    whole suite, racecheck and initcheck the graph-capture tests
#                                    (every op, M = 300); logs sanitize_<tool>.log, one line a tool
#                                    ("memcheck: 0 errors (...)"), exit 1 on any error, failed
#                                    test or timeout (SANITIZE_FILTER_<TOOL>, SANITIZE_TOOLS)
# Environment:
#   CODA_PREBUILT=DIR  run the binaries in DIR (coda_device_tests, coda-bench) instead of building
#                      (compile on a CPU machine, carry DIR; see README)
#   CODA_WHEEL=FILE    the Python modes install this wheel instead of building the package
#                      (scripts/build-wheel.sh here, carry .prebuilt; see README)
#   CODA_PYTHON_OVERLAY=1  with CODA_WHEEL: run this tree's python/coda over the wheel's native
#                      module (a change to Python only since the wheel's commit: no rebuild; the
#                      JSON label stays the wheel's commit)
#   CODA_COMMIT, CODA_DATE  label the JSON (default: git, today; the Python modes' default is
#                      the commit the installed package was built from, coda.provenance)
#   BENCH_ARGS         extra coda-bench arguments (e.g. "--models 8B --rounds 5")
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
out=${OUT:-$PWD/device-out}
mkdir -p "$out"
export CODA_DATE=${CODA_DATE:-$(date -u +%Y-%m-%d)}

# A device call brings back at most 8 files of $OUT (seen: the first by name). With more, the
# whole folder also goes into 0-all.tgz, which sorts first, so a run's JSON is never left behind.
pack_out() {
  local rc=$?
  if [ "$(find "$out" -type f | wc -l)" -gt 8 ]; then
    tar czf "${TMPDIR:-/tmp}/0-all.tgz" -C "$out" . && mv "${TMPDIR:-/tmp}/0-all.tgz" "$out/"
  fi
  exit $rc
}
trap pack_out EXIT

nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv \
  > "$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"

# The Python side: one pip install (CMake through scikit-build-core; a warm build dir rebuilds
# only what changed), then the mode's command, from outside the checkout so that `coda` is the
# installed package.
install_package() {
  local t0=$SECONDS
  if [ -n "${CODA_WHEEL:-}" ]; then  # built here by scripts/build-wheel.sh: no kernel build there
    python3 -m pip install --no-deps --force-reinstall "$CODA_WHEEL" > "$out/install.log" 2>&1 \
      || { tail -20 "$out/install.log"; exit 1; }
    echo "package installed from $CODA_WHEEL in $((SECONDS - t0)) s"
    if [ "${CODA_PYTHON_OVERLAY:-0}" = 1 ]; then
      local site overlay=${TMPDIR:-/tmp}/coda-overlay
      site=$(cd / && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))") || exit 1
      rm -rf "$overlay" && mkdir -p "$overlay" && cp -r "$site" "$overlay/coda" \
        && cp -r python/coda/. "$overlay/coda/" || exit 1
      export PYTHONPATH="$overlay${PYTHONPATH:+:$PYTHONPATH}"
      echo "python/coda of this tree overlaid on the wheel's native module ($overlay)"
    fi
    return
  fi
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
    launch=(python3 -m coda.train)
    [ "${TRAIN_GPUS:-1}" -gt 1 ] && launch=(python3 -m torch.distributed.run --standalone \
      --nproc-per-node "$TRAIN_GPUS" -m coda.train)
    (cd "$out" && PYTHONUNBUFFERED=1 "${launch[@]}" --out "$out" ${TRAIN_ARGS:-})
    exit $? ;;
  pytest)
    install_package
    (cd "$out" && CODA_REQUIRE_GPU=1 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" \
      2>&1 | tee "$out/pytest.log" | tail -40)
    rc=$?
    # The layer parity tests again with the autotuner on (an empty cache).
    (cd "$out" && CODA_TUNE=1 CODA_TUNE_CACHE=$(mktemp -d) CODA_REQUIRE_GPU=1 python3 -m pytest -q \
      -p no:cacheprovider "$repo/tests/python/test_gpu_layer_parity.py" 2>&1 \
      | tee "$out/pytest_tuned.log" | tail -5)
    tuned=$?
    [ $rc -ne 0 ] || rc=$tuned
    exit $rc ;;
  ops-py)  # the op benchmark of record (docs/benchmarks.md §2.1), e.g. OPS_ARGS="--models 8B"
    install_package
    (cd "$out" && PYTHONUNBUFFERED=1 python3 -m coda.bench ops --out "$out" \
      ${OPS_ARGS:---models 1B,8B,70B --random-tokens})
    rc=$?
    python3 scripts/issue13_bars.py "$out/ops.json"
    if [ -n "${OPS_SUSTAINED:-}" ]; then
      (cd "$out" && PYTHONUNBUFFERED=1 python3 -m coda.bench ops --out "$out/ops_sustained" \
        --sustained "$OPS_SUSTAINED" ${OPS_ARGS:---models 1B,8B,70B --random-tokens})
      sustained=$?
      [ $rc -ne 0 ] || rc=$sustained
      python3 scripts/issue13_bars.py "$out/ops_sustained/ops.json"
    fi
    exit $rc ;;
  tune-py)
    install_package
    # shellcheck disable=SC2086
    (cd "$out" && PYTHONUNBUFFERED=1 python3 -m coda.bench tune --out "$out/tune" ${TUNE_ARGS:-} \
      > "$out/tune.log" 2>&1)
    rc=$?
    grep -E "within|rows written to" "$out/tune.log"
    kept=(tune tune.log)
    if [ -n "${TUNE_SUSTAINED:-}" ]; then
      # Only the candidates within 3 % of today's choice as the GPU came (and its best) are timed
      # again: both_states_picks.py writes none that loses more than 2 % in either state.
      # shellcheck disable=SC2086
      (cd "$out" && PYTHONUNBUFFERED=1 python3 -m coda.bench tune --out "$out/tune_sustained" \
        --sustained "$TUNE_SUSTAINED" --shortlist "$out/tune/tune.json" ${TUNE_ARGS:-} \
        > "$out/tune_sustained.log" 2>&1)
      sustained=$?
      [ $rc -ne 0 ] || rc=$sustained
      grep -E "within|rows written to" "$out/tune_sustained.log"
      python3 scripts/both_states_picks.py "$out/tune/tune.json" "$out/tune_sustained/tune.json" \
        > "$out/both_states.inc" && cat "$out/both_states.inc"
      kept+=(tune_sustained tune_sustained.log both_states.inc)
    fi
    (cd "$out" && tar czf tune.tgz "${kept[@]}" && rm -rf tune tune_sustained)
    exit $rc ;;
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

# The C++ binaries' label: carried ones name their commit (build-wheel.sh writes COMMIT), else
# this tree's. Not exported before the Python modes: a carried wheel knows its own commit.
[ -z "${CODA_PREBUILT:-}" ] || [ -n "${CODA_COMMIT:-}" ] || CODA_COMMIT=$(cat "$CODA_PREBUILT/COMMIT" 2>/dev/null)
export CODA_COMMIT=${CODA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [ -n "${CODA_PREBUILT:-}" ]; then
  bin=$CODA_PREBUILT
else
  [ -d third_party/cutlass ] || [ -n "${CUTLASS_DIR:-}" ] || scripts/fetch-cutlass.sh
  # Outside the checkout, so that a warm machine rebuilds only what changed.
  cpp_build=${CODA_CPP_BUILD_DIR:-${TMPDIR:-/tmp}/coda-cpp-build}
  cmake -S . -B "$cpp_build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/configure.log" 2>&1 \
    || { tail -20 "$out/configure.log"; exit 1; }
  cmake --build "$cpp_build" -j 16 > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  mkdir -p "$cpp_build/bin"
  cp "$cpp_build/tests/coda_device_tests" "$cpp_build/bench/coda-bench" "$cpp_build/bin/"
  bin=$cpp_build/bin
fi

status=0
if [ "$mode" = all ] || [ "$mode" = test ]; then
  "$bin/coda_device_tests" --gtest_output=json:"$out/device_tests.json" > "$out/device_tests.log" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|seed" "$out/device_tests.log" | tail -30
  [ $rc -eq 0 ] || status=1
  # The op tests again with the autotuner on (CODA_TUNE=1, an empty cache): every op's own
  # choice is then timed on first use, and must meet the same contract.
  tune_cache=$(mktemp -d)
  CODA_TUNE=1 CODA_TUNE_CACHE=$tune_cache "$bin/coda_device_tests" \
    --gtest_filter='ForwardOps.*:BackwardOps.*:AllOps/Capture.*' > "$out/device_tests_tuned.log" 2>&1
  rc=$?
  echo "with CODA_TUNE=1: $(grep -cE '^\[       OK' "$out/device_tests_tuned.log") passed," \
    "$(ls "$tune_cache" | wc -l) cache file(s)"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure" "$out/device_tests_tuned.log" | tail -10
  cp -r "$tune_cache" "$out/tune_cache"
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
# One pass of the C++ ops benchmark (fwd or bwd): each op against cuBLAS and CODA's plain GEMM in
# one process. PyTorch's matmul, eager and torch.compile in the same process: ops-py.
run_ops() {
  local pass=$1
  # shellcheck disable=SC2086
  "$bin/coda-bench" ops "--$pass" --json "$out/ops_$pass.json" ${BENCH_ARGS:-} \
    > "$out/bench_ops_$pass.log" 2>&1 || status=1
  grep -E "ERROR|coda-bench:" "$out/bench_ops_$pass.log" || true
  sed -n '/^| op/,$p' "$out/bench_ops_$pass.log"
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
# compute-sanitizer over the GPU tests (mode sanitize): the four tools run at once, sharing the GPU
# (their host-side work overlaps), each stopped after SANITIZE_SECONDS. memcheck and synccheck run
# the whole suite; racecheck and initcheck, far slower on the CUTLASS kernels, run the graph-capture
# tests (tests/device/ops/capture_test.cu: every public op under each of its configs at M = 300),
# without the 8191-row GEMM. SANITIZE_FILTER_<TOOL> (a gtest filter) overrides a tool's set;
# SANITIZE_TOOLS picks the tools. One line per tool, also in sanitize_summary.txt.
sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [ -x "$cs" ] || { echo "sanitize: compute-sanitizer not found"; status=1; return; }
  "$cs" --version | tail -1
  local limit=${SANITIZE_SECONDS:-420} capture='AllOps/Capture.*:-*gemm_many_waves*' tool
  local -A filter=([memcheck]=${SANITIZE_FILTER_MEMCHECK:-*}
                   [synccheck]=${SANITIZE_FILTER_SYNCCHECK:-*}
                   [racecheck]=${SANITIZE_FILTER_RACECHECK:-$capture}
                   [initcheck]=${SANITIZE_FILTER_INITCHECK:-$capture})
  local tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
  for tool in $tools; do
    rm -f "$out/sanitize_$tool.rc"
    [ -n "${filter[$tool]:-}" ] || { echo "sanitize: unknown tool $tool"; status=1; continue; }
    echo "sanitize: $tool over --gtest_filter='${filter[$tool]}', at most $limit s"
    (
      t0=$SECONDS
      timeout -s INT -k 30 "$limit" "$cs" --tool "$tool" --error-exitcode 1 \
        "$bin/coda_device_tests" --gtest_filter="${filter[$tool]}" > "$out/sanitize_$tool.log" 2>&1
      echo "$? $((SECONDS - t0))" > "$out/sanitize_$tool.rc"
    ) &
  done
  wait
  # Errors: the largest count on the log's ERROR SUMMARY (racecheck: RACECHECK SUMMARY) lines.
  # Clean: 0 errors, the run finished, and every selected test passed.
  local rc secs errors passed failed where line
  : > "$out/sanitize_summary.txt"
  for tool in $tools; do
    [ -f "$out/sanitize_$tool.rc" ] || continue
    read -r rc secs < "$out/sanitize_$tool.rc"
    errors=$(sed -nE -e 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' \
      -e 's/.*RACECHECK SUMMARY: .*\(([0-9]+) error.*/\1/p' "$out/sanitize_$tool.log" \
      | sort -n | tail -1)
    passed=$(grep -c '^\[       OK \]' "$out/sanitize_$tool.log")
    failed=$(grep -c '^\[  FAILED  \] .* ms)$' "$out/sanitize_$tool.log")
    line="$tool: ${errors:-?} errors ($passed tests passed, $failed failed, $secs s)"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      where=$(grep '^\[ RUN      \]' "$out/sanitize_$tool.log" | tail -1 | cut -c 14-)
      line="$tool: ${errors:-0} errors so far; TIMED OUT after $limit s, last test started ${where:-none} ($passed passed, $failed failed)"
    elif [ -z "$errors" ]; then
      line="$line; no ERROR SUMMARY (exit $rc), see sanitize_$tool.log"
    elif [ "$rc" != 0 ] && [ "$errors" = 0 ]; then
      line="$line; exit $rc"
    fi
    if [ "$rc" != 0 ] || [ "${errors:-?}" != 0 ] || [ "$failed" != 0 ]; then status=1; fi
    echo "$line" | tee -a "$out/sanitize_summary.txt"
  done
}
if [ "$mode" = sanitize ]; then sanitize; fi
exit $status
