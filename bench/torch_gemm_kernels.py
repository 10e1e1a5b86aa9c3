# SPDX-License-Identifier: BSD-3-Clause
"""Which cuBLASLt kernel PyTorch's F.linear launches, and how fast, at the shapes where it beats
CODA's plain GEMM (ops-py's `coda gemm / matmul` column): the kernel name spells its tile, cluster
and schedule, i.e. what CODA's kernel menu would need to match it.

    python3 bench/torch_gemm_kernels.py [M,N,K ...]      (default: the shapes below)
"""
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

# (M, N, K) forward shapes: 1B o / qkv / down / gate_up at M = 16384, 8B o at 9216 and 16384.
SHAPES = [(16384, 2048, 2048), (16384, 3072, 2048), (16384, 2048, 8192), (16384, 16384, 2048),
          (9216, 4096, 4096), (16384, 4096, 4096)]
SETS = 4  # operand sets rotated, so that no call finds its operands in L2


def time_ms(fn, iters: int = 20) -> float:
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(3):
        fn(i)
    start.record()
    for i in range(iters):
        fn(i)
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters


def kernels_of(fn) -> list[str]:
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(0)
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def main() -> None:
    shapes = [tuple(int(x) for x in s.split(",")) for s in sys.argv[1:]] or SHAPES
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    for m, n, k in shapes:
        sets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                 torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5)
                for _ in range(SETS)]

        def run(i: int) -> torch.Tensor:
            return F.linear(*sets[i % SETS])

        ms = time_ms(run)
        print(f"{m}x{n}x{k}: {ms:.3f} ms ({2.0 * m * n * k / ms / 1e9:.0f} TFLOP/s)  "
              + "; ".join(kernels_of(run)), flush=True)
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
