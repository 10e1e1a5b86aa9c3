#!/usr/bin/env bash
# Session 31, call 6 (H100). A/B of 024e048's kernel choice (.prebuilt/ab/new) against efbb226's
# (.prebuilt/ab/old) where it moved off the benchmark's M: M = 1300 and 1800 (the few-token rule;
# no table row near), 4096 and 8192 (the table's buckets, where rows of the new M now are nearer
# for ops without a row of their own there). The ops whose choice differs at one of these M
# (coda-bench choose), 1B / 8B / Qwen3-8B, processes old new new old, coda and torch.matmul in the
# same rounds, outputs checked.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
OPS=linear_bias_gelu,linear_bias_gelu_save_pre,linear_rmsnorm,linear_rmsnorm_rope,linear_rope,linear_residual_rms,linear_rmsnorm_swiglu,linear_swiglu,linear_rmsnorm_bwd,linear_rmsnorm_bwd_qkv,linear_qknorm_rope_save_pre
i=0
for w in old new new old; do
  i=$((i + 1)); left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break
  install $w
  timeout $((left < 140 ? left : 140)) python3 -m coda.bench ops --ops $OPS --models 1B,8B,Qwen3-8B --tokens 1300,1800,4096,8192 \
    --variants coda,torch_matmul --seed 316$i --rounds 5 --out "$OUT/r/ab_${i}_$w" > "ab_${i}_$w.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
