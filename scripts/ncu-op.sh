#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Nsight Compute reports of one op's fused kernel and of CODA's plain GEMM at the same shape, both
# taken from one `coda-bench ops` run (same operands, same choice rule), so that the two differ only
# by the epilogue. For finding what bounds an epilogue (docs/benchmarks.md §8); not a timing source:
# ncu replays each kernel, so read its stall and throughput sections, never its durations as results.
#   scripts/ncu-op.sh BIN OUT OP MODEL TOKENS NODE [PASS]
#     BIN   folder holding coda-bench
#     NODE  a regex naming the fused kernel by one of its program's nodes, as the kernel's
#           demangled name spells it (a program's own name does not appear there: the kernel
#           is named by its EVT's node types), e.g. OnlineLseNode, GatedPairStoreNode, PairDot
#           (the SwiGLU backward)
#     PASS  fwd (default) or bwd: which pass of `coda-bench ops` holds OP
# Writes OUT/<OP>_<MODEL>.{fused,plain}.{ncu-rep,details.txt,sass.csv,log}.
set -uo pipefail
bin=$1 out=$2 op=$3 model=$4 tokens=$5 node=$6 pass=${7:-fwd}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
[ -x "$ncu" ] || { echo "ncu-op: ncu not found"; exit 1; }
mkdir -p "$out"
for kind in fused plain; do
  # The plain GEMM's epilogue is CODA's ScaledAcc (cutlass::epilogue::fusion::ScaledAcc<...>).
  pattern=$node
  [ "$kind" = fused ] || pattern="fusion::ScaledAcc<"

  rep="$out/${op}_${model}.$kind"
  # METHOD.md: leave the clocks alone (--clock-control none).
  "$ncu" --clock-control none --kernel-name-base demangled -k "regex:$pattern" -c 1 \
    --set full --import-source no -f -o "$rep" \
    "$bin/coda-bench" ops "--$pass" --models "$model" --ops "$op" --rounds 1 --tokens "$tokens" \
    > "$rep.log" 2>&1 || { echo "ncu-op: $kind failed"; tail -5 "$rep.log"; continue; }
  "$ncu" --import "$rep.ncu-rep" --page details > "$rep.details.txt" 2>&1
  "$ncu" --import "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.sass.csv" 2>&1
  echo "== $op $model $kind"
  grep -E "^\s+(Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc Active|No Eligible)" \
    "$rep.details.txt" | head -12
done
