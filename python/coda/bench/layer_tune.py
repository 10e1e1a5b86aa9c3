# SPDX-License-Identifier: BSD-3-Clause
"""The fused ops' kernel choice ranked inside the decoder layer: `python -m coda.bench layer-tune`.

    python -m coda.bench layer-tune [--size 8B] [--ops linear_rmsnorm_swiglu,linear_rmsnorm_rope,...]
                                    [--m 16384] [--rounds 5] [--iters 3] [--out bench-out]

Why: `python -m coda.bench tune` times each candidate alone, back to back, where a GEMM at full
power clocks down: the 8B gate/up matmul read 6.03 ms there and 5.42 ms in the layer, and the
fused op's kernel that tuner picked (1.02 × matmul there) ran 5.81 ms in the layer against
cuBLAS's 5.3 (twenty-second session). A training step interleaves memory-bound kernels and
attention between its GEMMs; the kernel that is best alone need not be best there.

Here the CODA layer's training step runs as the layer benchmark runs it (layer.make_problem, same
weights and data), with every candidate of one of its op calls forced in turn
(coda.ops.forced_kernel), and that call is the timed region (CUDA events around it, inside the
forward or the backward): its kernel's time in the step's context, in interleaved rounds, beside
the call as it runs today. The pick (least median) is timed again head to head with today's choice
in fresh rounds (the least of many noisy estimates reads low: tune.py) and the layer's forward
output with a forward pick forced is checked against the float32 reference under the numerics
contract (layer.check_variant; a backward kernel is one the device tests check, as every config
of every program); a table row is written only where the pick holds (--min-gain).

--ops names the coda.ops functions the layer calls (LAYER_CALLS): the forward ones are forced for
the whole forward (a producer's forced kernel also sets the statistics layout its consumers read);
a backward one inside its own call, on autograd's thread, where the forcing of the main thread does
not reach. The two RMSNorm backwards share one op key but are separate calls (the gate/up dgrad:
linear_rmsnorm_bwd; the QKV dgrad: linear_rmsnorm_bwd_add_), each ranked and keyed by its own
shape; linear_residual_rms, the O and down projections, is forced and timed on both calls
together. Output: DIR/layer_tune.json (every candidate's median, today's, the pick and its
confirmation), DIR/op_table.inc (rows for scripts/merge_op_table.py), a table on stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from coda.bench import layer, report
from coda.bench.timing import Stopwatch, interleaved_rounds


@dataclass(frozen=True)
class LayerCall:
    """One op call of the CODA layer: the op-table key it runs under, whether the backward makes
    it, how many times a step makes it, and its (M, N, K) as the table keys it, from the problem."""
    key: str
    backward: bool
    shape: Callable[[object], tuple[int, int, int]]
    calls: int = 1


def _qkv_width(p) -> int:
    c = p.config
    return (c.num_attention_heads + 2 * c.num_key_value_heads) * c.head_dim


LAYER_CALLS = {
    "linear_rmsnorm_swiglu": LayerCall("linear_rmsnorm_swiglu", False,
                                       lambda p: (p.tokens, 2 * p.config.intermediate_size, p.hidden)),
    "linear_rmsnorm_rope": LayerCall("linear_rmsnorm_rope", False, lambda p: (p.tokens, _qkv_width(p), p.hidden)),
    "linear_residual_rms": LayerCall("linear_residual_rms", False,  # O and down; the row keys O's shape
                                     lambda p: (p.tokens, p.hidden, p.config.num_attention_heads * p.config.head_dim),
                                     calls=2),
    "linear_swiglu_bwd": LayerCall("linear_swiglu_bwd", True,
                                   lambda p: (p.tokens, p.config.intermediate_size, p.hidden)),
    "linear_rmsnorm_bwd": LayerCall("linear_rmsnorm_bwd", True,  # the gate/up dgrad
                                    lambda p: (p.tokens, p.hidden, 2 * p.config.intermediate_size)),
    "linear_rmsnorm_bwd_add_": LayerCall("linear_rmsnorm_bwd", True,  # the QKV dgrad
                                         lambda p: (p.tokens, p.hidden, _qkv_width(p))),
}


@contextlib.contextmanager
def timed_op(name: str, watch: Stopwatch, key: str, candidate: int | None, ran: list):
    """Inside, every call of coda.ops.<name> (as coda.nn's Functions make it) is a timed region,
    with `candidate` forced on `key` for the call itself when given (on whichever thread makes it:
    autograd's, for a backward call). `ran` gets the kernel each call ran (C.last_op_choice, on the
    calling thread)."""
    from coda import ops
    from coda._native import C

    original = getattr(ops, name)

    def timed(*args):
        forced = ops.forced_kernel(key, candidate) if candidate is not None else contextlib.nullcontext()
        with forced, watch.region():
            out = original(*args)
        ran.append(C.last_op_choice(key))
        return out

    setattr(ops, name, timed)
    try:
        yield
    finally:
        setattr(ops, name, original)


def call_step(variant, x: torch.Tensor, name: str, candidate: int | None, ran: list):
    """One training step of the layer (forward, and backward for a backward call) with call `name`
    forced to `candidate` (None: today's choice); only that call is timed."""
    from coda import ops

    call = LAYER_CALLS[name]

    # A forward call is forced for the whole forward (a producer's kernel sets the statistics
    # layout its consumers read, on this thread); a backward call inside the call, on autograd's.
    around = None if call.backward else candidate
    inside = candidate if call.backward else None

    def step(watch: Stopwatch) -> None:
        inputs = variant.prepare(x)
        forced = ops.forced_kernel(call.key, around) if around is not None else contextlib.nullcontext()
        with forced, timed_op(name, watch, call.key, inside, ran):
            out = variant.forward(inputs)
            if call.backward:
                variant.backward(out)

    return step


class SummedRegions:
    """A Stopwatch whose regions come in groups of `calls` (an op called `calls` times per step):
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


def tune_call(name: str, variant, problem, args, watch: Stopwatch, output_check: tuple) -> dict:
    """Ranks call `name`'s candidates inside the step; output_check: layer.output_check's (reference,
    bound, causality input) for a forward pick."""
    from coda import ops
    from coda._native import C
    from coda.bench.tune import _describe

    call = LAYER_CALLS[name]
    ran_today: list = []
    steps = {"today": call_step(variant, problem.x, name, None, ran_today)}
    runnable = C.op_candidates(call.key)
    steps.update({f"c{i}": call_step(variant, problem.x, name, i, []) for i in runnable})
    result = _rounds(steps, watch, args.rounds, args.iters, args.warmup, call.calls)
    medians = {step: statistics.median(r) for step, r in result.round_medians_ms.items()}
    candidates = C.program_candidates()
    timed = {step: ms for step, ms in medians.items() if step != "today"}
    best = min(timed, key=timed.get)
    index = int(best[1:])
    m, n, k = call.shape(problem)
    row = {"call": name, "op": call.key, "M": m, "N": n, "K": k, "calls_per_step": call.calls,
           "today_kernel": _describe(ran_today[-1]) if ran_today and ran_today[-1] else None,
           "today_ms": medians.get("today"),
           "candidates": [{"kernel": _describe(candidates[i]), "ms": medians.get(f"c{i}")} for i in runnable],
           "pick": _describe(candidates[index]), "pick_ms": timed[best], "errors": result.errors,
           "rounds_ms": result.round_medians_ms, "confirmed": None, "check": None, "written": False}
    gain = 1 - timed[best] / medians["today"] if medians.get("today") else None
    row["gain"] = gain
    if gain is None or gain < args.min_gain:
        return row
    head_to_head = _rounds({"today": steps["today"], best: steps[best]}, watch, args.confirm_rounds,
                           args.iters, args.warmup, call.calls)
    r = head_to_head.round_medians_ms
    if head_to_head.errors or not r.get(best) or not r.get("today"):
        row["confirmed"] = {"gain": None, "errors": head_to_head.errors}
        return row
    paired = statistics.median(p / t for p, t in zip(r[best], r["today"]))
    row["confirmed"] = {"gain": 1 - paired, "rounds_ms": r}
    if call.backward:
        row["check"] = {"pass": True, "note": "a backward kernel: the device tests check every config"}
    else:
        with ops.forced_kernel(call.key, index):
            row["check"] = layer.check_variant(variant, problem, *output_check)
    row["table_row"] = C.op_table_row(call.key, m, n, k, index)
    row["written"] = bool(row["check"]["pass"]) and 1 - paired >= args.min_gain
    return row


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m coda.bench layer-tune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=tuple(layer.PUBLIC_SIZES) + ("tiny",), default="8B")
    p.add_argument("--ops", type=layer.csv_choices(tuple(LAYER_CALLS)), default=list(LAYER_CALLS),
                   help="the layer's op calls to rank (coda.ops function names)")
    p.add_argument("--m", type=layer.tokens_arg, default=None,
                   help="tokens M, a multiple of the batch 4 (default: the size's, 16384)")
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
    on_gpu = layer.gpu_problem("layer-tune", args.size, args.m, args.seed)
    if on_gpu is None:
        return 2
    device, hf_layer, rotary, problem = on_gpu
    output_check = layer.output_check(hf_layer, rotary, problem)
    variants, status = layer.build_variants(["coda"], hf_layer, problem)
    if "coda" not in variants:
        print(f"coda: {status['coda']}", file=sys.stderr)
        return 2
    watch = Stopwatch(device)
    rows, lines = [], []
    print("| call | M×N×K | today | today ms | pick | pick ms | gain | confirmed gain | check | row |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in args.ops:
        row = tune_call(name, variants["coda"], problem, args, watch, output_check)
        rows.append(row)
        confirmed = (row["confirmed"] or {}).get("gain")
        check = row["check"]
        print(f"| {name} | {row['M']}×{row['N']}×{row['K']} | {row['today_kernel']} | {_fmt(row['today_ms'])} | "
              f"{row['pick']} | {_fmt(row['pick_ms'])} | {_fmt(row['gain'])} | {_fmt(confirmed)} | "
              f"{'—' if check is None else 'ok' if check['pass'] else '**FAILED**'} | "
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
