"""coda-train: train a small Llama (or Qwen3) from the same random init on the same synthetic
batches under several implementations, and compare loss curves, speed and memory.

    python -m coda.train [--steps 200] [--variants hf_fp32,hf_eager,hf_compile,coda]
                         [--precision bf16|amp] [--out DIR]

Variants (each from the same initial weights, on the same batches in the same order):
  hf_fp32     Hugging Face model in float32, TF32 off: the reference curve (not a speed baseline)
  hf_eager    the same model in bf16 (see --precision), eager PyTorch
  hf_compile  hf_eager under torch.compile
  coda        the hf_eager model converted in place by coda.patch_llama / coda.patch_qwen3
--precision says how the three bf16 variants hold their weights, the same for all three so that
only the kernels differ:
  bf16  bf16 parameters (model.to(torch.bfloat16)) with plain AdamW, no master weights;
  amp   fp32 master weights, the forward under torch.autocast(bfloat16), AdamW on the fp32
        weights: mixed precision as Hugging Face's Trainer(bf16=True) runs it; under
        --parallel fsdp, FSDP2's MixedPrecisionPolicy instead (bf16 parameters gathered, bf16
        compute, fp32 gradient reduction), as FSDP2 trains.
--checkpointing turns on activation checkpointing (model.gradient_checkpointing_enable(), before
patching) in the three bf16 variants: the memory-for-time trade of long sequences or big batches.
Launched by torchrun (`torchrun --nproc-per-node N -m coda.train --parallel ddp|fsdp`), every
variant trains data-parallel over the N GPUs, each rank on its rows of every step's batch
(coda.parallel: DDP, or FSDP2 with a unit per decoder layer); rank 0 reports.

Why: the numerics contract says fused kernels may differ from the framework in rounding, not in
what is learned. The check printed at the end: over the last 50 steps, |loss_coda - loss_fp32|
must stay within twice |loss_hf_eager - loss_fp32| (the deviation bf16 already has), next
to the speed targets (coda >= 1.15x hf_eager tokens/s and faster than hf_compile). The corpus
(coda.corpus) has a known entropy floor, so the table also says how far from converged each
curve is. Outputs: a table on stdout, progress bars on stderr, DIR/train.json and DIR/train.png.
A variant that fails (e.g. `import coda` or the patch raises on this GPU) is reported and
skipped; the exit status is then 1. A missed target does not change the exit status.
"""
from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import platform
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch

from coda import parallel
from coda.corpus import MarkovCorpus
from coda.provenance import git_commit

VARIANTS = ("hf_fp32", "hf_eager", "hf_compile", "coda")
FINAL_WINDOW = 20        # final loss = mean over the last this many steps
PARITY_WINDOW = 50       # the parity check compares the last this many steps
PARITY_FACTOR = 2.0      # coda may deviate from fp32 by at most this times what hf_eager does
SPEEDUP_VS_EAGER = 1.15  # coda tokens/s target relative to hf_eager
REFRESH_EVERY = 10       # steps between progress-bar updates (each one syncs the device)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="coda-train", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", choices=("llama", "qwen3"), default="llama",
                   help="qwen3 adds per-head QK-norm")
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=3584, help="MLP width (3.5x hidden, as Llama 3)")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8, help="sequences per step")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    p.add_argument("--warmup", type=int, default=20,
                   help="linear warm-up steps (at most steps/10), then cosine to lr/10")
    p.add_argument("--seed", type=int, default=0, help="seeds the corpus and the initial weights")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="comma-separated subset of " + ",".join(VARIANTS))
    p.add_argument("--timing-skip", type=int, default=5,
                   help="first steps left out of tokens/s (compile, warm-up; at most steps/2)")
    p.add_argument("--corpus-support", type=int, default=8, help="successors per token")
    p.add_argument("--corpus-modes", type=int, default=4,
                   help="classes of the token two back that change the next-token distribution")
    p.add_argument("--precision", choices=("bf16", "amp"), default="bf16",
                   help="bf16 variants: bf16 parameters, or fp32 master weights under bf16 autocast "
                        "(FSDP2: its MixedPrecisionPolicy)")
    p.add_argument("--checkpointing", action="store_true",
                   help="activation checkpointing in the bf16 variants (gradient_checkpointing_enable)")
    p.add_argument("--autotune", action="store_true",
                   help="the coda variant times its kernels on first use and keeps the winners "
                        "(CODA_TUNE=1; docs/design.md §10.1); its first steps, in --timing-skip, "
                        "pay for it")
    p.add_argument("--parallel", choices=parallel.MODES, default="ddp",
                   help="under torchrun: how the variants are distributed over the GPUs (coda.parallel)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--out", type=Path, default=Path("train-out"))
    args = p.parse_args(argv)
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(args.variants) - set(VARIANTS))
    if unknown or not args.variants:
        p.error(f"--variants: unknown {unknown}; choose from {','.join(VARIANTS)}")
    if args.hidden % args.heads or args.heads % args.kv_heads:
        p.error("--hidden must be a multiple of --heads, and --heads of --kv-heads")
    if args.steps < 2:
        p.error("--steps must be at least 2")
    return args


def build_config(args):
    """The model config; the fields the patch functions key on are spelled out."""
    from transformers import LlamaConfig, Qwen3Config

    common = dict(hidden_size=args.hidden, num_hidden_layers=args.layers,
                  num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
                  head_dim=args.hidden // args.heads, intermediate_size=args.ffn,
                  vocab_size=args.vocab, max_position_embeddings=args.seq,
                  rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
                  attention_bias=False, use_cache=False, attn_implementation="sdpa")
    if args.model == "qwen3":
        return Qwen3Config(**common, use_sliding_window=False)
    return LlamaConfig(**common, mlp_bias=False)


def build_initial_model(config, seed: int):
    """One random init, on the CPU so that it is the same for every device; each variant
    trains a deep copy of it."""
    from transformers import LlamaForCausalLM, Qwen3ForCausalLM

    torch.manual_seed(seed)
    cls = Qwen3ForCausalLM if config.model_type == "qwen3" else LlamaForCausalLM
    return cls(config).float().train()


def fp32_masters(name: str, precision: str) -> bool:
    """Whether a bf16 variant keeps fp32 master weights (--precision amp); hf_fp32 is fp32 throughout."""
    return name != "hf_fp32" and precision == "amp"


def enable_checkpointing(model) -> None:
    """Non-reentrant activation checkpointing on a Hugging Face model, before or after patching
    (transformers >= 5.2x names the call activation_checkpointing_enable)."""
    enable = getattr(model, "activation_checkpointing_enable", None)
    if enable is not None:
        enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def prepare_variant(name: str, initial, model_kind: str, device: torch.device, autotune: bool = False,
                    precision: str = "bf16", checkpointing: bool = False, ranks: parallel.Ranks = parallel.Ranks()):
    """Returns (module whose parameters are trained, callable that runs the forward)."""
    model = copy.deepcopy(initial)
    if name == "hf_fp32" or fp32_masters(name, precision):
        model.to(device)
    else:
        model.to(device=device, dtype=torch.bfloat16)
    if checkpointing and name != "hf_fp32":
        enable_checkpointing(model)
    if name == "coda":
        import coda  # the native module; a failure here is this variant's failure only

        (coda.patch_qwen3 if model_kind == "qwen3" else coda.patch_llama)(model)
        if autotune:
            from coda import ops

            ops.set_autotune(True)
    model.train()
    forward = parallel.wrap(model, ranks, device, fp32_masters(name, precision))  # after patching: a patched model is sharded as it is
    return model, (torch.compile(forward) if name == "hf_compile" else forward)


def make_optimizer(model, args, device: torch.device, sharded: bool = False):
    """AdamW, no decay on 1-D parameters (norm weights); warm-up then cosine to lr/10. Sharded
    (FSDP2) parameters take the foreach implementation."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95),
                            fused=True if device.type == "cuda" and not sharded else None)
    warmup = max(1, min(args.warmup, args.steps // 10))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, args.steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))

    return params, opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


class StepTimer:
    """Per-step milliseconds: CUDA events on a GPU (no sync per step), wall clock on a CPU."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.marks: list = []

    def _mark(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def start(self):
        self.marks.append([self._mark(), None])

    def stop(self):
        self.marks[-1][1] = self._mark()

    def milliseconds(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) for a, b in self.marks]
        return [(b - a) * 1e3 for a, b in self.marks]


def train_variant(name: str, initial, batches: torch.Tensor, args, device: torch.device,
                  ranks: parallel.Ranks = parallel.Ranks()) -> dict:
    """Trains one variant from `initial` over `batches` (steps, batch, seq: this rank's rows);
    returns its record (losses: the whole batch's, over the ranks; speed and memory: this rank's)."""
    from tqdm import tqdm

    model, forward = prepare_variant(name, initial, args.model, device, args.autotune, args.precision,
                                     args.checkpointing, ranks)
    # fp32 master weights: each forward under bf16 autocast, the backward outside it (as AMP runs);
    # under FSDP2 its MixedPrecisionPolicy runs them in bf16 instead (coda.parallel).
    masters = fp32_masters(name, args.precision)
    autocast = masters and not parallel.casts_parameters(ranks, masters)
    params, opt, sched = make_optimizer(model, args, device, sharded=ranks.mode == "fsdp")
    timer, losses = StepTimer(device), []
    tokens_per_step = batches.shape[1] * batches.shape[2] * ranks.world
    bar = tqdm(total=len(batches), desc=f"{name:<10}", unit="step", file=sys.stderr,
               dynamic_ncols=True, disable=not ranks.leader)
    last_wall, last_step = time.perf_counter(), 0
    for step, ids in enumerate(batches):
        timer.start()
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = forward(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        timer.stop()
        losses.append(loss.detach())
        bar.update(1)
        if (step + 1) % REFRESH_EVERY == 0 or step + 1 == len(batches):
            value = losses[-1].item()  # syncs: the rate below is the device's, not the queue's
            now = time.perf_counter()
            rate = tokens_per_step * (step + 1 - last_step) / (now - last_wall)
            bar.set_postfix_str(f"loss {value:.4f}, {rate:,.0f} tok/s")
            last_wall, last_step = now, step + 1
    bar.close()

    step_ms = timer.milliseconds()
    loss_values = parallel.mean_over_ranks(torch.stack(losses), ranks).cpu().tolist()
    skip = min(args.timing_skip, args.steps // 2)
    timed_ms = step_ms[skip:]
    record = {
        "losses": loss_values, "step_ms": step_ms,
        "warmup_s": sum(step_ms[:skip]) / 1e3,  # first steps: torch.compile, autotuning, caches
        "ms_per_step": sum(timed_ms) / len(timed_ms),
        "tokens_per_s": tokens_per_step * len(timed_ms) / (sum(timed_ms) / 1e3),
        "peak_gib": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None,
        "final_loss": sum(loss_values[-FINAL_WINDOW:]) / len(loss_values[-FINAL_WINDOW:]),
        "error": None,
    }
    bad = [i for i, v in enumerate(loss_values) if not math.isfinite(v)]
    if bad:
        record["error"] = f"non-finite loss from step {bad[0]}"
    return record


def free_device_memory(device: torch.device):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def mean_abs_gap(a: list[float], b: list[float], window: int) -> float:
    pairs = list(zip(a, b))[-window:]
    return sum(abs(x - y) for x, y in pairs) / len(pairs)


def checks(results: dict) -> list[dict]:
    """The numerics-contract parity check and the speed targets; 'n/a' where a variant is missing."""
    ok = {k: v for k, v in results.items() if v.get("error") is None}
    out = []
    if {"coda", "hf_fp32", "hf_eager"} <= ok.keys():
        ref = ok["hf_fp32"]["losses"]
        coda_gap = mean_abs_gap(ok["coda"]["losses"], ref, PARITY_WINDOW)
        bf16_gap = mean_abs_gap(ok["hf_eager"]["losses"], ref, PARITY_WINDOW)
        # Beside the check, not in it: torch.compile's own gap, one more bf16 sample of how far
        # rounding alone moves a curve (early in training it can exceed eager's several times).
        context = ""
        if "hf_compile" in ok:
            compile_gap = mean_abs_gap(ok["hf_compile"]["losses"], ref, PARITY_WINDOW)
            context = f" (hf_compile's own: {compile_gap:.4f})"
        out.append({"check": "parity", "value": coda_gap, "limit": PARITY_FACTOR * bf16_gap,
                    "status": "PASS" if coda_gap <= PARITY_FACTOR * bf16_gap else "MISS",
                    "text": f"mean |coda - hf_fp32| over the last {PARITY_WINDOW} steps = "
                            f"{coda_gap:.4f}, limit {PARITY_FACTOR:g} x mean |hf_eager - hf_fp32| "
                            f"= {PARITY_FACTOR * bf16_gap:.4f}{context}"})
    else:
        out.append({"check": "parity", "status": "n/a",
                    "text": "needs coda, hf_fp32 and hf_eager"})
    for base, target in (("hf_eager", SPEEDUP_VS_EAGER), ("hf_compile", 1.0)):
        if {"coda", base} <= ok.keys():
            ratio = ok["coda"]["tokens_per_s"] / ok[base]["tokens_per_s"]
            passed = ratio >= target if base == "hf_eager" else ratio > target
            out.append({"check": f"speed vs {base}", "value": ratio, "limit": target,
                        "status": "PASS" if passed else "MISS",
                        "text": f"coda tokens/s = {ratio:.3f} x {base} "
                                f"(target {'>=' if base == 'hf_eager' else '>'} {target:g} x)"})
        else:
            out.append({"check": f"speed vs {base}", "status": "n/a",
                        "text": f"needs coda and {base}"})
    return out


def format_table(results: dict, floor: float) -> str:
    header = (f"{'variant':<11}{'tokens/s':>12}{'ms/step':>10}{'warmup s':>10}{'peak GiB':>10}"
              f"{'final loss':>12}{'- floor':>9}")
    lines = [header, "-" * len(header)]
    for name, r in results.items():
        if "ms_per_step" not in r:
            lines.append(f"{name:<11}  FAILED: {r['error']}")
            continue
        peak = f"{r['peak_gib']:.2f}" if r["peak_gib"] is not None else "-"
        lines.append(f"{name:<11}{r['tokens_per_s']:>12,.0f}{r['ms_per_step']:>10.1f}"
                     f"{r['warmup_s']:>10.1f}{peak:>10}{r['final_loss']:>12.4f}"
                     f"{r['final_loss'] - floor:>9.4f}"
                     + (f"  FAILED: {r['error']}" if r["error"] else ""))
    return "\n".join(lines)


def plot(results: dict, corpus_info: dict, path: Path):
    """Loss curves against the entropy floor, and each variant's gap to the fp32 reference."""
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = {k: v["losses"] for k, v in results.items() if v.get("losses")}
    reference = curves.get("hf_fp32")
    fig, axes = plt.subplots(1, 2 if reference else 1, figsize=(13 if reference else 7, 4.5),
                             squeeze=False)
    ax = axes[0][0]
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, label=name, lw=1.2)
    ax.axhline(corpus_info["entropy_floor"], color="k", ls="--", lw=1,
               label=f"entropy floor {corpus_info['entropy_floor']:.3f}")
    ax.axhline(corpus_info["bigram_entropy"], color="gray", ls=":", lw=1,
               label=f"bigram entropy {corpus_info['bigram_entropy']:.3f}")
    ax.set(xlabel="step", ylabel="loss (nats/token)", yscale="log", title="training loss")
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.ScalarFormatter())
    ax.legend()
    if reference:
        ax = axes[0][1]
        for name, losses in curves.items():
            if name != "hf_fp32":
                ax.plot(range(1, len(losses) + 1), [a - b for a, b in zip(losses, reference)],
                        label=name, lw=1)
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set(xlabel="step", ylabel="loss - hf_fp32 loss", title="deviation from fp32")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def environment(device: torch.device) -> dict:
    import transformers

    commit = git_commit()
    name = (torch.cuda.get_device_name(device) if device.type == "cuda"
            else platform.processor() or platform.machine())
    return {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
            "transformers": transformers.__version__, "python": platform.python_version(),
            "git_commit": commit}


def main(argv=None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("coda-train: no CUDA device; use --device cpu for a smoke run", file=sys.stderr)
        return 2
    ranks, device = parallel.start(args.parallel, device)
    try:
        return run(args, device, ranks)
    finally:
        parallel.stop(ranks)


def run(args, device: torch.device, ranks: parallel.Ranks) -> int:
    """Every variant, then (rank 0) the table, the checks, train.json and train.png."""
    say = print if ranks.leader else (lambda *a, **k: None)
    # The fp32 reference must be fp32: no TF32 in matmuls or convolutions (bf16 is unaffected).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    warnings.filterwarnings("ignore", message="TensorFloat32 tensor cores")  # off on purpose
    args.out.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    corpus = MarkovCorpus(args.vocab, support=args.corpus_support, modes=args.corpus_modes,
                          seed=args.seed, device=device)
    batches = corpus.sample(args.steps * args.batch, args.seq).view(args.steps, args.batch, args.seq)
    batches = parallel.rows(batches, ranks)  # the same corpus on every rank: each takes its rows
    corpus_info = corpus.describe()
    floor = corpus_info["entropy_floor"]
    say(f"corpus: {args.steps} x {args.batch} x {args.seq} tokens in "
          f"{time.perf_counter() - t0:.1f} s; entropy floor {floor:.4f} nats/token "
          f"(bigram {corpus_info['bigram_entropy']:.4f}, uniform {corpus_info['uniform_entropy']:.4f})",
          file=sys.stderr)

    config = build_config(args)
    initial = build_initial_model(config, args.seed)
    n_params = sum(p.numel() for p in initial.parameters())
    say(f"model: {args.model}, {n_params / 1e6:.1f}M parameters, device {device}, precision {args.precision}"
          f"{', activation checkpointing' if args.checkpointing else ''}"
          f"{f', {ranks.world} ranks ({ranks.mode})' if ranks.mode else ''}",
          file=sys.stderr)

    results: dict[str, dict] = {}
    for name in args.variants:
        free_device_memory(device)
        try:
            results[name] = train_variant(name, initial, batches, args, device, ranks)
        except Exception as exc:  # report, go on with the other variants
            if not isinstance(exc, ImportError):  # a missing build needs no traceback
                traceback.print_exc(file=sys.stderr)
            results[name] = {"error": f"{type(exc).__name__}: {exc}".strip()}
        if results[name]["error"]:
            print(f"{name}: FAILED: {results[name]['error']}", file=sys.stderr)
    free_device_memory(device)

    verdicts = checks(results)
    if not ranks.leader:
        return 1 if any(r["error"] for r in results.values()) else 0
    print(format_table(results, floor))
    print(f"entropy floor {floor:.4f} nats/token, bigram entropy "
          f"{corpus_info['bigram_entropy']:.4f}, log(vocab) {corpus_info['uniform_entropy']:.4f}")
    for v in verdicts:
        print(f"{v['status']:<5} {v['check']}: {v['text']}")

    summary = {name: {k: v for k, v in r.items() if k not in ("losses", "step_ms")}
               for name, r in results.items()}
    report = {"config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
              "model_config": config.to_dict(), "parameters": n_params,
              "environment": {**environment(device), "ranks": ranks.world, "parallel": ranks.mode},
              "corpus": corpus_info,
              "variants": results, "summary": summary, "checks": verdicts}
    (args.out / "train.json").write_text(json.dumps(report, indent=1, default=str))
    plot(results, corpus_info, args.out / "train.png")
    print(f"wrote {args.out / 'train.json'} and {args.out / 'train.png'}")
    return 1 if any(r["error"] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
