# SPDX-License-Identifier: BSD-3-Clause
"""Where a layer's time goes: the GPU kernels of one decoder layer's forward and backward, per variant.

    python -m coda.bench kernels [--size 8B] [--variants coda,floor,hf_compile,liger] [--iters 5]
                                 [--m 16384] [--top 25] [--out bench-out]

Why: the layer benchmark (layer.py) says how much slower or faster a variant is than the floor
(the layer's GEMMs and SDPA alone); this one says which kernels make the difference. Each variant
runs the layer benchmark's own problem (layer.make_problem, same weights and data) through
`--warmup` untimed forward+backward iterations, then `--iters` under torch.profiler; a kernel's
time is its CUDA time summed over the profiled iterations, divided by `--iters`. Kernels are
grouped by name (templated names cut to their first 120 characters). The profiler's own overhead
inflates wall time but not kernel time, so the wall time per iteration is taken before, without
the profiler (CUDA events around `--iters` iterations back to back); wall minus the kernel sum
estimates the time the GPU spent idle (one stream: kernels do not overlap), to about ±1 ms at 8B
because the profiled and unprofiled runs see different clocks — `--trace` shows the gaps
themselves (the twenty-second session found 0.14 ms a CODA iteration there). Each of the two runs
records the SM clock it ran at (NVML, sampled from when its iterations are enqueued until they
finish, coda.bench.clocks): a kernel's time is a clock's, and CODA's GEMMs and cuBLAS's scale
differently with it (the forty-third session's profile, unclocked, could not say which state it
had measured; docs/design.md §10.4). Beside it, the
host's CUDA runtime calls that can block (synchronizations, cudaMalloc/cudaFree, synchronous
copies) — what makes a GPU idle between kernels. Output: a table per variant on stdout,
DIR/kernels.json (every kernel and blocking call of every variant).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import torch

from coda.bench import layer, report
from coda.bench.clocks import BlockClock, GpuClocks
from coda.bench.timing import Stopwatch
from coda.bench.variants import VARIANT_NAMES


# Names of CODA's epilogue nodes and functors, as they appear (length-prefixed) in a mangled name.
# CUTLASS's own EVT nodes (Sm90AuxLoad, Sm90ColReduction, ...) keep their name without "Sm90".
_EPILOGUE_NAME = re.compile(r"\w+(?:Fn|Node|Gate|GradGate|GradUp|Rstd|Dot|Grad)$|Sm90(?:Aux|Row|Col)\w+$")


def _identifiers(mangled: str) -> list[str]:
    """The length-prefixed identifiers of an Itanium-mangled name ("...13RopePairsNode...")."""
    names = []
    for match in re.finditer(r"(?<!\d)(\d+)(?=[A-Za-z_])", mangled):
        start = match.end()
        names.append(mangled[start:start + int(match.group(1))])
    return names


def label(name: str) -> str:
    """A readable name: CUTLASS GEMM kernels by schedule, tile and the CODA epilogue nodes and
    functors in them (their mangled names run to thousands of characters and differ only deep
    inside); others cut to 120 characters."""
    if name.startswith("_ZN7cutlass13device_kernel"):
        schedule = "pingpong" if "Pingpong" in name else "coop" if "Cooperative" in name else "gemm"
        mma = re.search(r"MMA_(\d+)x(\d+)x16", name)
        tile_n = f" N{mma.group(2)}" if mma else ""
        nodes = dict.fromkeys(n.removeprefix("Sm90") for n in _identifiers(name) if _EPILOGUE_NAME.match(n))
        store = " (D reduce-added)" if "SM90_TMA_REDUCE_ADD" in name else ""
        return f"CODA {schedule}{tile_n}: {'+'.join(nodes) or 'plain'}{store}"
    return name if len(name) <= 120 else name[:117] + "..."


# CUDA runtime calls that can hold the host until the GPU catches up (then the GPU idles while the
# host launches again): the host-side events the profile reports beside the kernels.
_BLOCKING_CALLS = re.compile(r"cuda(?:Stream|Device|Event)Synchronize|cudaMalloc|cudaFree|cudaMemcpy(?!Async)"
                             r"|cudaHostAlloc|cudaStreamWaitEvent")


def clock_sampler(clocks: GpuClocks | None, watch: Stopwatch):
    """A call that returns the SM clock from then until the stream's enqueued work is done (None
    without NVML)."""
    return lambda: clocks.while_busy(watch.busy) if clocks is not None else None


def wall_ms(step, iters: int, sample_clock=lambda: None) -> tuple[float, BlockClock | None]:
    """Mean wall time of `iters` steps back to back (CUDA events, no profiler), and its clock."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        step()
    end.record()
    clock = sample_clock()
    end.synchronize()
    return start.elapsed_time(end) / iters, clock


def kernel_times(step, iters: int, trace: Path | None = None, sample_clock=lambda: None
                 ) -> tuple[dict[str, dict], dict[str, dict], BlockClock | None]:
    """({kernel name: {"ms": mean per iteration, "calls": launches per iteration}}, the same for
    the host's blocking CUDA runtime calls, the clock they ran at) of `iters` steps; the profiler's
    Chrome trace to `trace` when given (where the GPU idles between kernels, and what the host did
    meanwhile)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            step()
        clock = sample_clock()
        torch.cuda.synchronize()
    if trace is not None:
        prof.export_chrome_trace(str(trace))
    blocking: dict[str, dict] = defaultdict(lambda: {"ms": 0.0, "calls": 0})
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CPU and _BLOCKING_CALLS.match(event.name):
            blocking[event.name]["ms"] += event.cpu_time_total / 1e3 / iters
            blocking[event.name]["calls"] += 1
    totals: dict[str, dict] = defaultdict(lambda: {"ms": 0.0, "calls": 0})
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    for event in sorted(events, key=lambda e: e.time_range.start):  # first launch order
        entry = totals[label(event.name)]
        entry["ms"] += event.device_time / 1e3 / iters
        entry["calls"] += 1
    for entry in list(totals.values()) + list(blocking.values()):
        entry["calls"] = entry["calls"] / iters
    return dict(totals), dict(blocking), clock


def clock_record(clock: BlockClock | None) -> dict | None:
    """A clock as the JSON keeps it: median SM MHz and the share of samples the power or thermal
    limit held it down."""
    return None if clock is None else {"sm_mhz": clock.sm_mhz, "capped": clock.capped}


def clock_line(clocks: dict) -> str:
    """The printed line of a variant's two clocks ("unknown" where NVML gave none)."""
    def one(c):
        return "unknown" if c is None else f"{c['sm_mhz']:.0f} MHz ({100 * c['capped']:.0f} % capped)"
    return f"  SM clock: {one(clocks['wall'])} without the profiler, {one(clocks['profiled'])} with it"


def profile_variant(variant, x: torch.Tensor, warmup: int, iters: int, trace: Path | None = None,
                    sample_clock=lambda: None) -> dict:
    """The variant's kernels, its blocking runtime calls, its wall time per forward+backward
    without the profiler (wall - kernel sum: an estimate of the GPU's idle time, see the module),
    and the SM clock of each of the two runs."""
    def step() -> None:
        variant.backward(variant.forward(variant.prepare(x)))

    for _ in range(warmup):
        step()
    wall, wall_clock = wall_ms(step, iters, sample_clock)
    kernels, blocking, profiled_clock = kernel_times(step, iters, trace, sample_clock)
    return {"wall_ms": wall, "kernels": kernels, "blocking_calls": blocking,
            "clocks": {"wall": clock_record(wall_clock), "profiled": clock_record(profiled_clock)}}


def print_table(name: str, kernels: dict[str, dict], top: int) -> None:
    """The `top` kernels by time, in the order of their first launch (forward, then backward)."""
    total = sum(k["ms"] for k in kernels.values())
    print(f"\n{name}: {total:.3f} ms of kernels per forward+backward, {len(kernels)} kernels")
    kept = set(sorted(kernels, key=lambda kernel: -kernels[kernel]["ms"])[:top])
    for kernel, entry in kernels.items():
        if kernel in kept:
            print(f"  {entry['ms']:8.3f} ms {entry['calls']:5.1f}x  {kernel}")
    rest = [entry["ms"] for kernel, entry in kernels.items() if kernel not in kept]
    if rest:
        print(f"  {sum(rest):8.3f} ms        the other {len(rest)}")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m coda.bench kernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=tuple(layer.SIZES), default="8B")
    parser.add_argument("--variants", type=layer.csv_choices(VARIANT_NAMES), default=["coda", "floor", "hf_compile"])
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--m", type=layer.tokens_arg, default=None,
                        help="tokens M, a multiple of the batch 4 (default: the size's, 16384)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--trace", action="store_true", help="also write DIR/<variant>.trace.json (Chrome trace)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    on_gpu = layer.gpu_problem("kernels", args.size, args.m, args.seed)
    if on_gpu is None:
        return 2
    device, hf_layer, _rotary, problem = on_gpu
    variants, status = layer.build_variants(args.variants, hf_layer, problem)
    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    sample_clock = clock_sampler(GpuClocks.open(device), Stopwatch(device))
    for name in args.variants:
        if name not in variants:
            print(f"{name}: {status[name]}")
            continue
        trace = args.out / f"{name}.trace.json" if args.trace else None
        results[name] = profile_variant(variants[name], problem.x, args.warmup, args.iters, trace, sample_clock)
        print_table(name, results[name]["kernels"], args.top)
        kernel_ms = sum(k["ms"] for k in results[name]["kernels"].values())
        print(f"  wall {results[name]['wall_ms']:.3f} ms per forward+backward (no profiler): "
              f"{results[name]['wall_ms'] - kernel_ms:.3f} ms beyond the kernels")
        print(clock_line(results[name]["clocks"]))
        for call, entry in sorted(results[name]["blocking_calls"].items(), key=lambda i: -i[1]["ms"]):
            print(f"  host {entry['ms']:8.3f} ms {entry['calls']:5.1f}x  {call}")
    command = ["python", "-m", "coda.bench", "kernels", *(sys.argv[1:] if argv is None else argv)]
    record = {**report.run_metadata(device, command, warmup=args.warmup, iters=args.iters),
              "size": args.size, "tokens": problem.tokens, "kernels": results}
    (args.out / "kernels.json").write_text(json.dumps(record, indent=1))
    print(f"\nwrote {args.out / 'kernels.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
