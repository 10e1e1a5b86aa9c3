# SPDX-License-Identifier: BSD-3-Clause
"""Host time per op call: what the Python side (custom-op dispatch, argument conversion, output
allocation) adds before the kernel is queued. Each op runs many times on tiny tensors with no
synchronisation inside the loop, so the GPU keeps up and the wall time per call is host time.
torch.add on the same tensors is the yardstick of one bare PyTorch op. The target is ≤ 15 µs."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def _per_call_us(fn, calls: int) -> float:
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def _residual_rms_parts(a, w, r, nw, x, h, stats, calls: int) -> dict[str, float]:
    """Where linear_residual_rms's host time goes, each part timed alone: the wrapper's argument
    checks, its output allocation, the conversion of its 7 tensors to C++ views, and the C++ call
    itself on views made once (validation, kernel choice, TMA descriptors, launch), with the plain
    GEMM's C++ call as its yardstick."""
    from coda import ops
    from coda._native import C, stream, view

    m, n = a.shape[0], w.shape[0]
    views = [view(t) for t in (x, h, stats, a, w, r, nw)]
    gemm_views = [view(t) for t in (x, a, w)]
    ws = ops._workspace(a, C.gemm_workspace_bytes(*gemm_views))
    s = stream(a)
    return {
        "residual_rms part: argument checks": _per_call_us(
            lambda: ops._require_cuda("linear_residual_rms", a=a, weight=w, residual=r, norm_weight=nw), calls),
        "residual_rms part: outputs (2 empty, 1 zeros)": _per_call_us(
            lambda: (ops._empty(a, m, n), ops._empty(a, m, n), ops._stats_buffer(a, m, n)), calls),
        "residual_rms part: 7 views + stream": _per_call_us(
            lambda: ([view(t) for t in (x, h, stats, a, w, r, nw)], stream(a)), calls),
        "residual_rms part: C++ call on ready views": _per_call_us(
            lambda: C.linear_residual_rms(*views, s), calls),
        "plain GEMM: C++ call on ready views": _per_call_us(
            lambda: C.gemm(*gemm_views, ws.data_ptr(), ws.numel(), s), calls),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m coda.bench overhead")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    args = parser.parse_args(argv)
    from coda import ops
    from coda.nn import layout

    m, k, heads, kv, hd = 256, 256, 4, 2, 64
    n = (heads + 2 * kv) * hd
    bf = dict(device="cuda", dtype=torch.bfloat16)
    a, w, r, nw = torch.randn(m, k, **bf), torch.randn(k, k, **bf), torch.randn(m, k, **bf), torch.randn(k, **bf)
    x, h, stats = ops.linear_residual_rms(a, w, r, nw)
    w_qkv, w_gu = torch.randn(n, k, **bf), torch.randn(2 * k, k, **bf)
    pos = torch.arange(m, device="cuda", dtype=torch.int32)
    freqs = layout.rope_frequencies(heads, kv, hd, 5e5, None, "cuda")
    qkv, d_qkv = torch.randn(m, n, **bf), torch.randn(m, n, **bf)
    cases = {
        "torch.add (yardstick)": lambda: torch.add(a, r),
        "torch.matmul (yardstick)": lambda: torch.matmul(a, w),
        "linear_residual_rms": lambda: ops.linear_residual_rms(a, w, r, nw),
        "linear_rmsnorm_rope": lambda: ops.linear_rmsnorm_rope(h, w_qkv, stats, k, 1e-5, pos, freqs),
        "linear_rmsnorm_swiglu": lambda: ops.linear_rmsnorm_swiglu(h, w_gu, stats, k, 1e-5, True),
        "rope_bwd": lambda: ops.rope_bwd(qkv, d_qkv, pos, freqs),
    }
    rows = {name: _per_call_us(fn, args.calls) for name, fn in cases.items()}
    rows.update(_residual_rms_parts(a, w, r, nw, x, h, stats, args.calls))
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "calls": args.calls}
    (args.out / "overhead.json").write_text(json.dumps({**meta, "host_us_per_call": rows}, indent=1))
    print("| op | host µs per call |\n| --- | --- |")
    for name, us in rows.items():
        print(f"| {name} | {us:.1f} |")
    return 0
