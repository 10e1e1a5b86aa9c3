# SPDX-License-Identifier: BSD-3-Clause
"""Layer benchmark: one Llama-3 decoder layer, forward / backward / forward+backward, per variant.

    python -m coda.bench layer [--sizes 1B,8B,70B] [--rows fwd,bwd,fwd_bwd] [--rounds 3] [--iters 10]
                               [--variants hf_eager,hf_compile,liger,floor,coda] [--m 16384]
                               [--sustained MS] [--device cuda] [--out bench-out]

Why: the op benchmarks (bench/RESULTS.md) time each fused GEMM alone; this one times what a training
step sees -- a whole layer, bf16, M = batch 4 x seq 4096 tokens, rope_theta 500000, RMSNorm eps 1e-5 --
against Hugging Face's layer (eager, torch.compile, Liger-Kernel) and against the floor (the layer's
GEMMs + SDPA alone), in one process, on the same data, in interleaved rounds (timing.py).

Rows: `layer_fwd` times the training forward (autograd on); `layer_bwd` times the backward alone
(a fresh forward runs untimed before each timed backward); `layer_fwd_bwd` both. Before timing,
every variant's forward output is checked against the layer run in float32 on upcast weights (the
repo's numerics contract, docs/numerics.md: max|out - ref| <= 2 * max|hf_eager_bf16 - ref| + 1e-6)
and probed for causality (changing the second half of every sequence must leave the first half's
outputs unchanged); a failed check marks the row, it does not stop the run. Peak extra memory is
measured for one forward+backward per variant. Output: DIR/layer.json (the schema of
bench/results/*.json: commit, date, gpu, command, rows), DIR/layer.png and a table on stdout.
"""
from __future__ import annotations

import argparse
import copy
import gc
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from coda.bench import report
from coda.bench.clocks import GpuClocks
from coda.bench.timing import Heater, Step, Stopwatch, describe_error, interleaved_rounds
from coda.bench.variants import BUILDERS, VARIANT_NAMES, Problem, Variant, build_hf_eager

BATCH = 4
ROPE_THETA = 500000.0
RMS_EPS = 1e-5
ROWS = ("fwd", "bwd", "fwd_bwd")


@dataclass(frozen=True)
class LayerDims:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    default_tokens: int = 16384


SIZES = {
    "1B": LayerDims(2048, 32, 8, 64, 8192),
    "8B": LayerDims(4096, 32, 8, 128, 14336),
    "70B": LayerDims(8192, 64, 8, 128, 28672),
    "tiny": LayerDims(128, 4, 2, 32, 256, default_tokens=128),  # hidden: for the CPU test
}
PUBLIC_SIZES = ("1B", "8B", "70B")

ROW_NOTES = {
    "fwd": "training forward (autograd on). hf_*/liger include the layer's own input RMSNorm; "
           "coda excludes first_state (the previous layer's work) and instead computes the NEXT "
           "layer's input RMSNorm in its down GEMM: equal work. Forwards run back to back here, a "
           "lighter load than a training step's: clocks may be higher than in fwd_bwd, the row to "
           "read for training.",
    "bwd": "backward alone: a fresh forward runs untimed before each timed backward call. coda's "
           "backward runs back to x through first_state (its input-norm backward), as the HF layer's does.",
    "fwd_bwd": "forward + backward of one layer, parameter grads set to None before each iteration.",
}


def llama_config(dims: LayerDims, seq: int):
    from transformers import LlamaConfig

    return LlamaConfig(hidden_size=dims.hidden, intermediate_size=dims.ffn,
                       num_attention_heads=dims.heads, num_key_value_heads=dims.kv_heads,
                       head_dim=dims.head_dim, rms_norm_eps=RMS_EPS, hidden_act="silu",
                       rope_parameters={"rope_type": "default", "rope_theta": ROPE_THETA},
                       max_position_embeddings=seq, attn_implementation="sdpa")


def make_problem(dims: LayerDims, tokens: int, device: torch.device, seed: int):
    """The HF layer (bf16, random weights, norm weights near 1) and the data every variant shares."""
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    if tokens % BATCH:
        raise ValueError(f"--m {tokens} is not a multiple of the batch {BATCH}")
    seq = tokens // BATCH
    config = llama_config(dims, seq)
    torch.manual_seed(seed)
    with torch.device(device):
        hf_layer = LlamaDecoderLayer(config, layer_idx=0).to(torch.bfloat16)
        rotary = LlamaRotaryEmbedding(config)
    if hf_layer.self_attn.config._attn_implementation != "sdpa":
        raise RuntimeError("the HF layer does not use SDPA attention")
    with torch.no_grad():
        for norm in (hf_layer.input_layernorm, hf_layer.post_attention_layernorm):
            norm.weight.copy_(1 + 0.1 * torch.randn_like(norm.weight))
    x = torch.randn(BATCH, seq, dims.hidden, device=device, dtype=torch.bfloat16)
    cos, sin = rotary(x, torch.arange(seq, device=device)[None])
    problem = Problem(config=config, batch=BATCH, seq=seq, x=x, dy=torch.randn_like(x), cos=cos, sin=sin,
                      positions=torch.arange(seq, device=device, dtype=torch.int32).repeat(BATCH))
    return hf_layer, rotary, problem


def gpu_problem(benchmark: str, size: str, tokens: int | None, seed: int):
    """(device, HF layer, rotary, problem) of `size` at `tokens` (default: the size's) on the GPU,
    for the benchmarks that need one (kernels, layer-tune); None, having said so, without a GPU."""
    if not torch.cuda.is_available():
        print(f"python -m coda.bench {benchmark} needs a CUDA GPU", file=sys.stderr)
        return None
    device = torch.device("cuda")
    dims = SIZES[size]
    return (device, *make_problem(dims, tokens or dims.default_tokens, device, seed))


@torch.no_grad()
def reference_output(hf_layer, rotary, problem: Problem) -> torch.Tensor:
    """The layer in float32 on upcast weights, [M, D]; one batch row at a time (fp32 SDPA may take
    the math path, whose [heads, seq, seq] scores would be too large for the whole batch)."""
    ref_layer = copy.deepcopy(hf_layer).float()
    x = problem.x.float()
    cos, sin = rotary(x, torch.arange(problem.seq, device=x.device)[None])
    rows = [ref_layer(x[b: b + 1], attention_mask=None, position_embeddings=(cos, sin), is_causal=True)
            for b in range(problem.batch)]
    return torch.cat(rows).reshape(problem.tokens, problem.hidden)


def _layer_output(variant: Variant, x: torch.Tensor) -> torch.Tensor:
    return variant.output(variant.forward(variant.prepare(x))).detach().float()


def check_variant(variant: Variant, problem: Problem, ref: torch.Tensor, bound: float,
                  x_second_half_changed: torch.Tensor) -> dict:
    """Forward output vs the fp32 reference (contract bound) and a causality probe."""
    if variant.output is None:
        return {"pass": None, "note": "no layer output (GEMMs and SDPA alone)"}
    out = _layer_output(variant, problem.x)
    max_abs_err = (out - ref).abs().max().item()
    changed = _layer_output(variant, x_second_half_changed)
    diff = (changed - out).abs().reshape(problem.batch, problem.seq, problem.hidden)
    half = problem.seq // 2
    leak, response = diff[:, :half].max().item(), diff[:, half:].max().item()
    causal = leak <= 1e-2 * response
    variant.clear_grads()
    return {"pass": bool(max_abs_err <= bound) and causal, "max_abs_err": max_abs_err, "bound": bound,
            "causal": causal, "causal_leak": leak, "causal_response": response}


def output_check(hf_layer, rotary, problem: Problem) -> tuple[torch.Tensor, float, torch.Tensor]:
    """What check_variant holds a variant's forward output to: (the fp32 reference, the contract's
    bound 2 · max|hf_eager − ref| + 1e-6, the input with each sequence's second half redrawn)."""
    ref = reference_output(hf_layer, rotary, problem)
    bound = 2 * (_layer_output(build_hf_eager(hf_layer, problem), problem.x) - ref).abs().max().item() + 1e-6
    changed = problem.x.clone()
    changed[:, problem.seq // 2:] = torch.randn_like(changed[:, problem.seq // 2:])
    return ref, bound, changed


def row_step(variant: Variant, row: str, x: torch.Tensor) -> Step:
    """One timed iteration of a row: the untimed part, then the timed region."""
    def fwd(watch: Stopwatch) -> None:
        inputs = variant.prepare(x)
        with watch.region():
            variant.forward(inputs)

    def bwd(watch: Stopwatch) -> None:
        out = variant.forward(variant.prepare(x))
        with watch.region():
            variant.backward(out)

    def fwd_bwd(watch: Stopwatch) -> None:
        inputs = variant.prepare(x)
        with watch.region():
            variant.backward(variant.forward(inputs))

    return {"fwd": fwd, "bwd": bwd, "fwd_bwd": fwd_bwd}[row]


def counting_device_allocs(step: Step, counts: list[int]) -> Step:
    """`step`, appending to `counts` the device allocations (cudaMalloc) each call made."""
    def counted(watch: Stopwatch) -> None:
        before = _device_allocs()
        step(watch)
        counts.append(_device_allocs() - before)

    return counted


def _device_allocs() -> int:
    """cudaMalloc calls so far by PyTorch's caching allocator (0 without CUDA)."""
    if not torch.cuda.is_available():
        return 0
    return int(torch.cuda.memory_stats()["num_device_alloc"])


def peak_extra_gib(step: Step, variant: Variant, watch: Stopwatch, device: torch.device) -> float | None:
    """Peak memory of one forward+backward beyond what was allocated before it (grads included)."""
    if device.type != "cuda":
        return None
    variant.clear_grads()
    gc.collect()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step(watch)
    watch.collect_ms()
    peak = torch.cuda.max_memory_allocated()
    variant.clear_grads()
    return (peak - before) / 2**30


def build_variants(names: Sequence[str], hf_layer, problem: Problem) -> tuple[dict[str, Variant], dict[str, str]]:
    variants, status = {}, {}
    for name in names:
        try:
            variants[name] = BUILDERS[name](hf_layer, problem)
            status[name] = "ok"
        except Exception as error:  # noqa: BLE001 - e.g. liger / coda not importable here
            status[name] = f"unavailable: {describe_error(error)}"
    return variants, status


def bench_size(size: str, args, device: torch.device, watch: Stopwatch) -> list[dict]:
    dims = SIZES[size]
    tokens = args.m or dims.default_tokens
    hf_layer, rotary, problem = make_problem(dims, tokens, device, args.seed)
    ref, bound, x_second_half_changed = output_check(hf_layer, rotary, problem)

    variants, status = build_variants(args.variants, hf_layer, problem)
    heater = Heater(device, args.sustained) if args.sustained > 0 else None
    clocks = GpuClocks.open(device)
    checks = {}
    for name, variant in list(variants.items()):
        try:
            checks[name] = check_variant(variant, problem, ref, bound, x_second_half_changed)
        except Exception as error:  # noqa: BLE001
            status[name] = f"error: {describe_error(error)}"
            del variants[name]
        print(f"[{size}] check {name}: {status[name] if name not in checks else _check_summary(checks[name])}",
              flush=True)
    del ref, x_second_half_changed

    rows = []
    for row in args.rows:
        allocs: dict[str, list[int]] = {name: [] for name in variants}
        steps = {name: counting_device_allocs(row_step(variant, row, problem.x), allocs[name])
                 for name, variant in variants.items()}
        result = interleaved_rounds(steps, watch, rounds=args.rounds, iters=args.iters, warmup=args.warmup,
                                    heat=heater, clocks=clocks)
        # cudaMalloc calls in the timed iterations (after each variant's warm-up): each can stall
        # the GPU, and a variant's allocations depend on what the others left cached.
        timed_allocs = {name: sum(counts[args.warmup:]) for name, counts in allocs.items()}
        row_status = {name: status[name] if name not in result.errors else f"error: {result.errors[name]}"
                      for name in args.variants}
        memory = None
        if row == "fwd_bwd":
            memory = {}
            for name in result.round_medians_ms:
                if name not in result.errors:
                    memory[name] = peak_extra_gib(steps[name], variants[name], watch, device)
        rows.append(report.layer_row(
            row=row, size=size, tokens=tokens, dims=_dims_record(dims, problem),
            times_ms={name: result.median_ms(name) for name in args.variants},
            rounds_ms=result.round_medians_ms, peak_extra_gib=memory, status=row_status, checks=checks,
            notes=ROW_NOTES[row]))
        rows[-1]["device_allocs_while_timed"] = timed_allocs
        rows[-1].update(result.clock_record())
        print(report.row_line(rows[-1]), flush=True)
        stalls = {name: n for name, n in timed_allocs.items() if n}
        if stalls:
            print(f"  cudaMalloc while timed ({row}): {stalls}", flush=True)
    del variants, hf_layer, rotary, problem
    _free_memory(device)
    return rows


def _dims_record(dims: LayerDims, problem: Problem) -> dict:
    record = {key: value for key, value in asdict(dims).items() if key != "default_tokens"}
    return {**record, "batch": problem.batch, "seq": problem.seq}


def _check_summary(check: dict) -> str:
    if check["pass"] is None:
        return check["note"]
    return (f"{'pass' if check['pass'] else 'FAIL'}: max|err| {check['max_abs_err']:.3g} "
            f"(bound {check['bound']:.3g}), {'causal' if check['causal'] else 'NOT CAUSAL'}")


def _free_memory(device: torch.device) -> None:
    torch._dynamo.reset()
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def tokens_arg(text: str) -> int:
    """--m: a positive multiple of the batch (M = BATCH × sequence), refused when parsed rather
    than after the GPU work before it."""
    try:
        m = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if m <= 0 or m % BATCH:
        raise argparse.ArgumentTypeError(f"M = {m}: must be a positive multiple of the batch {BATCH} "
                                         f"(M = {BATCH} x sequence; e.g. {max(BATCH, m - m % BATCH)})")
    return m


def csv_choices(choices: Sequence[str]):
    def parse(text: str) -> list[str]:
        items = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in items if item not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {', '.join(choices)}")
        return items
    return parse


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m coda.bench layer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=csv_choices(tuple(SIZES)), default=list(PUBLIC_SIZES),
                        help="comma-separated from 1B,8B,70B (default: all three)")
    parser.add_argument("--rows", type=csv_choices(ROWS), default=list(ROWS), help="fwd,bwd,fwd_bwd")
    parser.add_argument("--variants", type=csv_choices(VARIANT_NAMES), default=list(VARIANT_NAMES),
                        help=",".join(VARIANT_NAMES))
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--iters", type=int, default=10, help="timed iterations per variant per round")
    parser.add_argument("--warmup", type=int, default=3, help="untimed iterations per variant before the rounds")
    parser.add_argument("--m", type=tokens_arg, default=None, help="tokens M = 4 x seq (default 16384)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sustained", type=float, default=0.0, metavar="MS",
                        help="time each variant's block right after MS ms of sustained GEMM load (timing.Heater): "
                             "every row in the power-capped state of a training step (default 0: off)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.iters < 1 or args.warmup < 0:
        parser.error("--rounds and --iters must be >= 1, --warmup >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference must be fp32
    torch.backends.cudnn.allow_tf32 = False
    watch = Stopwatch(device)
    record = report.RunRecord(args.out / "layer.json",
                              report.run_metadata(device, ["python", "-m", "coda.bench", "layer", *argv],
                                                  rounds=args.rounds, iters=args.iters, warmup=args.warmup,
                                                  sustained_ms=args.sustained))
    rows = record.rows
    for size in args.sizes:
        for row in bench_size(size, args, device, watch):
            record.add(row)
    record.finish()
    chart_note = report.write_chart(args.out / "layer.png", rows, args.variants)
    print(f"wrote {args.out / 'layer.json'}; {chart_note}")
    print(report.format_table(rows, args.variants))
    return 0
