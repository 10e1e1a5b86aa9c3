# SPDX-License-Identifier: BSD-3-Clause
"""The unfused stock-PyTorch forward of each op in `coda-bench ops` (cuBLAS GEMM + eager or
torch.compile for the rest), at the same shapes, for the same-call comparison in
bench/results/ops_fwd.json (scripts/merge_ops_json.py joins the two).

    python3 bench/torch_ops_fwd.py [--rounds N] [--models 1B,8B,70B,sq2048,...] [--ops a,b] --json out.json

Standard computations (Hugging Face Llama): RMSNorm in fp32 then cast, separate gate/up halves,
rotate-half RoPE (after Qwen3's per-head q_norm / k_norm for the qknorm ops) with cos/sin per position computed once outside the op (as HF's rotary module
does once per forward). torch.compile runs with dynamic=True: one compilation per op, not per
shape (the fused element-wise kernels it generates are the same).
"""
import argparse
import json
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
dev, dt = "cuda", torch.bfloat16
MODELS = {"1B": (2048, 32, 8, 64, 8192), "8B": (4096, 32, 8, 128, 14336),
          "70B": (8192, 64, 8, 128, 28672)}  # hidden, q heads, kv heads, head dim, ffn


def rms(x, g, eps=1e-5):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * g


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def rope(qkv, cos, sin, heads, hd):
    m = qkv.shape[0]
    rot = qkv[:, : heads * hd].view(m, heads, hd)
    rot = rot * cos[:, None, :] + rotate_half(rot) * sin[:, None, :]
    return torch.cat((rot.reshape(m, heads * hd), qkv[:, heads * hd:]), dim=-1)


def qk_norm(qkv, gq, gk, q_heads, rot_heads, hd):
    """Qwen3's q_norm / k_norm: RMSNorm over each Q and K head (eps 1e-6); V passes through."""
    m = qkv.shape[0]
    q = rms(qkv[:, : q_heads * hd].view(m, q_heads, hd), gq, 1e-6)
    k = rms(qkv[:, q_heads * hd: rot_heads * hd].view(m, rot_heads - q_heads, hd), gk, 1e-6)
    return torch.cat((q.reshape(m, -1), k.reshape(m, -1), qkv[:, rot_heads * hd:]), dim=-1)


def qk_rope(qkv, t):
    return rope(qk_norm(qkv, t["gq"], t["gkn"], t["q_heads"], t["rot_heads"], t["hd"]), t["cos"],
                t["sin"], t["rot_heads"], t["hd"])


def swiglu(gu):
    g, u = gu.chunk(2, dim=-1)
    return F.silu(g) * u


OPS = {
    "linear_residual_rms": lambda t: (lambda x: (x, rms(x, t["g"])))(F.linear(t["a"], t["w"]) + t["r"]),
    "linear_rmsnorm": lambda t: F.linear(rms(t["a"], t["gk"]), t["w"]),
    "linear_swiglu": lambda t: swiglu(F.linear(t["a"], t["w"])),
    "linear_rmsnorm_swiglu": lambda t: swiglu(F.linear(rms(t["a"], t["gk"]), t["w"])),
    # Without Z the stock computation is the same (its GEMM writes Z regardless).
    "linear_swiglu_no_z": lambda t: swiglu(F.linear(t["a"], t["w"])),
    "linear_rmsnorm_swiglu_no_z": lambda t: swiglu(F.linear(rms(t["a"], t["gk"]), t["w"])),
    "linear_rope": lambda t: rope(F.linear(t["a"], t["w"]), t["cos"], t["sin"], t["rot_heads"], t["hd"]),
    "linear_rmsnorm_rope": lambda t: rope(F.linear(rms(t["a"], t["gk"]), t["w"]), t["cos"], t["sin"],
                                          t["rot_heads"], t["hd"]),
    "linear_qknorm_rope": lambda t: qk_rope(F.linear(t["a"], t["w"]), t),
    "linear_rmsnorm_qknorm_rope": lambda t: qk_rope(F.linear(rms(t["a"], t["gk"]), t["w"]), t),
    # Saving the pre-norm projection for the backward: the stock computation keeps it anyway.
    "linear_rmsnorm_qknorm_rope_save_pre": lambda t: qk_rope(F.linear(rms(t["a"], t["gk"]), t["w"]), t),
    # Hugging Face's loss: logits upcast to fp32, mean over tokens.
    "linear_cross_entropy": lambda t: F.cross_entropy(F.linear(t["a"], t["w"]).float(), t["targets"]),
}
COMPILED = {name: torch.compile(fn, dynamic=True) for name, fn in OPS.items()}


def timed(fn, reps):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn(i)
        ends[i].record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in zip(starts, ends))[reps // 2]


def interleaved(variants, rounds):
    """Warm-up (and compilation), then `rounds` rounds in alternating order: median ms of each."""
    for fn in variants.values():
        for i in range(3):
            fn(i)
    torch.cuda.synchronize()
    per_round = {v: [] for v in variants}
    for r in range(rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(list(variants)))
        for v in order:
            per_round[v].append(timed(variants[v], 6))
    return {v: sorted(x)[len(x) // 2] for v, x in per_round.items()}


def measure(op, shape, m, n, k, q_heads, rot_heads, hd, rounds):
    sets = max(1, min(8, (256 << 20) // (2 * (m * k + n * k + m * n))))
    ts = []
    for _ in range(sets):
        t = {"a": torch.randn(m, k, device=dev, dtype=dt), "w": torch.randn(n, k, device=dev, dtype=dt) / k**0.5,
             "r": torch.randn(m, n, device=dev, dtype=dt), "g": torch.rand(n, device=dev, dtype=dt) + 0.5,
             "gk": torch.rand(k, device=dev, dtype=dt) + 0.5, "rot_heads": rot_heads, "hd": hd,
             "q_heads": q_heads, "gq": torch.rand(hd, device=dev, dtype=dt) + 0.5,
             "gkn": torch.rand(hd, device=dev, dtype=dt) + 0.5,
             "targets": torch.randint(0, n, (m,), device=dev)}
        pos = torch.arange(m, device=dev, dtype=torch.float32)
        inv = 500000.0 ** (-torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd)
        ang = torch.cat((pos[:, None] * inv, pos[:, None] * inv), dim=-1)
        t["cos"], t["sin"] = ang.cos().to(dt), ang.sin().to(dt)
        ts.append(t)
    variants = {"torch_gemm": lambda i: F.linear(ts[i % sets]["a"], ts[i % sets]["w"]),
                "torch_eager": lambda i: OPS[op](ts[i % sets]),
                "torch_compile": lambda i: COMPILED[op](ts[i % sets])}
    row = {"name": op, "shape": shape, "mnk": [m, n, k]}
    row.update(interleaved(variants, rounds))
    print(f"{op:22s} {shape:7s} {m:6d}x{n:6d}x{k:6d}  gemm {row['torch_gemm']:.3f}  eager "
          f"{row['torch_eager']:.3f}  compile {row['torch_compile']:.3f}", flush=True)
    del ts
    torch.cuda.empty_cache()
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--models", default="all")
    p.add_argument("--ops", default="all")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--json", required=True)
    a = p.parse_args()
    chosen = lambda name: a.models == "all" or name in a.models.split(",")
    op_chosen = lambda op: a.ops == "all" or op in a.ops.split(",")
    rows = []
    for name, (h, qh, kvh, hd, ffn) in MODELS.items():
        if not chosen(name):
            continue
        qkv = (qh + 2 * kvh) * hd
        m = a.tokens
        shapes = {"linear_residual_rms": (h, qh * hd), "linear_rmsnorm": (qkv, h),
                  "linear_swiglu": (2 * ffn, h), "linear_rmsnorm_swiglu": (2 * ffn, h),
                  "linear_swiglu_no_z": (2 * ffn, h), "linear_rmsnorm_swiglu_no_z": (2 * ffn, h),
                  "linear_rope": (qkv, h), "linear_rmsnorm_rope": (qkv, h),
                  "linear_qknorm_rope": (qkv, h), "linear_rmsnorm_qknorm_rope": (qkv, h),
                  "linear_rmsnorm_qknorm_rope_save_pre": (qkv, h),
                  "linear_cross_entropy": (128256, h)}
        for op, (n, k) in shapes.items():
            if op_chosen(op):
                rows.append(measure(op, name, m, n, k, qh, qh + kvh, hd, a.rounds))
    for s in (2048, 4096, 8192):
        name = f"sq{s}"
        if chosen(name):
            for op in [o for o in OPS if o != "linear_cross_entropy" and not o.endswith(("_no_z", "_save_pre")) and op_chosen(o)]:
                rows.append(measure(op, name, s, s, s, s // 128 - 2, s // 128 - 1, 128, a.rounds))
    json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
              open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
