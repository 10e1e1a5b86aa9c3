#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Nsight Compute report of one kernel choice of a fused op, or of its plain twin, as
# `coda-bench tune-ops --epilogue-cost --rounds 1` launches them (docs/benchmarks.md §8). That run's
# warm-up launches cuBLAS, the op's candidates (24; 16 for the QK-norm ops), then their plain
# twins, once each and in this order: Cooperative along M swizzle 1, 2, 4, 8, along N 1, 2, 4, 8,
# then Pingpong 128x128 the same, then Pingpong 128x192 (not the QK-norm ops) the same, then the
# overlapped Cooperative (ovcoop, where its program compiles it) the same. So
# REGEX picks the schedule and the kind and SKIP the candidate, e.g. the Cooperative SwiGLU along N
# swizzle 8 and its twin:
#   scripts/ncu-candidate.sh BIN OUT coop_fused linear_swiglu 1B 'Cooperative.*GatedPairStoreNode' 7
#   scripts/ncu-candidate.sh BIN OUT coop_twin  linear_swiglu 1B 'Cooperative.*fusion::ScaledAcc<' 7
# Writes OUT/TAG.{details.txt,sass.csv,log}; compare two sass.csv with scripts/ncu_sass_diff.py.
# The tile's operand traffic (docs/design.md §10.3): compare "L2 Cache Throughput" of the Pingpong
# 128x128 and 128x192 twins along N swizzle 2 of linear_rope 1B ('Pingpong.*fusion::ScaledAcc<', 5 and 13).
# Clocks are left alone (the device's METHOD.md); read stalls and traffic, not durations.
set -uo pipefail
bin=$1 out=$2 tag=$3 op=$4 model=$5 regex=$6 skip=$7
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
[ -x "$ncu" ] || { echo "ncu-candidate: ncu not found"; exit 1; }
mkdir -p "$out"
rep="$out/$tag"
"$ncu" --clock-control none --kernel-name-base demangled -k "regex:$regex" --launch-skip "$skip" \
  -c 1 --set full --import-source no -f -o "$rep" \
  "$bin/coda-bench" tune-ops --epilogue-cost --models "$model" --ops "$op" --rounds 1 \
  > "$rep.log" 2>&1 || { echo "ncu-candidate: $tag failed"; tail -5 "$rep.log"; exit 1; }
"$ncu" --import "$rep.ncu-rep" --page details > "$rep.details.txt" 2>&1
"$ncu" --import "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.sass.csv" 2>&1
rm -f "$rep.ncu-rep"
echo "== $tag"
grep -E "^\s+(Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Registers Per|L2 Hit Rate |Issue Slots Busy|SM Frequency)" \
  "$rep.details.txt" | head -9
