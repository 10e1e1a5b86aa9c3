#!/usr/bin/env bash
# Session 44, call 1 (H100; carry .prebuilt/s43m = OLD, the library of main, and .prebuilt/s44r =
# NEW, main + the 43rd session's 16-byte RoPE backward). (1) The device tests that run rope_bwd /
# qknorm_rope_bwd and the Python RoPE and layer tests under NEW; (2) the layer's kernels under OLD
# and NEW at 8B and 1B widths (predicted rope_bwd_kernel 8B 0.295 -> ~0.20 ms, 1B 0.152 -> ~0.10);
# (3) docs/gemm-gap.md's first experiment: the K-sweep of CODA's plain GEMM against matmul at the
# 8B QKV width (N = 6144) with the table's choice and each tile config forced, and at the gate/up
# width (N = 28672), as the GPU comes; the table's choice also sustained.
set -u
repo=$PWD; t0=$SECONDS
OLD=.prebuilt/s43m NEW=.prebuilt/s44r
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo/$NEW/tests.tar.xz" -C "$repo/$NEW" || exit 1
timeout 120 "$repo/$NEW/coda_device_tests" --gtest_filter='*Rope*:*rope*:*BackwardOps*:*Nan*:*Capture*:*BadInput*' \
  > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo/$NEW"/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_layer_parity.py" \
  "$repo/tests/python/test_gpu_ops.py" -k "rope or layer" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
for pass in o1 n1; do
  dir=$OLD; [ $pass = n1 ] && dir=$NEW
  python3 -m pip install -q --no-deps --force-reinstall "$repo/$dir"/coda-*.whl > /dev/null 2>&1 || exit 1
  for size in 8B 1B; do
    timeout 80 python3 -m coda.bench kernels --size $size --variants coda --iters 5 --m 16384 --top 40 \
      --out "$OUT/r/kernels_${pass}_$size" > kernels_${pass}_$size.log 2>&1
    echo "kernels $pass $size rc=$?: $(grep -E 'rope_bwd|SM clock' kernels_${pass}_$size.log | tr -s ' ' | tr '\n' ';')"
  done
done
ks() {  # name, timeout, args...
  local name=$1 limit=$2; shift 2
  [ $((SECONDS - t0 + limit)) -gt 585 ] && { echo "ksweep $name skipped at $((SECONDS - t0)) s"; return; }
  timeout $limit python3 -m coda.bench ksweep --m 16384 "$@" --out "$OUT/r/ksweep_$name" > ksweep_$name.log 2>&1
  echo "== ksweep $name rc=$? at $((SECONDS - t0)) s"; cat ksweep_$name.log
}
ks 6144_table 60 --n 6144
ks 28672_table 80 --n 28672
ks 6144_pp128 60 --n 6144 --config pingpong_128x128_2x1,along_n,2
ks 6144_pp192 60 --n 6144 --config pingpong_128x192_2x1,along_n,1
ks 6144_coop 60 --n 6144 --config coop_128x256_2x1,along_n,4
ks 6144_coop256 60 --n 6144 --config coop_256x128_1x2,along_m,4
ks 6144_table_sustained 90 --n 6144 --sustained 20
cd "$OUT" && tar -czf r.tgz r && rm -rf r
