# SPDX-License-Identifier: BSD-3-Clause
"""Where CODA's plain GEMM loses to cuBLAS's: per tile or per k-block. One M × N, a sweep of K.

    python -m coda.bench ksweep [--m 16384] [--n 6144] [--ks 1024,2048,4096,8192,16384]
                                [--rounds 5] [--iters 5] [--sustained MS] [--config CONFIG,RASTER,SWIZZLE]
                                [--out bench-out]

Why: at the boost clock CODA's GEMM trails PyTorch's matmul by 4–16 %, at the power cap it keeps
level (docs/gemm-gap.md). At fixed M and N a GEMM's time is t(K) = a + b·K: `a` the cost that does
not grow with K (the epilogue, the tile transitions, the last wave), `b` the mainloop's time per
unit of depth. Fitting both for CODA and for matmul in the same rounds says which of the two holds
the gap. It needs a clock that stays put over the sweep: on the machines of the 44th session the
clock fell from 1980 to ~1450 MHz as K grew, so the fit mixed two states, and docs/gemm-gap.md
counts cycles under Nsight Compute instead (bench/ncu_gemm_gap.py).

Each K gets its own operand sets (randn bf16, rotated so that no call finds its operands in L2,
the same way for both variants), CODA's output is checked against matmul's on sampled rows against
float64 before timing (numerics contract: ≤ 2 × matmul's own error), and the two run in
interleaved rounds with each block's SM clock recorded (coda.bench.clocks). `--config` forces
CODA's kernel (as `coda.ops.forced_gemm_kernel`), else the GPU's table and rule choose.
Output: a table, the fit per variant, and DIR/ksweep.json (rows in the layout of ops.json).
"""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F

from coda.bench import report
from coda.bench.clocks import GpuClocks
from coda.bench.ops import _rotating, median_mhz
from coda.bench.timing import Heater, Stopwatch, interleaved_rounds

SAMPLED_ROWS = 64


def fit_line(ks: Sequence[float], ms: Sequence[float]) -> tuple[float, float]:
    """Least-squares (a, b) of ms ≈ a + b·k (at least two distinct k)."""
    n = len(ks)
    mean_k, mean_t = sum(ks) / n, sum(ms) / n
    var = sum((k - mean_k) ** 2 for k in ks)
    if n < 2 or var == 0:
        raise ValueError("fit_line: needs at least two distinct K")
    b = sum((k - mean_k) * (t - mean_t) for k, t in zip(ks, ms)) / var
    return mean_t - b * mean_k, b


def operand_sets(m: int, n: int, k: int, device) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(A [m, k], W [n, k]) pairs, enough of them to fill three L2s (2 to 8)."""
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    count = max(2, min(8, math.ceil(3 * l2 / (2 * (m + n) * k))))
    return [(torch.randn(m, k, device=device, dtype=torch.bfloat16),
             torch.randn(n, k, device=device, dtype=torch.bfloat16) / math.sqrt(k)) for _ in range(count)]


def check(coda_linear, a: torch.Tensor, w: torch.Tensor) -> dict:
    """CODA's and matmul's max error on sampled rows against float64, and the contract's bound."""
    rows = torch.randperm(a.shape[0], device=a.device)[:SAMPLED_ROWS]
    ref = a[rows].double() @ w.double().T
    coda_err = float((coda_linear(a, w)[rows].double() - ref).abs().max())
    torch_err = float((F.linear(a, w)[rows].double() - ref).abs().max())
    return {"coda_err": coda_err, "stock_err": torch_err, "bound": 2 * torch_err,
            "passed": coda_err <= 2 * torch_err}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m coda.bench ksweep", description=__doc__.split("\n")[0])
    p.add_argument("--m", type=int, default=16384)
    p.add_argument("--n", type=int, default=6144, help="output features (8B QKV: 6144)")
    p.add_argument("--ks", default="1024,2048,4096,8192,16384")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--sustained", type=float, default=0.0,
                   help="ms of GEMM load before each timed block (the power-capped state)")
    p.add_argument("--config", default=None,
                   help="CONFIG,RASTER,SWIZZLE forced for CODA's GEMM (coda.ops.forced_gemm_kernel)")
    p.add_argument("--out", type=Path, default=Path("bench-out"))
    args = p.parse_args(argv)
    if args.m <= 0 or args.n <= 0:
        p.error(f"--m and --n must be positive; got {args.m} and {args.n}")
    try:
        args.ks = [int(k) for k in args.ks.split(",")]
    except ValueError:
        p.error(f"--ks takes comma-separated integers; got {args.ks!r}")
    if not args.ks or min(args.ks) <= 0:
        p.error(f"--ks takes positive depths; got {args.ks}")
    if args.config is not None:
        fields = args.config.split(",")
        if len(fields) != 3 or not fields[2].isdigit():
            p.error(f"--config takes CONFIG,RASTER,SWIZZLE (e.g. coop_128x256_2x1,along_n,4); got {args.config!r}")
        args.config = (fields[0], fields[1], int(fields[2]))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("coda.bench ksweep: needs a CUDA GPU", file=sys.stderr)
        return 2
    from coda import ops

    device = torch.device("cuda")
    forced = args.config

    def coda_linear(a, w):
        if forced is None:
            return ops.linear(a, w)
        with ops.forced_gemm_kernel(*forced):
            return ops.linear(a, w)

    watch, clocks = Stopwatch(device), GpuClocks.open(device)
    heater = Heater(device, args.sustained) if args.sustained > 0 else None
    record = report.RunRecord(args.out / "ksweep.json", report.run_metadata(
        device, ["python", "-m", "coda.bench", "ksweep", *argv], rounds=args.rounds, iters=args.iters,
        warmup=args.warmup, sustained_ms=args.sustained, config=list(forced) if forced else None,
        clocks="nvml" if clocks is not None else None))
    print(f"M = {args.m}, N = {args.n}; CODA's kernel: {forced or 'the table and rule'}")
    print(f"{'K':>6} {'coda ms':>9} {'matmul ms':>9} {'coda/matmul':>11}  MHz coda / matmul  check")
    for k in args.ks:
        sets = operand_sets(args.m, args.n, k, device)
        verdict = check(coda_linear, *sets[0])
        steps = {"coda": _rotating(sets, lambda p: coda_linear(*p)),
                 "torch_matmul": _rotating(sets, lambda p: F.linear(*p))}
        result = interleaved_rounds(steps, watch, rounds=args.rounds, iters=args.iters, warmup=args.warmup,
                                    heat=heater, clocks=clocks)
        coda_ms, matmul_ms = result.median_ms("coda"), result.median_ms("torch_matmul")
        row = {"name": "gemm_ksweep", "shape": f"{args.m}x{args.n}", "M": args.m, "mnk": [args.m, args.n, k],
               "sets": len(sets), "coda_ms": coda_ms, "baseline": {"torch_matmul": matmul_ms},
               "rounds_ms": result.round_medians_ms, **result.clock_record(), "errors": result.errors,
               "check": {"D": {key: verdict[key] for key in ("coda_err", "stock_err", "bound")}},
               "check_passed": verdict["passed"]}
        record.add(row)
        med = {v: median_mhz(row, v) for v in ("coda", "torch_matmul")}
        ratio = coda_ms / matmul_ms if coda_ms and matmul_ms else float("nan")
        print(f"{k:>6} {coda_ms or float('nan'):>9.3f} {matmul_ms or float('nan'):>9.3f} {ratio:>11.3f}  "
              f"{med['coda']} / {med['torch_matmul']}  {'ok' if verdict['passed'] else 'FAILED'}")
        del sets
        torch.cuda.empty_cache()
    timed = [r for r in record.rows if r["coda_ms"] and r["baseline"]["torch_matmul"]]
    if len({r["mnk"][2] for r in timed}) >= 2:
        ks_timed = [r["mnk"][2] for r in timed]
        for name, times in (("coda", [r["coda_ms"] for r in timed]),
                            ("torch_matmul", [r["baseline"]["torch_matmul"] for r in timed])):
            a, b = fit_line(ks_timed, times)
            record.run.setdefault("fit", {})[name] = {"ms": a, "ms_per_1024_k": 1024 * b}
            print(f"fit {name}: t = {a:.4f} ms + {1024 * b:.4f} ms per 1024 of K")
    record.finish()
    print(f"wrote {args.out / 'ksweep.json'}")
    return 0 if all(r["check_passed"] for r in record.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
