"""For the next session, under Nsight Compute (next_dram_vs_swizzle.sh): the 1B SwiGLU backward at
M = 16384 forced onto each Pingpong 128x128 candidate (2 rasters x 4 swizzles), one launch each, in
this order, so that ncu's per-kernel DRAM bytes say how the operands' re-reads fall with the band
width. Tests the twenty-eighth session's reading (bench/RESULTS.md): ~0.7 GB of operand reads
against 0.1 GB of operands, B streamed once per band of 8 clusters."""
import torch

from coda import ops
from coda._native import C
from coda.bench.op_cases import MODELS, Operands, cases

case = next(c for c in cases(MODELS["1B"]) if c.name == "linear_swiglu_bwd")
t = Operands(MODELS["1B"], 16384, torch.device("cuda"))
for name in case.inputs:
    t[name]
candidates = C.program_candidates()
for i in C.op_candidates(case.op_key):
    config, raster, swizzle = candidates[i]
    if config != "pingpong_128x128_2x1":
        continue
    with ops.forced_kernel(case.op_key, i):
        case.coda(t)
    torch.cuda.synchronize()
    print(f"launch: {config} {raster} swizzle {swizzle}", flush=True)
