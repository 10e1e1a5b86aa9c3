#!/usr/bin/env bash
# Session 39, call 2 (asks for an H200; the tool may lend an H100).
#   H200: (1) A/B of the two H200 rows scripts/both_states_picks.py took from the 37th session's
#         call 6 (1B QKV RMSNorm 16384x3072x2048 -> Pingpong 128x192 along N s4; 1B QK-norm RoPE ->
#         Pingpong 128x128 along N s8): scripts/wheel-ab.sh, old = .prebuilt/s38n (a4054b8), new =
#         .prebuilt/s38h (a4054b8 + the two rows); control the 1B RoPE (row unchanged).
#         (2) The Python GPU suite on HEAD's build (.prebuilt/c39 wheel = e0afc28 = ddcea5b's code).
#   H100: the benchmark of record on HEAD's build, as the GPU comes and sustained (as s37_f.sh).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
if grep -q H200 "$OUT/r/gpu.txt"; then
  AB_BUDGET_S=330 AB_LABEL=a4054b8-h200rows OUT="$OUT/r" \
    scripts/wheel-ab.sh .prebuilt/s38n .prebuilt/s38h "1B linear_rmsnorm,linear_qknorm_rope,linear_rope"
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/c39/coda-*.whl > /dev/null 2>&1 || exit 1
  cd "$OUT/r"
  CODA_REQUIRE_GPU=1 timeout $((590 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
  echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
else
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/c39/coda-*.whl > /dev/null 2>&1 || exit 1
  cd "$OUT/r"
  for name in ops ops_sustained; do
    extra=""; [ $name = ops_sustained ] && extra="--sustained 20"
    CODA_COMMIT=ddcea5b timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models 8B,1B,Qwen3-8B --tokens 16384 \
      --random-tokens --seed 3407 --rounds 5 $extra --out "$OUT/r/$name" > $name.log 2>&1
    echo "$name rc=$? at $((SECONDS - t0)) s"; grep -E "^random" $name.log
    python3 "$repo"/scripts/issue13_bars.py "$OUT/r/$name/ops.json"
  done
fi
cd "$OUT" && tar -czf r.tgz r && rm -rf r
