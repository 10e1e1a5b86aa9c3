#!/usr/bin/env bash
# Session 44, call 3 (H100; carry .prebuilt/s44r = main's library with the 16-byte RoPE backward).
# (1) docs/gemm-gap.md's experiment 2: Nsight Compute (clocks left alone) on one launch each of
#     matmul (nvjet), CODA's plain GEMM in four tile configs and the QK-norm RoPE op in three, 8B
#     QKV shape, M = 16384 (bench/ncu_gemm_gap.py); (2) the whole C++ device suite and Python GPU
#     suite on s44r.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
W=$repo/.prebuilt/s44r
python3 -m pip install -q --no-deps --force-reinstall "$W"/coda-*.whl > /dev/null 2>&1 || exit 1
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy"
timeout 200 ncu --clock-control none --nvtx --nvtx-include "ncu/" $sections --export "$OUT/r/gap_8b_qknorm" \
  python3 "$repo/bench/ncu_gemm_gap.py" --model 8B --m 16384 --op linear_qknorm_rope > ncu_run.log 2>&1
echo "ncu rc=$? at $((SECONDS - t0)) s"; grep -E "kernel [0-9]|skipped|^8B|ERROR|Error" ncu_run.log | head -20
ncu --import gap_8b_qknorm.ncu-rep --page details --print-units base > gap_8b_qknorm.details.txt 2>&1
ncu --import gap_8b_qknorm.ncu-rep --page raw --csv > gap_8b_qknorm.raw.csv 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|SM Frequency|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput|Memory Throughput" gap_8b_qknorm.details.txt | head -80
tar -xJf "$W/tests.tar.xz" -C "$W" || exit 1
timeout 170 "$W/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
CODA_REQUIRE_GPU=1 timeout $((585 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
