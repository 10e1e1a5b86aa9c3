#!/usr/bin/env bash
# Session 28, call 4 (H100): the nearest-M bucket rows (M = 4096, 8192, 32768) of the ops whose
# programs compile the Pingpong 128x192 config, tuned at dea5558 before that config existed: the
# 8B ops call 2 did not cover, then five 1B ops. One tarball back (a call returns at most 8 files).
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
tune() {  # name models ops timeout
  (cd "$OUT" && timeout "$4" python3 -m coda.bench tune --models "$2" --ops "$3" \
    --tokens 4096,8192,32768 --seed 28 --out "$OUT/r/$1" > "$OUT/r/$1.log" 2>&1)
  echo "== $1 rc=$?"; grep -E "^\| linear_" "$OUT/r/$1.log" | tail -18; tail -2 "$OUT/r/$1.log"
  cat "$OUT/r/$1/op_table.inc" 2>/dev/null
}
tune tune8b_rest 8B linear_residual_rms,linear_rmsnorm,linear_rope,linear_cross_entropy,linear_bias_gelu_save_pre,linear_bias_gelu_bwd 330
tune tune1b 1B linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_bias_gelu_bwd 200
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$OUT/r"
