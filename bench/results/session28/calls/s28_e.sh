#!/usr/bin/env bash
# Session 28, call 5 (H100): the nearest-M bucket rows (M = 4096, 8192, 32768) of the ops whose
# programs compile the Pingpong 128x192 config, tuned at dea5558 before that config existed: seven
# 70B ops. One tarball back.
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
tune tune70b 70B linear_swiglu_bwd,linear_swiglu,linear_rmsnorm_swiglu,linear_bias_gelu,linear_rope,linear_residual_rms,linear_rmsnorm 530
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$OUT/r"
