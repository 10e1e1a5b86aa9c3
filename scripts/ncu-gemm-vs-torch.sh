#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Nsight Compute reports of PyTorch's GEMM (cuBLASLt, F.linear) and CODA's plain GEMM
# (coda.ops.linear, the GPU table's choice) on one forward shape, in one process on the same operands:
# where PyTorch's kernel beats CODA's (the 1B small-K shapes, bench/RESULTS.md), what differs
# inside — threads, registers, shared memory, stages, tensor-pipe activity, stall reasons, DRAM.
# Not a timing source (ncu replays each kernel, clocks left alone as METHOD.md asks).
#   scripts/ncu-gemm-vs-torch.sh OUT M N K
# Needs the installed coda package. Writes OUT/{torch,coda}.{ncu-rep,details.txt,log}.
set -uo pipefail
out=$1 m=$2 n=$3 k=$4
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
[ -x "$ncu" ] || { echo "ncu-gemm-vs-torch: ncu not found"; exit 1; }
mkdir -p "$out"
prog=$(mktemp --suffix=.py)
cat > "$prog" <<PY
import torch, torch.nn.functional as F, coda
a = torch.randn($m, $k, device="cuda", dtype=torch.bfloat16)
w = torch.randn($n, $k, device="cuda", dtype=torch.bfloat16) / $k ** 0.5
for _ in range(3):
    ref = F.linear(a, w); got = coda.ops.linear(a, w)
torch.cuda.synchronize()
print("max |coda - torch| / max |torch|:", ((got - ref).abs().max() / ref.abs().max()).item())
PY
# The third launch of each (two skipped as warm-up), by kernel name: cuBLASLt's nvjet/sm90
# kernels, CODA's CUTLASS GemmUniversal with the ScaledAcc epilogue.
for who in torch coda; do
  pattern="nvjet|sm90_xmma|cutlass_"
  [ "$who" = coda ] && pattern="fusion::ScaledAcc<"
  rep="$out/$who"
  "$ncu" --clock-control none --kernel-name-base demangled -k "regex:$pattern" -s 2 -c 1 \
    --set full --import-source no -f -o "$rep" python3 "$prog" > "$rep.log" 2>&1 \
    || { echo "ncu-gemm-vs-torch: $who failed"; tail -5 "$rep.log"; continue; }
  "$ncu" --import "$rep.ncu-rep" --page details > "$rep.details.txt" 2>&1
  echo "== $who ${m}x${n}x${k}"
  grep -E "^\s+(Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Block Size|Grid Size|Cluster Size|Dynamic Shared|Achieved Occupancy|L2 Hit Rate|Issue Slots Busy)" \
    "$rep.details.txt" | head -14
  grep -m1 -oE "(nvjet|sm90_xmma)[A-Za-z0-9_]*" "$rep.details.txt"
done
rm -f "$prog"
