#!/usr/bin/env bash
# Twenty-sixth session, call 6 (H100): the SwiGLU backward with 16-column epilogue subtiles in
# every config (B: kEpilogueTileN = 16) against HEAD's 32 (A), A B A B on one warm machine; each
# run times the op, its plain dgrad GEMM and cuBLAS in the same process. Hypothesis: the narrower
# subtile's smaller Z/dZ/D buffers give Pingpong 128x128's mainloop a sixth stage (5 now, 6 in the
# plain GEMM) and the fused kernel loses less to the load latency. Then the op tuner on each, and
# ncu's launch statistics of B's fused kernel (its mainloop stage count is in its name).
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
P=$PWD/.prebuilt/s26
for x in A B A B; do
  for m in 16384 9795; do
    $P/coda-bench-$x ops --bwd --models 1B --ops linear_swiglu_bwd --rounds 7 --tokens $m 2>&1 | grep "^linear_swiglu_bwd" | sed "s/^/$x M=$m /"
  done
done | tee "$OUT/r/ab_swiglu_bwd_1b.h100.log"
for x in A B; do
  timeout 120 $P/coda-bench-$x tune-ops --models 1B --ops linear_swiglu_bwd --rounds 5 --tokens 16384 > "$OUT/r/tune_ops_swiglu_bwd_1b_$x.h100.log" 2>&1
  echo "tune-ops $x rc=$?"; tail -4 "$OUT/r/tune_ops_swiglu_bwd_1b_$x.h100.log" | cut -c1-250
done
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
timeout 120 "$ncu" --clock-control none --kernel-name-base demangled -k "regex:PairDot" -c 1 --section LaunchStats --section SpeedOfLight \
  $P/coda-bench-B ops --bwd --models 1B --ops linear_swiglu_bwd --rounds 1 --tokens 16384 > "$OUT/r/ncu_B_launch.txt" 2>&1
grep -oE "MainloopSm90TmaGmmaWarpSpecialized<[0-9]+|Dynamic Shared Memory Per Block.*|Duration.*|Compute \(SM\) Throughput.*" "$OUT/r/ncu_B_launch.txt" | head -6
