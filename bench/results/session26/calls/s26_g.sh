#!/usr/bin/env bash
# Twenty-sixth session, call 7 (H100): the SwiGLU backward's epilogue buffers and the mainloop's
# stages, three builds on one warm machine: A = HEAD's program (Pingpong 128x128 mainloop 5 stages,
# 128x192 4); B = 16-column subtiles in every config (128x128 6 stages); C = B + 3 epilogue load
# stages under Pingpong (128x192 5 stages, as its plain GEMM). The op, its plain dgrad GEMM and
# cuBLAS in one process per run, A B C C B A; then the op tuner on each (every candidate's time).
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
P=$PWD/.prebuilt/s26
for x in A B C C B A; do
  $P/coda-bench-$x ops --bwd --models 1B,8B --ops linear_swiglu_bwd --rounds 7 --tokens 16384 2>&1 | grep "^linear_swiglu_bwd" | sed "s/^/$x /"
done | tee "$OUT/r/abc_swiglu_bwd.h100.log"
for x in A B C; do
  timeout 150 $P/coda-bench-$x tune-ops --bwd --models 1B,8B --ops linear_swiglu_bwd --rounds 5 --tokens 16384 > "$OUT/r/tune_ops_swiglu_bwd_$x.h100.log" 2>&1
  echo "tune-ops $x rc=$?"; grep -E "^\{|best|kept|pick" "$OUT/r/tune_ops_swiglu_bwd_$x.h100.log" | cut -c1-220 | head -6
done
