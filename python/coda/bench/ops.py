# SPDX-License-Identifier: BSD-3-Clause
"""Every fused op against its baselines in one process: `python -m coda.bench ops`.

For each op, model and token count, on the same operand sets (rotated the same way by every
variant, enough of them to overflow the L2), in interleaved rounds (timing.py):
  coda          the fused op through the Python package
  torch_matmul  PyTorch's GEMM of the op's shape (cuBLAS): the speed of light of a fused op
  coda_gemm     CODA's plain GEMM of that shape (the same mainloop without the epilogue;
                forward-layout ops only; --gemm-kernel forces its kernel, to time a plain-GEMM
                config against matmul in the op benchmark's harness and clock state)
  eager         the stock PyTorch computation of the same outputs from the same inputs
  compile       torch.compile of it (dynamic shapes, default mode)
  torch_gemms   where an op is held to several GEMMs (CE forward+backward: its three), those
                GEMMs by PyTorch's matmul
Before timing, CODA's outputs and the eager ones are checked against float64 (op_cases.py): a row
whose check fails is reported as such and its ratios do not count.

M: --tokens (default 16384) and, with --random-tokens, one M drawn uniformly from [4096, 32768]
(printed and recorded), so that no result rests on a table's exact shape.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F

from coda.bench import report
from coda.bench.clocks import GpuClocks
from coda.bench.op_cases import FLOAT64, MODELS, PYTORCH, Case, Model, Operands, cases, compiled
from coda.bench.timing import Heater, Stopwatch, describe_error, interleaved_rounds

VARIANTS = ("coda", "torch_matmul", "coda_gemm", "eager", "compile", "torch_gemms")
SAMPLED_ROWS = 256


def add_run_arguments(p: argparse.ArgumentParser, tokens_help: str) -> None:
    """The arguments start_run reads, shared by `python -m coda.bench ops` and `tune`."""
    p.add_argument("--tokens", default="16384", help=tokens_help)
    p.add_argument("--random-tokens", action="store_true",
                   help="add one M drawn from [4096, 32768] (printed with its seed)")
    p.add_argument("--seed", type=int, default=None, help="the run's seed (default: from the clock)")
    p.add_argument("--sustained", type=float, default=0.0, metavar="MS",
                   help="time each variant right after MS ms of sustained GEMM load (the power-capped "
                        "clock of a training step; timing.Heater); 0: as the GPU comes")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m coda.bench ops", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="8B", help=f"comma-separated, of {','.join(MODELS)}")
    p.add_argument("--ops", default="all", help="comma-separated op names (default: all)")
    add_run_arguments(p, "comma-separated M values")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="comma-separated variants to time (coda and torch_matmul always run); leaving "
                        "eager and compile out times the GEMM-like variants alone")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--gemm-kernel", default=None, metavar="CONFIG[,RASTER,SWIZZLE]",
                   help="the coda_gemm variant runs this plain-GEMM kernel instead of its table's choice "
                        "(e.g. coop_256x128_1x2,along_n,2; raster along_m, along_n or heuristic, "
                        "default heuristic, swizzle 1)")
    p.add_argument("--out", type=Path, default=Path("bench-out"))
    args = p.parse_args(argv)
    args.gemm_kernel_choice = None
    if args.gemm_kernel is not None:
        parts = args.gemm_kernel.split(",")
        if len(parts) not in (1, 3) or not parts[0]:
            p.error(f"--gemm-kernel: CONFIG or CONFIG,RASTER,SWIZZLE; got {args.gemm_kernel!r}")
        config, raster, swizzle = (parts + ["heuristic", "1"])[:3] if len(parts) == 1 else parts
        if raster not in ("along_m", "along_n", "heuristic") or swizzle not in ("1", "2", "4", "8"):
            p.error(f"--gemm-kernel: raster along_m, along_n or heuristic and swizzle 1, 2, 4 or 8; "
                    f"got {args.gemm_kernel!r}")
        args.gemm_kernel_choice = (config, raster, int(swizzle))
    return args


def _sample_rows(m: int, device) -> torch.Tensor:
    rows = torch.randperm(m)[: SAMPLED_ROWS - 1]
    return torch.cat((rows, torch.tensor([m - 1]))).unique().to(device)  # the last row always


def check(case: Case, t: Operands, coda_out: tuple, stock_out: tuple) -> dict:
    """{output: (coda error, stock error, bound)}; the contract holds when error ≤ bound."""
    coda_std = case.standard(t, coda_out)
    if case.check is not None:
        return case.check(t, coda_std, stock_out)
    rows = _sample_rows(t.m, t.device)
    ref = case.stock(t.float64_rows(case.inputs, rows), FLOAT64)
    result = {}
    for name, got, stock, r in zip(case.outputs, coda_std, stock_out, ref):
        e_c = float((got[rows].double() - r).abs().max())
        e_s = float((stock[rows].double() - r).abs().max())
        result[name] = (e_c, e_s, 2 * e_s)
    return result


def _operand_sets(case: Case, model: Model, m: int, device) -> list[Operands]:
    """As many sets as make three L2s, at least 2 and at most 8; each made in full by one call of
    every variant's inputs (the first set's size decides)."""
    def made():
        t = Operands(model, m, device)
        case.coda(t)
        for name in case.inputs + case.gemm:
            t[name]
        if case.gemms is not None:
            case.gemms(t)
        return t

    first = made()
    l2 = torch.cuda.get_device_properties(device).L2_cache_size if device.type == "cuda" else 0
    count = max(2, min(8, math.ceil(3 * l2 / max(first.nbytes(), 1))))
    return [first] + [made() for _ in range(count - 1)]


def _rotating(sets: list, fn) -> callable:
    """A timed step that runs fn on the next set each time (every variant rotates the same way)."""
    state = {"i": 0}

    def step(watch: Stopwatch) -> None:
        item = sets[state["i"] % len(sets)]
        state["i"] += 1
        with watch.region():
            fn(item)

    return step


def stock_inputs(case: Case, sets: list[Operands]) -> list[dict]:
    """Each set's arguments to the standard computation."""
    return [{n: t[n] for n in case.inputs} for t in sets]


def matmul_step(case: Case, gemm_ab: list) -> callable:
    """PyTorch's GEMM of the op's shape on each set's (A, B): the speed of light."""
    return _rotating(gemm_ab, (lambda p: torch.matmul(*p)) if case.dgrad else (lambda p: F.linear(*p)))


def stock_steps(case: Case, inputs: list[dict], compiled_stock) -> dict:
    """The standard computation in eager PyTorch and under torch.compile, on `inputs`."""
    return {"eager": _rotating(inputs, lambda i: case.stock(i, PYTORCH)),
            "compile": _rotating(inputs, compiled_stock)}


def bench_case(case: Case, compiled_stock, model_name: str, m: int, args, watch: Stopwatch, device) -> dict:
    model = MODELS[model_name]
    sets = _operand_sets(case, model, m, device)
    inputs = stock_inputs(case, sets)
    gemm_ab = [(t[case.gemm[0]], t[case.gemm[1]]) for t in sets]
    a, w = gemm_ab[0]
    mnk = [a.shape[0], w.shape[1] if case.dgrad else w.shape[0], a.shape[1]]

    stock_out = case.stock(inputs[0], PYTORCH)
    checks = check(case, sets[0], case.coda(sets[0]), stock_out)
    del stock_out
    passed = all(err <= bound for err, _, bound in checks.values())

    from coda import ops

    steps = {"coda": _rotating(sets, case.coda), "torch_matmul": matmul_step(case, gemm_ab),
             **stock_steps(case, inputs, compiled_stock)}
    if not case.dgrad:
        forced = args.gemm_kernel_choice

        def coda_gemm(p):
            if forced is None:
                return ops.linear(*p)
            with ops.forced_gemm_kernel(*forced):
                return ops.linear(*p)
        steps["coda_gemm"] = _rotating(gemm_ab, coda_gemm)
    if case.gemms is not None:
        steps["torch_gemms"] = _rotating(sets, case.gemms)
    wanted = set(args.variants.split(",")) | {"coda", "torch_matmul"}
    steps = {name: step for name, step in steps.items() if name in wanted}
    result = interleaved_rounds(steps, watch, rounds=args.rounds, iters=args.iters, warmup=args.warmup,
                                heat=args.heater, clocks=args.clocks)
    times = {v: result.median_ms(v) for v in VARIANTS}
    row = {"name": case.name, "shape": model_name, "M": m, "mnk": mnk, "sets": len(sets),
           "coda_ms": times["coda"], "kernel": kernel_ran(case),
           "gemm_kernel": args.gemm_kernel, "baseline": {v: times[v] for v in VARIANTS[1:]},
           "ratios": ratios(result.round_medians_ms, result.errors),
           "rounds_ms": result.round_medians_ms, **result.clock_record(), "errors": result.errors,
           "check": {k: {"coda_err": c, "stock_err": s, "bound": b} for k, (c, s, b) in checks.items()},
           "check_passed": passed}
    del sets, inputs, gemm_ab
    torch.cuda.empty_cache()
    return row


def median_mhz(row: dict, variant: str) -> float | None:
    mhz = [x for x in row.get("rounds_sm_mhz", {}).get(variant) or [] if x is not None]
    return statistics.median(mhz) if mhz else None


def kernel_ran(case: Case) -> str | None:
    """The kernel the op's last call on this thread ran, named as the tuner names its candidates
    (the table row, the nearest tuned M or the rule: what a row's figures timed); None before the
    op's first call and for a case of several ops."""
    from coda._native import C
    from coda.bench.tune import _describe  # tune imports this module

    try:
        choice = C.last_op_choice(case.op_key)
    except ValueError:  # no op of that name: the case runs several (CE forward + backward)
        return None
    return None if choice is None else _describe(choice)


RATIOS = (("coda", "torch_matmul"), ("coda", "coda_gemm"), ("coda_gemm", "torch_matmul"), ("coda", "compile"),
          ("coda", "eager"), ("coda", "torch_gemms"))


def round_ratio(rounds_ms: dict[str, list[float]], errors: dict[str, str], x: str, y: str) -> float | None:
    """x/y as the median of per-round ratios (the variants of one round ran under nearly the same
    clock, docs/benchmarks.md §3); None where either variant failed."""
    a, b = rounds_ms.get(x), rounds_ms.get(y)
    ok = a and b and len(a) == len(b) and x not in errors and y not in errors
    return statistics.median(p / q for p, q in zip(a, b)) if ok else None


def ratios(rounds_ms: dict[str, list[float]], errors: dict[str, str]) -> dict[str, float | None]:
    return {f"{x}/{y}": round_ratio(rounds_ms, errors, x, y) for x, y in RATIOS}


def not_run_row(name: str, model_name: str, m: int, why: str) -> dict:
    """The row of a case that could not run (e.g. out of memory at this M), so the table says so."""
    return {"name": name, "shape": model_name, "M": m, "coda_ms": None, "baseline": {},
            "ratios": {f"{x}/{y}": None for x, y in RATIOS}, "errors": {"case": why}, "check": {},
            "check_passed": False}


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def table(rows: list[dict]) -> str:
    lines = ["| op | model | M | coda ms | torch matmul ms | coda / matmul | coda / coda gemm | "
             "coda gemm / matmul | coda / compile | coda / eager | coda / its gemms | check | kernel | "
             "SM MHz coda / matmul / coda gemm |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        q = r["ratios"]
        if "case" in r["errors"]:
            verdict = "**not run**: " + r["errors"]["case"]
        else:
            verdict = "ok" if r["check_passed"] else "**FAILED**: " + ", ".join(
                k for k, v in r["check"].items() if v["coda_err"] > v["bound"])
        lines.append(f"| {r['name']} | {r['shape']} | {r['M']} | {_fmt(r['coda_ms'])} | "
                     f"{_fmt(r['baseline'].get('torch_matmul'))} | {_fmt(q['coda/torch_matmul'])} | "
                     f"{_fmt(q['coda/coda_gemm'])} | {_fmt(q['coda_gemm/torch_matmul'])} | "
                     f"{_fmt(q['coda/compile'])} | {_fmt(q['coda/eager'])} | "
                     f"{_fmt(q.get('coda/torch_gemms'))} | {verdict} | {r.get('kernel') or '—'} | "
                     f"{' / '.join(_fmt(median_mhz(r, v), 0) for v in ('coda', 'torch_matmul', 'coda_gemm'))} |")
    return "\n".join(lines)


def token_counts(tokens: str, random_tokens: bool, seed: int) -> list[int]:
    """The M values of a run: the comma-separated --tokens, and with --random-tokens one M drawn
    from [4096, 32768] by the run's seed (printed, so the run can be repeated)."""
    counts = [int(x) for x in tokens.split(",") if x]
    if random_tokens:
        counts.append(random.Random(seed).randint(4096, 32768))
        print(f"random M = {counts[-1]} (--seed {seed})", flush=True)
    return counts


@dataclasses.dataclass
class Run:
    """What a GPU benchmark run (ops, tune) starts from: the device, the run's seed (drawn unless
    --seed, printed via the metadata), its M values, the stopwatch and the --sustained heater."""
    device: torch.device
    seed: int
    tokens: list[int]
    watch: Stopwatch
    heater: Heater | None
    clocks: GpuClocks | None


def start_run(args, prog: str) -> Run | None:
    """The common start of `python -m coda.bench ops|tune`: None (with a message) without a GPU."""
    if not torch.cuda.is_available():
        print(f"{prog}: needs a CUDA GPU", file=sys.stderr)
        return None
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    tokens = token_counts(args.tokens, args.random_tokens, seed)
    torch.manual_seed(seed)
    heater = Heater(device, args.sustained) if args.sustained > 0 else None
    return Run(device, seed, tokens, Stopwatch(device), heater, GpuClocks.open(device))


def run_metadata(run: Run, args, prog: str, argv: list[str], **method) -> dict:
    """The JSON header of `python -m coda.bench ops|tune`: the command and how it timed."""
    return report.run_metadata(run.device, ["python", "-m", "coda.bench", prog, *argv], rounds=args.rounds,
                               iters=args.iters, warmup=args.warmup, sustained_ms=args.sustained,
                               seed=run.seed, tokens=run.tokens,
                               clocks="nvml" if run.clocks is not None else None, **method)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    run = start_run(args, "coda.bench ops")
    if run is None:
        return 2
    # Every case compiles its own stock function (some share code objects): no silent fall back to
    # eager after the default 8 recompilations of one code object.
    torch._dynamo.config.cache_size_limit = 256
    device, tokens, watch, args.heater, args.clocks = run.device, run.tokens, run.watch, run.heater, run.clocks
    record = report.RunRecord(args.out / "ops.json", run_metadata(run, args, "ops", argv, sampled_rows=SAMPLED_ROWS))
    rows = record.rows
    for model_name in args.models.split(","):
        for case in cases(MODELS[model_name]):
            if args.ops != "all" and case.name not in args.ops.split(","):
                continue
            compiled_stock = compiled(case)  # once per op: dynamic shapes serve every M
            for m in tokens:
                try:
                    row = bench_case(case, compiled_stock, model_name, m, args, watch, device)
                except torch.cuda.OutOfMemoryError as error:  # one shape too big must not end the run
                    torch.cuda.empty_cache()
                    row = not_run_row(case.name, model_name, m, describe_error(error))
                record.add(row)
                print(table([row]).splitlines()[-1], flush=True)
    record.finish()
    (args.out / "ops.md").write_text(table(rows) + "\n")
    print(table(rows))
    return 0 if all(r["check_passed"] and not r["errors"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
