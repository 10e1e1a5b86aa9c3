#!/usr/bin/env bash
# Session 28, call 6 (H100): the M = 16384 rows of the ops whose
# programs compile the Pingpong 128x192 config, tuned at dea5558 before that config existed: six
# 70B ops. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
tune() {  # name models ops timeout
  (cd "$OUT" && timeout "$4" python3 -m coda.bench tune --models "$2" --ops "$3" \
    --tokens 16384 --seed 28 --out "$OUT/r/$1" > "$OUT/r/$1.log" 2>&1)
  echo "== $1 rc=$?"; grep -E "^\| linear_" "$OUT/r/$1.log" | tail -18; tail -2 "$OUT/r/$1.log"
  cat "$OUT/r/$1/op_table.inc" 2>/dev/null
}
tune tune70b_16k 70B linear_swiglu_bwd,linear_bias_gelu,linear_bias_gelu_save_pre,linear_bias_gelu_bwd,linear_residual_rms,linear_rmsnorm_swiglu 500
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$OUT/r"
