# SPDX-License-Identifier: BSD-3-Clause
"""Is a fused op bound by its host path or by the GPU? Per call, with operands hot in L2:
  host   CPU time to enqueue one call while a sleep kernel keeps the GPU busy (nothing waits)
  gpu    GPU time per call of calls queued behind that sleep (events around them): the kernels alone
  eager  back-to-back calls as a training step runs them (roughly the larger of the two)
for PyTorch's matmul, CODA's plain GEMM, linear_residual_rms and PyTorch's matmul + add, at the 1B
and 8B o-projection shapes. Usage (a GPU machine, the package installed):
    python3 bench/host_vs_gpu.py
Not a ratio benchmark (no rotation, no output check): `python -m coda.bench ops` is that."""
import time

import torch

from coda import ops

CALLS = 50
SLEEP_CYCLES = int(2e9)  # ~1 s at H100 clocks: longer than enqueueing CALLS calls


def _event_us(fn, behind_sleep: bool) -> float:
    """GPU µs per call between two events around CALLS calls, queued behind a sleep kernel (the
    kernels alone) or not (as eager code runs them)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if behind_sleep:
        torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    for _ in range(CALLS):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / CALLS * 1e3


def per_call_us(fn) -> tuple[float, float, float]:
    """(host, gpu, eager) µs per call of `fn`."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    t0 = time.perf_counter()
    for _ in range(CALLS):
        fn()
    host = (time.perf_counter() - t0) / CALLS * 1e6
    torch.cuda.synchronize()
    return host, _event_us(fn, behind_sleep=True), _event_us(fn, behind_sleep=False)


def main() -> None:
    dev = torch.device("cuda")

    def bf16(*shape, scale=1.0):
        return (torch.randn(*shape, device=dev) * scale).to(torch.bfloat16)

    print(torch.cuda.get_device_name(), flush=True)
    for m in (6225, 16384):
        for hidden, label in ((2048, "1B o"), (4096, "8B o")):
            a, w, r = bf16(m, hidden), bf16(hidden, hidden, scale=0.02), bf16(m, hidden)
            gamma = 1 + 0.1 * bf16(hidden)
            for name, fn in (("torch matmul", lambda: a @ w.t()),
                             ("coda.linear", lambda: ops.linear(a, w)),
                             ("linear_residual_rms", lambda: ops.linear_residual_rms(a, w, r, gamma)),
                             ("torch matmul + add", lambda: torch.add(a @ w.t(), r))):
                host, gpu, eager = per_call_us(fn)
                print(f"{label} M={m} {name:22s} host {host:7.1f} us  gpu {gpu:7.1f} us  "
                      f"eager {eager:7.1f} us", flush=True)


if __name__ == "__main__":
    main()
