#!/usr/bin/env bash
# Twenty-sixth session, call 3 (H100): do 2 x 2 clusters (A multicast along N as well as B along M:
# 16 instead of 24 KB of L2 reads a CTA a K-block for 128 x 128 tiles) close the plain GEMM's gap
# to cuBLAS at K = 2048? coda-bench built from HEAD + two CODA_TILE_CONFIGS lines (Pingpong
# 128x128 2x2, Cooperative 128x256 2x2; worktree build, .prebuilt/s26/coda-bench-2x2). `tune`
# prints each config's best raster/swizzle, the current choice and cuBLAS in the same rounds.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
B=$PWD/.prebuilt/s26/coda-bench-2x2
timeout 330 $B tune --models 1B --passes fwd,dgrad --tokens 16384 --rounds 5 --table-out "$OUT/r/tune_1b_2x2.inc" > "$OUT/r/tune_1b_2x2.h100.log" 2>&1
echo "1B rc=$?"
timeout 220 $B tune --models 8B --passes fwd,dgrad --tokens 16384 --rounds 3 --table-out "$OUT/r/tune_8b_2x2.inc" > "$OUT/r/tune_8b_2x2.h100.log" 2>&1
echo "8B rc=$?"
grep -E "^(shape|  |[0-9A-Za-z])" "$OUT/r/tune_1b_2x2.h100.log" | tail -60
