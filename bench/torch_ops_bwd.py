# SPDX-License-Identifier: BSD-3-Clause
"""The unfused stock-PyTorch backward of each op in `coda-bench ops --bwd` (cuBLAS GEMM + eager or
torch.compile for the rest), at the same shapes, for bench/results/ops_bwd.json
(scripts/merge_ops_json.py joins the two).

    python3 bench/torch_ops_bwd.py [--rounds N] [--models 1B,8B,70B,sq2048,...] [--ops a,b] --json out.json

linear_swiglu_bwd: what autograd runs for Hugging Face's down_proj(silu(gate) * up) given the
gradient at the MLP output and the saved gate/up halves: dY = dOut · W_down, then silu's and the
product's backward (aten.silu_backward), and Y recomputed for ∂W_down (as CODA does; a model that
saved Y would skip it, so the baseline is generous). ⟨z, dz⟩, which CODA also returns, is not
charged to the baseline.
"""
import argparse
import json

import torch
import torch.nn.functional as F

from torch_ops_fwd import MODELS, dev, dt, interleaved, timed


def swiglu_bwd(t):
    dy = t["dout"] @ t["w"]                       # [M, F]: dgrad GEMM (W_down is [D, F])
    g, u = t["g"], t["u"]
    s = F.silu(g)
    du = dy * s
    dg = torch.ops.aten.silu_backward(dy * u, g)
    return torch.cat((dg, du), dim=-1), s * u      # dZ [M, 2F] (halves layout), Y


def rmsnorm_bwd(t):
    """Autograd's RMSNorm backward (HF LlamaRMSNorm, fp32 statistics) after the consuming linear's
    dgrad, summed into the residual stream's gradient. The norm output N for ∂W is what autograd
    saved in the forward (not recomputed), so the baseline is not charged for it."""
    g = (t["dz"] @ t["w"]).float()                # [M, D]: dgrad GEMM (W is [N, D])
    xf = t["x"].float()
    r = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
    u = xf * r
    gw = g * t["gamma"].float()
    dx = r * (gw - u * (gw * u).mean(-1, keepdim=True))
    dw = (g * u).sum(0)
    return t["dx_in"] + dx.to(t["x"].dtype), dw


def rope_bwd(t):
    """Autograd's backward of HF's q·cos + rotate_half(q)·sin on the Q and K heads (V passes through),
    and Σ y·dy per row (what the attention norm's backward needs; computed in fp32)."""
    dy, heads, hd = t["dy"], t["heads"], t["hd"]
    m = dy.shape[0]
    g = dy[:, : heads * hd].view(m, heads, hd)
    gs = g * t["sin"][:, None, :]
    a, b = gs.chunk(2, dim=-1)
    dq = g * t["cos"][:, None, :] + torch.cat((b, -a), dim=-1)  # rotate_half's transpose
    zdz = (t["y"].float() * dy.float()).sum(-1)
    return torch.cat((dq.reshape(m, heads * hd), dy[:, heads * hd:]), dim=-1), zdz


def qknorm_rope_bwd(t):
    """Autograd's backward of HF's rotate-half RoPE, then of Qwen3's q_norm / k_norm (fp32
    statistics) on each Q and K head, V passing through; ∂γ_q, ∂γ_k, and Σ pre·dpre per row."""
    dy, heads, q_heads, hd = t["dy"], t["heads"], t["q_heads"], t["hd"]
    m = dy.shape[0]
    g = dy[:, : heads * hd].view(m, heads, hd)
    gs = g * t["sin"][:, None, :]
    a, b = gs.chunk(2, dim=-1)
    dn = (g * t["cos"][:, None, :] + torch.cat((b, -a), dim=-1)).float()
    x = t["pre"][:, : heads * hd].view(m, heads, hd).float()
    r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    u = x * r
    gamma = torch.cat((t["gq"].expand(q_heads, hd), t["gk"].expand(heads - q_heads, hd))).float()
    gw = dn * gamma
    dx = r * (gw - u * (gw * u).mean(-1, keepdim=True))
    dgq = (dn[:, :q_heads] * u[:, :q_heads]).sum((0, 1))
    dgk = (dn[:, q_heads:] * u[:, q_heads:]).sum((0, 1))
    dpre = torch.cat((dx.to(dy.dtype).reshape(m, heads * hd), dy[:, heads * hd:]), dim=-1)
    return dpre, dgq, dgk, (t["pre"].float() * dpre.float()).sum(-1)


OPS = {"linear_swiglu_bwd": swiglu_bwd, "linear_rmsnorm_bwd": rmsnorm_bwd, "rope_bwd": rope_bwd,
       "qknorm_rope_bwd": qknorm_rope_bwd}
COMPILED = {name: torch.compile(fn, dynamic=True) for name, fn in OPS.items()}


def inputs(op, m, n, k, heads=0, hd=0, q_heads=0):
    """The GEMM is [M, K] · [K, N] (dgrad); the op's other operands (the RoPE backwards: no GEMM,
    [M, N])."""
    if op in ("rope_bwd", "qknorm_rope_bwd"):
        ang = torch.arange(m, device=dev, dtype=torch.float32)[:, None] * (
            500000.0 ** (-torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
        ang = torch.cat((ang, ang), dim=-1)
        y = "y" if op == "rope_bwd" else "pre"
        return {y: torch.randn(m, n, device=dev, dtype=dt), "dy": torch.randn(m, n, device=dev, dtype=dt),
                "cos": ang.cos().to(dt), "sin": ang.sin().to(dt), "heads": heads, "hd": hd,
                "q_heads": q_heads, "gq": torch.rand(hd, device=dev, dtype=dt) + 0.5,
                "gk": torch.rand(hd, device=dev, dtype=dt) + 0.5}
    if op == "linear_swiglu_bwd":  # K = hidden, N = F
        return {"dout": torch.randn(m, k, device=dev, dtype=dt),
                "w": torch.randn(k, n, device=dev, dtype=dt) / k**0.5,
                "g": torch.randn(m, n, device=dev, dtype=dt), "u": torch.randn(m, n, device=dev, dtype=dt)}
    return {"dz": torch.randn(m, k, device=dev, dtype=dt),  # K = consumer width, N = D
            "w": torch.randn(k, n, device=dev, dtype=dt) / k**0.5,
            "x": torch.randn(m, n, device=dev, dtype=dt), "gamma": torch.rand(n, device=dev, dtype=dt) + 0.5,
            "dx_in": torch.randn(m, n, device=dev, dtype=dt)}


def measure(op, shape, m, n, k, rounds, heads=0, hd=0, q_heads=0):
    sets = max(1, min(8, (256 << 20) // (2 * (m * k + k * n + 4 * m * n))))
    ts = [inputs(op, m, n, k, heads, hd, q_heads) for _ in range(sets)]
    a = "dout" if op == "linear_swiglu_bwd" else "dz"
    variants = {"torch_eager": lambda i: OPS[op](ts[i % sets]),
                "torch_compile": lambda i: COMPILED[op](ts[i % sets])}
    if op not in ("rope_bwd", "qknorm_rope_bwd"):
        variants["torch_gemm"] = lambda i: ts[i % sets][a] @ ts[i % sets]["w"]
    row = {"name": op, "shape": shape, "mnk": [m, n, k]}
    row.update(interleaved(variants, rounds))
    print(f"{op:22s} {shape:7s} {m:6d}x{n:6d}x{k:6d}  gemm {row.get('torch_gemm', 0):.3f}  eager "
          f"{row['torch_eager']:.3f}  compile {row['torch_compile']:.3f}", flush=True)
    del ts
    torch.cuda.empty_cache()
    return row


def ce_fwd_bwd(shape, m, h, rounds, v=128256):
    """Hugging Face's LM-head loss, forward and backward through autograd (logits upcast to fp32,
    mean cross-entropy; grads set to None each step), eager and torch.compile'd; and the peak
    memory it allocates beyond its inputs and the two gradients."""
    x = torch.randn(m, h, device=dev, dtype=dt, requires_grad=True)
    w = (torch.randn(v, h, device=dev, dtype=dt) / h**0.5).requires_grad_()
    t = torch.randint(0, v, (m,), device=dev)
    loss_fn = lambda x, w, t: F.cross_entropy(F.linear(x, w).float(), t)
    compiled = torch.compile(loss_fn, dynamic=True)

    def step(fn):
        x.grad = w.grad = None
        fn(x, w, t).backward()

    row = {"name": "linear_cross_entropy_fwd_bwd", "shape": shape, "mnk": [m, v, h]}
    for name, fn in (("torch_eager", loss_fn), ("torch_compile", compiled)):
        for _ in range(3):
            step(fn)
        torch.cuda.synchronize()
        x.grad = w.grad = None
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        step(fn)
        torch.cuda.synchronize()
        grads = x.grad.numel() * x.grad.element_size() + w.grad.numel() * w.grad.element_size()
        row[name + "_peak_extra_gib"] = (torch.cuda.max_memory_allocated() - base - grads) / 2**30
        row[name] = sorted(timed(lambda i: step(fn), 3) for _ in range(rounds))[rounds // 2]
    print(f"linear_cross_entropy_fwd_bwd {shape:4s} eager {row['torch_eager']:.3f} ms "
          f"(+{row['torch_eager_peak_extra_gib']:.2f} GiB)  compile {row['torch_compile']:.3f} ms "
          f"(+{row['torch_compile_peak_extra_gib']:.2f} GiB)", flush=True)
    del x, w
    torch.cuda.empty_cache()
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--models", default="all")
    p.add_argument("--ops", default="all")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--json", required=True)
    a, _ = p.parse_known_args()  # the coda-bench options (--bwd) pass through
    chosen = lambda name: a.models == "all" or name in a.models.split(",")
    op_chosen = lambda op: a.ops == "all" or op in a.ops.split(",")
    rows = []
    for name, (h, qh, kvh, hd, ffn) in MODELS.items():
        if not chosen(name):
            continue
        if op_chosen("linear_swiglu_bwd"):
            rows.append(measure("linear_swiglu_bwd", name, a.tokens, ffn, h, a.rounds))
        if op_chosen("linear_rmsnorm_bwd"):
            rows.append(measure("linear_rmsnorm_bwd", name, a.tokens, h, 2 * ffn, a.rounds))
        if op_chosen("rope_bwd"):
            rows.append(measure("rope_bwd", name, a.tokens, (qh + 2 * kvh) * hd, 0, a.rounds, qh + kvh, hd))
        if op_chosen("qknorm_rope_bwd"):
            rows.append(measure("qknorm_rope_bwd", name, a.tokens, (qh + 2 * kvh) * hd, 0, a.rounds,
                                qh + kvh, hd, qh))
        if op_chosen("linear_cross_entropy_fwd_bwd"):
            rows.append(ce_fwd_bwd(name, a.tokens, h, a.rounds))
    for s in (2048, 4096, 8192):
        if chosen(f"sq{s}"):
            for op in ("linear_swiglu_bwd", "linear_rmsnorm_bwd"):
                if op_chosen(op):
                    rows.append(measure(op, f"sq{s}", s, s, s, a.rounds))
    json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
              open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
