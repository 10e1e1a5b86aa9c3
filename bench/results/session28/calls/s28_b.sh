#!/usr/bin/env bash
# Session 28, call 2 (H100): re-tune the 8B rows of the nearest-M buckets (4096, 8192, 32768) that
# were tuned (dea5558) before the Pingpong 128x192 config existed, plus M = 25345 (the random M of
# call 1, whose lookup lands on the 32768 row); then ncu source-level stalls of the 1B SwiGLU
# backward's epilogue. Carry .prebuilt/coda-*.whl (main's device code) and .prebuilt/s27_branch.
set -u
mkdir -p "$OUT"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
(cd "$OUT" && timeout 420 python3 -m coda.bench tune --models 8B \
  --ops linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_rmsnorm_rope \
  --tokens 4096,8192,25345,32768 --seed 28 --out "$OUT/tune8b" > "$OUT/tune8b.log" 2>&1)
echo "tune rc=$?"; tail -40 "$OUT/tune8b.log"
timeout 150 scripts/ncu-op.sh .prebuilt/s27_branch "$OUT/ncu" linear_swiglu_bwd 1B 16384 PairDot bwd
