# SPDX-License-Identifier: BSD-3-Clause
"""One launch of each kernel that docs/gemm-gap.md compares, for Nsight Compute ("Measured: the
mainloop per cycle"):
PyTorch's matmul (cuBLASLt's nvjet), CODA's plain GEMM in each tile config, and a fused op (QK-norm
RoPE by default) in the configs its program is compiled for, all on the same operands.

    ncu --clock-control none --nvtx --nvtx-include "ncu/" --section ... \
        python3 bench/ncu_gemm_gap.py [--model 8B] [--m 16384] [--op linear_qknorm_rope] [--only WORDS]

Each profiled launch sits alone in an NVTX range `ncu` after an unprofiled warm-up of the same
call, so the report holds exactly one kernel per variant, in the order this script prints them.
The fused op's operands come from coda.bench.op_cases (realistic side inputs), its GEMM's
operands are the ones the plain GEMMs and matmul get. Outputs are not checked here: the op and
GEMM benchmarks check the same kernels.
"""
from __future__ import annotations

import argparse
import sys

import torch
import torch.nn.functional as F

PLAIN = [("coop_128x256_2x1", "along_n", 4), ("pingpong_128x128_2x1", "along_n", 2),
         ("pingpong_128x192_2x1", "along_n", 1), ("ovcoop_128x256_2x1", "along_n", 4)]
FUSED = [("pingpong_128x128_2x1", "along_n", 2), ("pingpong_128x192_2x1", "along_n", 1),
         ("coop_128x256_2x1", "along_n", 4), ("ovcoop_128x256_2x1", "along_n", 4)]


class Profiler:
    """Runs a variant once unprofiled (warm-up), then once inside the NVTX range ncu includes, and
    numbers the profiled ones in report order; skips a variant whose label lacks an `only` word."""

    def __init__(self, only: list[str]):
        self.only, self.count = only, 0

    def __call__(self, label: str, fn) -> None:
        if not all(word in label for word in self.only):
            return
        fn()
        torch.cuda.synchronize()
        print(f"  kernel {self.count}: {label}", flush=True)
        self.count += 1
        torch.cuda.nvtx.range_push("ncu")
        fn()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="8B")
    p.add_argument("--m", type=int, default=16384)
    p.add_argument("--op", default="linear_qknorm_rope")
    p.add_argument("--only", default="", help="comma-separated words a variant's label must all contain")
    args = p.parse_args(argv)
    profiled = Profiler([word for word in args.only.split(",") if word])
    if not torch.cuda.is_available():
        print("ncu_gemm_gap: needs a CUDA GPU", file=sys.stderr)
        return 2
    from coda import ops
    from coda._native import C
    from coda.bench.op_cases import MODELS, Operands, cases

    case = next((c for c in cases(MODELS[args.model]) if c.name == args.op), None)
    if case is None:
        p.error(f"--op: no benchmarked op {args.op!r}")
    t = Operands(MODELS[args.model], args.m, torch.device("cuda"))
    a, w = t[case.gemm[0]], t[case.gemm[1]]
    print(f"{args.model} {args.op} M = {args.m}: GEMM {tuple(a.shape)} x {tuple(w.shape)}"
          f"{' (dgrad)' if case.dgrad else ''}")
    gemm = (lambda: a @ w) if case.dgrad else (lambda: F.linear(a, w))
    profiled("torch matmul", gemm)
    if not case.dgrad:
        for config in PLAIN:
            def plain(config=config):
                with ops.forced_gemm_kernel(*config):
                    return ops.linear(a, w)
            try:
                profiled("coda plain " + " ".join(map(str, config)), plain)
            except ValueError as error:  # a config not compiled as a plain GEMM
                print(f"  skipped plain {config}: {error}")
    candidates = C.program_candidates()
    compiled = set(C.op_candidates(case.op_key))
    for config in FUSED:
        index = candidates.index(config) if config in candidates else -1
        if index not in compiled:
            print(f"  skipped {args.op} {config}: not compiled for it")
            continue

        def fused(index=index):
            with ops.forced_kernel(case.op_key, index):
                return case.coda(t)
        profiled(f"{args.op} " + " ".join(map(str, config)), fused)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
