#!/usr/bin/env bash
# Session 37, call 6 (whichever GPU the device tool lends: it lends mostly H100s and does not let a
# tuning run ask for an H200). Wheel .prebuilt/s37t = 3ddf8e3's tree.
#   H100: the benchmark of record on 3ddf8e3 (calls 1-5's changes), as the GPU comes, then sustained
#         (--sustained 20): the fused ops of 8B, 1B and Qwen3-8B widths, every variant, M = 16384 and
#         the random M of seed 3407 (5958); issue 13's bars of each run.
#   H200: the op tuner as the GPU comes and sustained on calls 3 and 4's ops, for
#         scripts/both_states_picks.py (the H200 table has not been tuned in both clock states).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=3ddf8e3
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s37t/coda-*.whl > /dev/null 2>&1 || exit 1
if grep -q H200 gpu.txt; then
  ops=linear_rope,linear_rmsnorm_rope,linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_residual_rms,linear_swiglu_bwd,linear_rmsnorm,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd
  for state in boost sustained; do
    extra=""; [ $state = sustained ] && extra="--sustained 20"
    left=$((585 - SECONDS + t0)); [ $left -lt 60 ] && break
    timeout $left python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --tokens 16384 --rounds 5 --seed 3407 \
      --ops $ops $extra --out "$OUT/r/tune_$state" > tune_$state.log 2>&1
    echo "tune $state rc=$? at $((SECONDS - t0)) s"; grep -E "within|written" tune_$state.log | cut -c1-200
  done
else
  for name in ops ops_sustained; do
    extra=""; [ $name = ops_sustained ] && extra="--sustained 20"
    timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 --random-tokens \
      --seed 3407 --rounds 5 $extra --out "$OUT/r/$name" > $name.log 2>&1
    echo "$name rc=$? at $((SECONDS - t0)) s"; grep -E "^random" $name.log
    python3 "$repo"/scripts/issue13_bars.py "$OUT/r/$name/ops.json"
  done
fi
cd "$OUT" && tar -czf r.tgz r && rm -rf r
