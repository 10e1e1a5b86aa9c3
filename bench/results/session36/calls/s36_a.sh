#!/usr/bin/env bash
# Session 36, call 1 (H100). Which clock each timed block of the op benchmark ran at (NVML, the
# new coda.bench.clocks), on the rows with the largest harness gap: the 1B RoPE / QK-norm rows
# (fused 0.32 ms against CODA's plain GEMM 0.26 in the benchmark of record, level with it in
# tune-ops) and the 8B ones (the QKV shape where matmul is bimodal). Three harnesses on the same
# wheel (HEAD 1ddf404's kernels, this tree's Python): every variant; the GEMM-like variants alone;
# every variant after 20 ms of sustained GEMM load (--sustained). Then cuBLAS's kernel names.
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version,clocks.max.sm --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=1ddf404
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s36w/coda-*.whl > /dev/null 2>&1 || exit 1
ops="--models 1B,8B --ops linear_rope,linear_qknorm_rope,linear_rmsnorm --tokens 16384 --seed 3407 --rounds 5"
run() {  # name, extra args
  local name=$1; shift
  timeout $((560 - SECONDS + t0)) python3 -m coda.bench ops $ops --out "$OUT/r/$name" "$@" > "$name.log" 2>&1
  echo "== $name rc=$? at $((SECONDS - t0)) s"
  grep -E "^\| linear" "$name.log" | cut -d'|' -f2-7,9,14,15
}
run every
run gemms --variants coda,torch_matmul,coda_gemm
run sustained --sustained 20
for i in 1 2; do timeout $((580 - SECONDS + t0)) python3 "$repo"/bench/torch_gemm_kernels.py \
  16384,6144,4096 16384,3072,2048 16384,4096,4096 2>&1 | tee -a kernels.log; done
echo "done at $((SECONDS - t0)) s"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
