# SPDX-License-Identifier: BSD-3-Clause
"""The forward ops' kernel choice ranked inside the decoder layer: `python -m coda.bench layer-tune`.

    python -m coda.bench layer-tune [--size 8B] [--ops linear_rmsnorm_swiglu,linear_rmsnorm_rope]
                                    [--m 16384] [--rounds 5] [--iters 3] [--out bench-out]

Why: `python -m coda.bench tune` times each candidate alone, back to back, where a GEMM at full
power clocks down: the 8B gate/up matmul read 6.03 ms there and 5.42 ms in the layer, and the
fused op's kernel that tuner picked (1.02 × matmul there) ran 5.81 ms in the layer against
cuBLAS's 5.3 (twenty-second session). A training step interleaves memory-bound kernels and
attention between its GEMMs; the kernel that is best alone need not be best there.

Here the CODA layer's training forward runs as the layer benchmark runs it (layer.make_problem,
same weights and data), with every candidate of an op forced in turn (coda.ops.forced_kernel), and
the op's own call is the timed region (CUDA events around it, inside the forward): its kernel's
time in the layer's context, in interleaved rounds, beside the op as it runs today. The pick (least
median) is timed again head to head with today's choice in fresh rounds (the least of many noisy
estimates reads low: tune.py) and the layer's output with the pick forced is checked against the
float32 reference under the numerics contract (layer.check_variant); a table row is written only
where both hold (--min-gain).

Forward ops only: forced_kernel is per thread, and autograd runs the backward on a thread of its
own. An op the layer calls twice (linear_residual_rms: the O and down projections) is forced and
timed on both calls together. Output: DIR/layer_tune.json (every candidate's median, today's, the
pick and its confirmation), DIR/op_table.inc (rows for scripts/merge_op_table.py), a table on stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from coda.bench import layer, report
from coda.bench.timing import Stopwatch, interleaved_rounds

FORWARD_OPS = ("linear_rmsnorm_swiglu", "linear_rmsnorm_rope", "linear_residual_rms")


@contextlib.contextmanager
def timed_op(name: str, watch: Stopwatch):
    """Inside, every call of coda.ops.<name> (as coda.nn's Functions make it) is a timed region."""
    from coda import ops

    original = getattr(ops, name)

    def timed(*args):
        with watch.region():
            return original(*args)

    setattr(ops, name, timed)
    try:
        yield
    finally:
        setattr(ops, name, original)


def forward_step(variant, x: torch.Tensor, op: str, candidate: int | None):
    """One training forward of the layer with `op` forced to `candidate` (None: today's choice);
    only the op's calls are timed."""
    from coda import ops

    def step(watch: Stopwatch) -> None:
        inputs = variant.prepare(x)
        forced = ops.forced_kernel(op, candidate) if candidate is not None else contextlib.nullcontext()
        with forced, timed_op(op, watch):
            variant.forward(inputs)

    return step


def tune_op(op: str, variant, problem, args, watch: Stopwatch) -> dict:
    from coda._native import C
    from coda.bench.tune import _describe

    calls = 2 if op == "linear_residual_rms" else 1
    steps = {"today": forward_step(variant, problem.x, op, None)}
    runnable = C.op_candidates(op)
    steps.update({f"c{i}": forward_step(variant, problem.x, op, i) for i in runnable})
    result = _rounds(steps, watch, args.rounds, args.iters, args.warmup, calls)
    medians = {name: statistics.median(r) for name, r in result.round_medians_ms.items()}
    candidates = C.program_candidates()
    timed = {name: ms for name, ms in medians.items() if name != "today"}
    best = min(timed, key=timed.get)
    row = {"op": op, "calls_per_forward": calls, "today_ms": medians.get("today"),
           "candidates": [{"kernel": _describe(candidates[i]), "ms": medians.get(f"c{i}")} for i in runnable],
           "pick": _describe(candidates[int(best[1:])]), "pick_ms": timed[best], "errors": result.errors,
           "rounds_ms": result.round_medians_ms, "confirmed": None, "check": None, "written": False}
    variant.forward(variant.prepare(problem.x))  # once more as today, to name the kernel it chose
    today_kernel = C.last_op_choice(op)
    row["today_kernel"] = _describe(today_kernel) if today_kernel else None
    gain = 1 - timed[best] / medians["today"] if medians.get("today") else None
    row["gain"] = gain
    if gain is None or gain < args.min_gain:
        return row
    head_to_head = _rounds({"today": steps["today"], best: steps[best]}, watch, args.confirm_rounds,
                           args.iters, args.warmup, calls)
    r = head_to_head.round_medians_ms
    if head_to_head.errors or not r.get(best) or not r.get("today"):
        row["confirmed"] = {"gain": None, "errors": head_to_head.errors}
        return row
    paired = statistics.median(p / t for p, t in zip(r[best], r["today"]))
    row["confirmed"] = {"gain": 1 - paired, "rounds_ms": r}
    from coda import ops

    with ops.forced_kernel(op, int(best[1:])):
        row["check"] = layer.check_variant(variant, problem, args.reference, args.bound, args.x_changed)
    a, w_n, k = _op_shape(op, problem)
    row["table_row"] = C.op_table_row(op, a, w_n, k, int(best[1:]))
    row["written"] = bool(row["check"]["pass"]) and 1 - paired >= args.min_gain
    return row


class SummedRegions:
    """A Stopwatch whose regions come in groups of `calls` (an op called `calls` times per forward):
    collect_ms gives one time per iteration, the group's sum."""

    def __init__(self, inner: Stopwatch, calls: int):
        self.inner, self.calls = inner, calls
        self.uses_cuda_events = inner.uses_cuda_events

    def synchronize(self) -> None:
        self.inner.synchronize()

    def region(self):
        return self.inner.region()

    def collect_ms(self) -> list[float]:
        times = self.inner.collect_ms()
        return [sum(times[i:i + self.calls]) for i in range(0, len(times), self.calls)]


def _rounds(steps: dict, watch: Stopwatch, rounds: int, iters: int, warmup: int, calls: int):
    return interleaved_rounds(steps, SummedRegions(watch, calls), rounds=rounds, iters=iters, warmup=warmup)


def _op_shape(op: str, problem) -> tuple[int, int, int]:
    """(M, N, K) of the op's call in the layer (the first call for linear_residual_rms: O)."""
    c = problem.config
    m, d = problem.tokens, problem.hidden
    hd = c.head_dim
    if op == "linear_rmsnorm_swiglu":
        return m, 2 * c.intermediate_size, d
    if op == "linear_rmsnorm_rope":
        return m, (c.num_attention_heads + 2 * c.num_key_value_heads) * hd, d
    return m, d, c.num_attention_heads * hd


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m coda.bench layer-tune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=tuple(layer.PUBLIC_SIZES) + ("tiny",), default="8B")
    p.add_argument("--ops", type=layer.csv_choices(FORWARD_OPS), default=["linear_rmsnorm_swiglu", "linear_rmsnorm_rope"])
    p.add_argument("--m", type=int, default=None, help="tokens M (default: the size's, 16384)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--min-gain", type=float, default=0.02)
    p.add_argument("--confirm-rounds", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("bench-out"))
    return p.parse_args(argv)


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("python -m coda.bench layer-tune needs a CUDA GPU", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    dims = layer.SIZES[args.size]
    hf_layer, rotary, problem = layer.make_problem(dims, args.m or dims.default_tokens, device, args.seed)
    args.reference = layer.reference_output(hf_layer, rotary, problem)
    hf_out = layer._layer_output(layer.build_hf_eager(hf_layer, problem), problem.x)
    args.bound = 2 * (hf_out - args.reference).abs().max().item() + 1e-6
    args.x_changed = problem.x.clone()
    args.x_changed[:, problem.seq // 2:] = torch.randn_like(args.x_changed[:, problem.seq // 2:])
    variants, status = layer.build_variants(["coda"], hf_layer, problem)
    if "coda" not in variants:
        print(f"coda: {status['coda']}", file=sys.stderr)
        return 2
    watch = Stopwatch(device)
    rows, lines = [], []
    print("| op | today | today ms | pick | pick ms | gain | confirmed gain | check | row |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for op in args.ops:
        row = tune_op(op, variants["coda"], problem, args, watch)
        rows.append(row)
        confirmed = (row["confirmed"] or {}).get("gain")
        check = row["check"]
        print(f"| {op} | {row['today_kernel']} | {_fmt(row['today_ms'])} | {row['pick']} | {_fmt(row['pick_ms'])} | "
              f"{_fmt(row['gain'])} | {_fmt(confirmed)} | {'—' if check is None else 'ok' if check['pass'] else '**FAILED**'} | "
              f"{'written' if row['written'] else 'kept'} |", flush=True)
        if row["written"]:
            lines.append(f"{row['table_row']}  // {args.size}: {1 - confirmed:.3f} x today's choice in the layer "
                         f"(head to head; python -m coda.bench layer-tune)")
    args.out.mkdir(parents=True, exist_ok=True)
    command = ["python", "-m", "coda.bench", "layer-tune", *argv]
    record = {**report.run_metadata(device, command, rounds=args.rounds, iters=args.iters),
              "size": args.size, "tokens": problem.tokens, "rows": rows}
    (args.out / "layer_tune.json").write_text(json.dumps(record, indent=1, default=str))
    (args.out / "op_table.inc").write_text("".join(line + "\n" for line in lines))
    print(f"{len(lines)} of {len(rows)} rows written to {args.out / 'op_table.inc'}")
    return 0 if all(r["check"] is None or r["check"]["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
