#!/usr/bin/env bash
# Twenty-sixth session, call 1 (H100): where the 1B SwiGLU backward's time goes. The op against its
# dgrad GEMM in one process (5 rounds), then Nsight Compute (--set full, clocks left alone) on the
# fused kernel (the only one with a PairDot node) and on CODA's plain dgrad GEMM of the same shape.
# Binary: .prebuilt/coda-bench (45ab8e0's kernels; the same machine code as HEAD's, 25th session).
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
B=$PWD/.prebuilt/s26/coda-bench-45ab8e0
$B ops --bwd --models 1B --ops linear_swiglu_bwd --rounds 5 --tokens 16384 > "$OUT/r/ops_swiglu_bwd_1b.log" 2>&1
tail -8 "$OUT/r/ops_swiglu_bwd_1b.log"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
for kind in fused plain; do
  pattern=PairDot; [ $kind = fused ] || pattern="fusion::ScaledAcc<"
  rep=/tmp/swiglu_bwd_1B.$kind
  timeout 200 "$ncu" --clock-control none --kernel-name-base demangled -k "regex:$pattern" -c 1 \
    --set full --import-source no -f -o "$rep" \
    $B ops --bwd --models 1B --ops linear_swiglu_bwd --rounds 1 --tokens 16384 > "$rep.log" 2>&1 || { echo "$kind failed"; tail -5 "$rep.log"; }
  "$ncu" --import "$rep.ncu-rep" --page details > "$OUT/r/swiglu_bwd_1B.$kind.details.txt" 2>&1
  "$ncu" --import "$rep.ncu-rep" --page source --csv --print-source sass > "$OUT/r/swiglu_bwd_1B.$kind.sass.csv" 2>&1
  echo "== $kind"
  grep -E "^\s+(Duration|Memory Throughput|DRAM Throughput|L2 Hit|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Dynamic Shared)" \
    "$OUT/r/swiglu_bwd_1B.$kind.details.txt" | head -14
done
gzip "$OUT"/r/*.sass.csv
