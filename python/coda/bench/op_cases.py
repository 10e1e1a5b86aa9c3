# SPDX-License-Identifier: BSD-3-Clause
"""The fused ops of `python -m coda.bench ops`, each as a case on one operand set: the CODA call,
the stock-PyTorch computation of the same outputs from the same inputs, the GEMM it is measured
against, and the conversion of CODA's outputs to the standard layout for the float64 check.

Same inputs: a consumer of the deferred norm gets the residual stream's Σx² from its producer, so
its stock twin gets them too and runs Hugging Face's RMSNorm without the reduction (rstd from the
sums, x·rstd → bf16 → ·γ), then its linear. The standard math is written once (`_Math`) and run in
bf16 as PyTorch runs it (the baseline, and the framework model of the numerics contract) and in
float64 without rounding (the reference).

Side inputs are realistic: γ = 1 + 0.1·N(0, 1), positions 0 … len−1 per document with documents of
random length (so RoPE rotates), targets uniform over the vocabulary with 5 % ignored (−100).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

BF16 = torch.bfloat16
EPS, QK_EPS, THETA, IGNORE = 1e-5, 1e-6, 500000.0, -100


@dataclass(frozen=True)
class Model:
    hidden: int
    q_heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int = 128256

    @property
    def qkv(self) -> int:
        return (self.q_heads + 2 * self.kv_heads) * self.head_dim


# Llama-3's widths, which the op tables were tuned at, and Qwen3-8B's (FFN 12288, vocab 151936),
# another model's widths (docs/benchmarks.md §1: what they check). Qwen2.5-7B's (hidden 3584, FFN
# 18944, vocab 152064) are in no table on purpose: every op there runs its GPU's rule, the choice
# a user with an untuned model gets.
MODELS = {"1B": Model(2048, 32, 8, 64, 8192), "8B": Model(4096, 32, 8, 128, 14336),
          "70B": Model(8192, 64, 8, 128, 28672), "Qwen3-8B": Model(4096, 32, 8, 128, 12288, 151936),
          "Qwen2.5-7B": Model(3584, 28, 4, 128, 18944, 152064)}


@dataclass(frozen=True)
class _Math:
    """The standard computations at one precision: `lo` is what a stored tensor is rounded to (bf16
    for PyTorch, nothing for the float64 reference), `hi` the precision of reductions (fp32 / fp64)."""

    lo: Callable[[Tensor], Tensor]
    hi: Callable[[Tensor], Tensor]
    reference: bool

    def silu_backward(self, grad, g):  # autograd's aten.silu_backward (one fp32 kernel) in bf16
        if not self.reference:
            return torch.ops.aten.silu_backward(grad, g)
        sig = torch.sigmoid(g)
        return grad * sig * (1 + g * (1 - sig))

    def rms_norm(self, x, gamma, sumsq, eps=EPS):  # HF LlamaRMSNorm with Σx² given
        rstd = torch.rsqrt(self.hi(sumsq)[:, None] / x.shape[-1] + eps)
        return self.lo(self.lo(self.hi(x) * rstd) * gamma)

    def head_rms_norm(self, x, gamma):  # Qwen3's q_norm / k_norm over each head [M, heads, hd]
        xf = self.hi(x)
        return self.lo(self.lo(xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + QK_EPS)) * gamma)

    def rope(self, qkv, cos, sin, m: Model):  # rotate-half RoPE on the Q and K heads, V through
        rot_cols = (m.q_heads + m.kv_heads) * m.head_dim
        rot = qkv[:, :rot_cols].unflatten(1, (-1, m.head_dim))
        a, b = rot.chunk(2, dim=-1)
        rot = self.lo(rot * cos[:, None, :] + torch.cat((-b, a), dim=-1) * sin[:, None, :])
        return torch.cat((rot.flatten(1), qkv[:, rot_cols:]), dim=1)

    def qk_norm(self, qkv, gq, gk, m: Model):
        q_cols, k_cols = m.q_heads * m.head_dim, m.kv_heads * m.head_dim
        q = self.head_rms_norm(qkv[:, :q_cols].unflatten(1, (-1, m.head_dim)), gq).flatten(1)
        k = self.head_rms_norm(qkv[:, q_cols:q_cols + k_cols].unflatten(1, (-1, m.head_dim)), gk).flatten(1)
        return torch.cat((q, k, qkv[:, q_cols + k_cols:]), dim=1)

    def swiglu(self, z):  # z = [gate | up] halves
        g, u = z.chunk(2, dim=-1)
        return self.lo(self.lo(F.silu(g)) * u)

    def linear(self, a, w):
        return self.lo(a @ w.t())

    def gelu_tanh(self, x):
        return self.lo(F.gelu(self.hi(x), approximate="tanh"))

    def gelu_tanh_backward(self, grad, pre):  # autograd's aten.gelu_backward (one fp32 kernel) in bf16
        if not self.reference:
            return torch.ops.aten.gelu_backward(grad, pre, approximate="tanh")
        k = math.sqrt(2 / math.pi)
        inner = k * (pre + 0.044715 * pre**3)
        t = torch.tanh(inner)
        return grad * (0.5 * (1 + t) + 0.5 * pre * (1 - t * t) * k * (1 + 3 * 0.044715 * pre * pre))


PYTORCH = _Math(lo=lambda t: t.to(BF16), hi=lambda t: t.float(), reference=False)
FLOAT64 = _Math(lo=lambda t: t, hi=lambda t: t.double(), reference=True)


def _bf16(*shape, device, scale=1.0) -> Tensor:
    return (torch.randn(*shape, device=device) * scale).to(BF16)


def document_positions(m: int, device, max_len: int = 8192) -> Tensor:
    """0 … len−1 per document, documents of random length up to max_len (a packed batch)."""
    starts = torch.zeros(m, dtype=torch.bool)
    starts[0] = True
    at = 0
    while at < m:
        at += int(torch.randint(1, max_len + 1, ()))
        if at < m:
            starts[at] = True
    index = torch.arange(m)
    doc_start = torch.cummax(torch.where(starts, index, 0), 0).values
    return (index - doc_start).to(torch.int32).to(device)


class Operands:
    """One operand set of a model at M tokens. Tensors are made on first use (an op's set holds only
    what its case reads); `rows` are the per-token tensors, which the check samples by row."""

    ROW_TENSORS = ("attn", "x", "r", "h", "sumsq", "cos", "sin", "targets", "d_out", "d_y", "d_qkv", "z",
                   "dx_in", "pre_fc", "d_logits")

    def __init__(self, model: Model, m: int, device):
        self.model, self.m, self.device = model, m, device
        self._made: dict[str, Tensor] = {}

    def __getitem__(self, name: str) -> Tensor:
        if name not in self._made:
            self._made[name] = getattr(self, "_make_" + name)()
        return self._made[name]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self._made.values())

    def float64_rows(self, names, rows: Tensor) -> dict[str, Tensor]:
        return {n: (self[n][rows] if n in self.ROW_TENSORS else self[n]).double() for n in names}

    # Activations (N(0, 1), as a normalized residual stream) and weights (scaled as nn.Linear's init).
    def _w(self, n, k):
        return _bf16(n, k, device=self.device, scale=k**-0.5)

    def _make_attn(self):
        return _bf16(self.m, self.model.q_heads * self.model.head_dim, device=self.device)

    def _make_x(self):
        return _bf16(self.m, self.model.hidden, device=self.device)

    _make_r = _make_x
    _make_d_out = _make_x

    def _make_gamma(self):
        return (1 + 0.1 * torch.randn(self.model.hidden, device=self.device)).to(BF16)

    def _make_h(self):
        return (self["x"] * self["gamma"]).to(BF16)  # as a producer leaves H = X ⊙ w

    def _make_sumsq(self):
        return self["x"].float().pow(2).sum(-1)

    def _make_stats(self):  # the same sums in the buffer layout of rms_norm_stats (stats_k = 0)
        from coda import ops

        stats = torch.zeros(ops.norm_stats_floats(self.m, self.model.hidden), device=self.device)
        stats[: self.m] = self["sumsq"]
        return stats

    def _make_w_o(self):
        return self._w(self.model.hidden, self.model.q_heads * self.model.head_dim)

    def _make_w_qkv(self):
        return self._w(self.model.qkv, self.model.hidden)

    def _make_w_gate_up(self):  # [gate; up] halves, the standard layout
        return self._w(2 * self.model.ffn, self.model.hidden)

    def _make_w_down(self):
        return self._w(self.model.hidden, self.model.ffn)

    def _make_w_lm(self):
        return self._w(self.model.vocab, self.model.hidden)

    def _head_gamma(self):
        return (1 + 0.1 * torch.randn(self.model.head_dim, device=self.device)).to(BF16)

    _make_gq = _head_gamma
    _make_gk = _head_gamma

    def _make_positions(self):
        return document_positions(self.m, self.device)

    def _angles(self):
        hd = self.model.head_dim
        inv = THETA ** (-torch.arange(0, hd, 2, device=self.device, dtype=torch.float64) / hd)
        angle = self["positions"].double()[:, None] * inv
        return torch.cat((angle, angle), dim=-1)

    def _make_cos(self):  # HF's rotary module: once per forward, outside the attention ops
        return self._angles().cos().to(BF16)

    def _make_sin(self):
        return self._angles().sin().to(BF16)

    def _make_targets(self):
        t = torch.randint(0, self.model.vocab, (self.m,), device=self.device)
        return torch.where(torch.rand(self.m, device=self.device) < 0.05, IGNORE, t)

    def _make_z(self):  # the gate/up projection the forward saved, halves layout
        return _bf16(self.m, 2 * self.model.ffn, device=self.device)

    def _make_d_y(self):  # the gradient of a consumer's output [M, 2F] (the gate/up projection)
        return _bf16(self.m, 2 * self.model.ffn, device=self.device)

    def _make_d_qkv(self):  # the gradient of the QKV projection [M, qkv], as RoPE's backward leaves it
        return _bf16(self.m, self.model.qkv, device=self.device)

    def _make_w_fc(self):  # the GELU MLP's up projection [4·hidden, hidden] (GPT-2 / BERT)
        return self._w(4 * self.model.hidden, self.model.hidden)

    def _make_b_fc(self):
        return (0.1 * torch.randn(4 * self.model.hidden, device=self.device)).to(BF16)

    def _make_w_proj(self):  # its down projection [hidden, 4·hidden]
        return self._w(self.model.hidden, 4 * self.model.hidden)

    def _make_pre_fc(self):  # the pre-activation the forward saved
        return _bf16(self.m, 4 * self.model.hidden, device=self.device)

    def _make_d_logits(self):  # a gradient of the LM head's logits [M, V] (CE's three-GEMM yardstick)
        return _bf16(self.m, self.model.vocab, device=self.device, scale=1e-4)

    def _make_dx_in(self):
        return _bf16(self.m, self.model.hidden, device=self.device)

    # CODA's weight layouts (a load-time permutation in coda.nn; here, once per set).
    def _make_w_qkv_coda(self):
        from coda.nn import layout

        m = self.model
        return layout.fuse_qkv(*self["w_qkv"].split([m.q_heads * m.head_dim, m.kv_heads * m.head_dim,
                                                     m.kv_heads * m.head_dim]), m.q_heads, m.kv_heads, m.head_dim)

    def _make_w_gate_up_coda(self):
        from coda.nn import layout

        return layout.fuse_gate_up(*self["w_gate_up"].chunk(2))

    def _make_frequencies(self):
        from coda.nn import layout

        m = self.model
        return layout.rope_frequencies(m.q_heads, m.kv_heads, m.head_dim, THETA, None, self.device)

    def _make_gq_coda(self):
        from coda.nn import layout

        return layout.pair_order(self["gq"], self.model.head_dim)

    def _make_gk_coda(self):
        from coda.nn import layout

        return layout.pair_order(self["gk"], self.model.head_dim)

    # Backward operands in CODA's layouts, and ⟨z, dz⟩, derived from the standard ones.
    def _make_z_coda(self):
        return _gate_up_to_coda(self["z"])

    def _make_d_y_coda(self):
        return _gate_up_to_coda(self["d_y"])

    def _zdz(self, w: str, d: str) -> Tensor:
        """⟨Z, dZ⟩ per row of a consumer (Z = RMSNorm(X)·Wᵀ), which the consumer's backward hands
        the RMSNorm backward; computed here in fp32 from the normalized input."""
        n = PYTORCH.rms_norm(self["x"], self["gamma"], self["sumsq"])
        return ((n @ self[w].t()).float() * self[d].float()).sum(-1)

    def _make_zdz(self):  # the gate/up projection's
        return self._zdz("w_gate_up", "d_y")

    def _make_zdz_qkv(self):
        return self._zdz("w_qkv", "d_qkv")


@dataclass(frozen=True)
class Case:
    """One benchmarked op. `stock(inputs, math)` computes the outputs in the standard layout from
    the named `inputs` at a precision (PYTORCH: timed, and the framework model; FLOAT64 on sampled
    rows: the reference); `coda(t)` returns CODA's outputs and `standard(t, outputs)` puts them in
    the standard layout (untimed); the first len(`outputs`) are checked (the rest, e.g. a bias
    gradient, are computed by both sides and left to the op tests). `gemm` names the (A, W) of the plain GEMM the op is measured
    against: D = A·Wᵀ (nn.Linear, the forward), or with `dgrad` D = A·W (an input gradient)."""

    name: str
    gemm: tuple[str, str]
    inputs: tuple[str, ...]
    stock: Callable[[dict, _Math], tuple]
    coda: Callable[[Operands], tuple]
    standard: Callable[[Operands, tuple], tuple]
    outputs: tuple[str, ...]
    dgrad: bool = False
    # A case whose outputs are not all per row (the cross-entropy's loss and ∂W) checks itself:
    # check(t, coda_standard_outputs, stock_outputs) -> {output: (coda error, stock error, bound)}.
    check: Callable | None = None
    # What torch.compile compiles, when not `stock` itself (a loss whose backward autograd runs).
    compiled: Callable | None = None
    # The GEMMs an op is held to when that is more than one GEMM (CE forward+backward: its three),
    # timed as the `torch_gemms` variant: gemms(t) runs them with PyTorch's matmul.
    gemms: Callable | None = None
    # The op-table key when the case is a second shape of an op (e.g. the RMSNorm backward in the
    # QKV dgrad as well as the gate/up one); empty: `name`.
    op: str = ""

    @property
    def op_key(self) -> str:
        return self.op or self.name


def _columns_to_standard(t: Operands, qkv: Tensor) -> Tensor:
    """CODA's QKV columns (adjacent-pair order in each Q/K head) back to HF's (halves)."""
    from coda.nn import layout

    m = t.model
    q, k, v = layout.split_qkv(qkv.t(), m.q_heads, m.kv_heads, m.head_dim)
    return torch.cat((q, k, v)).t()


def _gate_up_to_standard(z: Tensor) -> Tensor:
    """Gate/up columns interleaved (CODA) → [gate | up] halves."""
    from coda.nn import layout

    return torch.cat(layout.split_gate_up(z.t())).t()


def _gate_up_to_coda(z: Tensor) -> Tensor:
    """[gate | up] halves → interleaved, row-major as the ops read it."""
    from coda.nn import layout

    return layout.fuse_gate_up(*z.t().chunk(2)).t().contiguous()


def _forward_cases(model: Model) -> list[Case]:
    from coda import ops

    mm, k = model, model.hidden
    qk = lambda t: (t["gq_coda"], t["gk_coda"], mm.q_heads, mm.kv_heads, QK_EPS)  # noqa: E731
    std_qkv = lambda t, o: (_columns_to_standard(t, o[0]),)  # noqa: E731
    std_swiglu = lambda t, o: (_gate_up_to_standard(o[0]), o[1]) if o[0].numel() else (o[1],)  # noqa: E731
    std_qk_pre = lambda t, o: tuple(_columns_to_standard(t, x) for x in o if x.numel())  # noqa: E731

    def normed(t, p):
        return p.rms_norm(t["x"], t["gamma"], t["sumsq"])

    def residual_rms(t, p):
        x = p.lo(p.linear(t["attn"], t["w_o"]) + t["r"])
        return x, p.lo(x * t["gamma"]), p.hi(x).pow(2).sum(-1)

    def coda_residual_rms(t):
        return ops.linear_residual_rms(t["attn"], t["w_o"], t["r"], t["gamma"])

    def std_residual_rms(t, o):
        tiles, padded = ops.stats_layout(t.m, k, t["attn"].shape[1])
        return o[0], o[1], o[2][: tiles * padded].view(tiles, padded)[:, : t.m].sum(0)

    def swiglu_case(name, norm, save_z):
        src = ("x", "gamma", "sumsq") if norm else ("x",)

        def stock(t, p):
            z = p.linear(normed(t, p) if norm else t["x"], t["w_gate_up"])
            return (z, p.swiglu(z)) if save_z else (p.swiglu(z),)

        def coda(t):
            if norm:
                return ops.linear_rmsnorm_swiglu(t["h"], t["w_gate_up_coda"], t["stats"], 0, EPS, save_z)
            return ops.linear_swiglu(t["x"], t["w_gate_up_coda"], save_z)

        return Case(name, ("x", "w_gate_up"), src + ("w_gate_up",), stock, coda, std_swiglu,
                    ("Z", "Y") if save_z else ("Y",))

    def rope_case(name, norm, qk_norm, save_pre=False):
        src = ("x", "gamma", "sumsq") if norm else ("x",)
        src += ("w_qkv", "cos", "sin") + (("gq", "gk") if qk_norm else ())

        def stock(t, p):
            pre = p.linear(normed(t, p) if norm else t["x"], t["w_qkv"])
            qkv = p.qk_norm(pre, t["gq"], t["gk"], mm) if qk_norm else pre
            out = p.rope(qkv, t["cos"], t["sin"], mm)
            return (out, pre) if save_pre else (out,)

        def coda(t):
            a = t["h"] if norm else t["x"]
            stats = (t["stats"], 0, EPS) if norm else ()
            if qk_norm:
                fn = ops.linear_rmsnorm_qknorm_rope if norm else ops.linear_qknorm_rope
                return fn(a, t["w_qkv_coda"], *stats, t["positions"], t["frequencies"], *qk(t), save_pre)
            fn = ops.linear_rmsnorm_rope if norm else ops.linear_rope
            return (fn(a, t["w_qkv_coda"], *stats, t["positions"], t["frequencies"]),)

        return Case(name, ("x", "w_qkv"), src, stock, coda, std_qk_pre if qk_norm else std_qkv,
                    ("QKV", "Pre") if save_pre else ("QKV",))

    def rmsnorm_stock(t, p):
        return (p.linear(normed(t, p), t["w_qkv"]),)

    return [
        Case("linear_residual_rms", ("attn", "w_o"), ("attn", "w_o", "r", "gamma"), residual_rms,
             coda_residual_rms, std_residual_rms, ("X", "H", "sumsq")),
        Case("linear_rmsnorm", ("x", "w_qkv"), ("x", "gamma", "sumsq", "w_qkv"), rmsnorm_stock,
             lambda t: (ops.linear_rmsnorm(t["h"], t["w_qkv"], t["stats"], 0, EPS),), lambda t, o: o, ("D",)),
        swiglu_case("linear_swiglu", False, True),
        swiglu_case("linear_swiglu_no_z", False, False),
        swiglu_case("linear_rmsnorm_swiglu", True, True),
        swiglu_case("linear_rmsnorm_swiglu_no_z", True, False),
        rope_case("linear_rope", False, False),
        rope_case("linear_rmsnorm_rope", True, False),
        rope_case("linear_qknorm_rope", False, True),
        rope_case("linear_qknorm_rope_save_pre", False, True, save_pre=True),
        rope_case("linear_rmsnorm_qknorm_rope", True, True),
        rope_case("linear_rmsnorm_qknorm_rope_save_pre", True, True, save_pre=True),
    ]


def _swiglu_bwd_case(model: Model) -> Case:
    """The SwiGLU backward in the down projection's dgrad (dY = dOut·W_down, then silu's and the
    product's backward) and Y recomputed for ∂W_down, as CODA does. ⟨z, dz⟩, which CODA also
    returns, is not charged to the baseline nor checked here (the op tests check it)."""
    from coda import ops

    def stock(t, p):
        dy = p.lo(t["d_out"] @ t["w_down"])
        g, u = t["z"].chunk(2, dim=-1)
        s = p.lo(F.silu(g))
        dg = p.silu_backward(p.lo(dy * u), g)
        return torch.cat((dg, p.lo(dy * s)), dim=-1), p.lo(s * u)

    def coda(t):
        return ops.linear_swiglu_bwd(t["d_out"], t["w_down"], t["z_coda"])

    return Case("linear_swiglu_bwd", ("d_out", "w_down"), ("d_out", "w_down", "z"), stock, coda,
                lambda t, o: (_gate_up_to_standard(o[0]), o[1]), ("dZ", "Y"), dgrad=True)


def _rmsnorm_bwd_case(model: Model, consumer: str) -> Case:
    """The RMSNorm backward after the consuming linear's dgrad (G = dZ·W): autograd's HF
    LlamaRMSNorm backward, fp32 statistics. `consumer` "gate_up": the MLP's norm, dX summed into
    the residual stream's incoming gradient (reduce-added); "qkv": the attention's norm, dX written
    alone (the layer adds it into the residual gradient in place, linear_rmsnorm_bwd_add_: the same
    kernel with a reduce-add store, as the gate/up case times). The norm output N for ∂W is what
    autograd saved (not charged); ∂γ over all rows is checked by the op tests, dX here. The QKV
    case runs the standard column order on both sides (a consistent permutation of dZ's columns and
    W's rows leaves dZ·W and ⟨z, dz⟩ unchanged)."""
    from coda import ops

    gate_up = consumer == "gate_up"
    d, w, zdz = ("d_y", "w_gate_up", "zdz") if gate_up else ("d_qkv", "w_qkv", "zdz_qkv")

    def stock(t, p):
        g = p.hi(t[d] @ t[w])
        x = p.hi(t["x"])
        rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
        u = x * rstd
        gw = g * p.hi(t["gamma"])
        dx = p.lo(rstd * (gw - u * (gw * u).mean(-1, keepdim=True)))
        return (p.lo(t["dx_in"] + dx),) if gate_up else (dx,)

    def coda(t):
        d_coda, w_coda = (t["d_y_coda"], t["w_gate_up_coda"]) if gate_up else (t[d], t[w])
        dx, _, _ = ops.linear_rmsnorm_bwd(d_coda, w_coda, t["x"], t["stats"], 0, t["gamma"], EPS, t[zdz],
                                          t["dx_in"] if gate_up else None)
        return (dx,)

    inputs = (d, w, "x", "gamma") + (("dx_in",) if gate_up else ())
    return Case("linear_rmsnorm_bwd" if gate_up else "linear_rmsnorm_bwd_qkv", (d, w), inputs, stock, coda,
                lambda t, o: o, ("dX",), dgrad=True, op="linear_rmsnorm_bwd")


def _hf_loss(x, w, targets):  # Hugging Face's LM-head loss: fp32 logits, mean over kept tokens
    return F.cross_entropy(F.linear(x, w).float(), targets, ignore_index=IGNORE)


def _loss_and_grads(loss_fn, t):
    x, w = t["x"].detach().requires_grad_(True), t["w_lm"].detach().requires_grad_(True)
    loss = loss_fn(x, w, t["targets"])
    dx, dw = torch.autograd.grad(loss, (x, w))
    return loss.detach(), dx, dw


def _check_cross_entropy(t: Operands, coda_out: tuple, stock_out: tuple, vocab_rows: int = 256,
                         chunk: int = 1024) -> dict:
    """Against float64 over every token, a chunk of rows at a time: the mean loss under the
    reduced contract (|out − ref| ≤ 2 · mean over kept tokens of |stock token loss − ref|, since
    the errors of a mean can cancel), and with gradients ∂X on every row (per-row maxima) and ∂W
    on sampled vocabulary rows, each against twice PyTorch's error."""
    x, w, targets = t["x"], t["w_lm"], t["targets"]
    kept = targets != IGNORE
    count = int(kept.sum())
    ref_tok, stock_tok = [], []
    grads = len(coda_out) > 1
    rows_v = torch.randperm(w.shape[0], device=w.device)[:vocab_rows]
    dw_ref = torch.zeros(vocab_rows, w.shape[1], dtype=torch.float64, device=w.device)
    dx_excess = float("-inf")
    w64 = w.double()
    for r0 in range(0, x.shape[0], chunk):
        xc, tc, kc = x[r0:r0 + chunk], targets[r0:r0 + chunk], kept[r0:r0 + chunk]
        logits = xc.double() @ w64.t()
        lse = torch.logsumexp(logits, 1)
        safe = torch.where(kc, tc, 0)
        ref_tok.append(torch.where(kc, lse - logits.gather(1, safe[:, None])[:, 0], 0))
        stock_tok.append(F.cross_entropy(F.linear(xc, w).float(), tc, ignore_index=IGNORE, reduction="none").double())
        if grads:
            p = torch.softmax(logits, 1)
            p[torch.arange(len(tc), device=w.device)[kc], tc[kc]] -= 1
            p[~kc] = 0
            p /= count
            dx64 = p @ w64
            coda_rows = (coda_out[1][r0:r0 + chunk].double() - dx64).abs().amax(1)
            stock_rows = (stock_out[1][r0:r0 + chunk].double() - dx64).abs().amax(1)
            dx_excess = max(dx_excess, float((coda_rows - 2 * stock_rows).max()))
            dw_ref += p[:, rows_v].t() @ xc.double()
        del logits
    ref_loss = torch.cat(ref_tok).sum() / count
    stock_err = (torch.cat(stock_tok) - torch.cat(ref_tok)).abs().sum() / count
    result = {"loss": (float((coda_out[0].double() - ref_loss).abs()), float(stock_err), 2 * float(stock_err))}
    if grads:
        # ∂X: every row within twice PyTorch's error on that row (the worst excess, 0 or less passes).
        result["dX (worst row: coda error - 2x stock error)"] = (dx_excess, 0.0, 0.0)
        coda_dw, stock_dw = coda_out[2][rows_v].double(), stock_out[2][rows_v].double()
        e_c, e_s = (coda_dw - dw_ref).abs().max(), (stock_dw - dw_ref).abs().max()
        result["dW (sampled rows)"] = (float(e_c), float(e_s), 2 * float(e_s))
    return result


def _cross_entropy_cases(model: Model) -> list[Case]:
    from coda import ops

    inputs = ("x", "w_lm", "targets")

    def loss_only(t, p):
        return (_hf_loss(t["x"], t["w_lm"], t["targets"]),)

    def coda_loss(t):
        return ops.linear_cross_entropy(t["x"], t["w_lm"], t["targets"], IGNORE, 2, 0.0, 0.0)[:1]

    def coda_fwd_bwd(t):
        loss, _, dx, dw, _ = ops.linear_cross_entropy_fwd_bwd(t["x"], t["w_lm"], t["targets"], IGNORE, 2, 0.0, 0.0)
        return loss, dx, dw

    compiled_loss = functools.cache(lambda: torch.compile(_hf_loss, dynamic=True))
    return [
        Case("linear_cross_entropy", ("x", "w_lm"), inputs, loss_only, coda_loss, lambda t, o: o, ("loss",),
             check=_check_cross_entropy),
        # Forward and backward: the baseline is autograd through HF's loss (eager, or with the loss
        # compiled, backward included); its GEMM yardstick is the forward GEMM (the three GEMMs of
        # forward and backward are the `three_gemms` column of the report).
        Case("linear_cross_entropy_fwd_bwd", ("x", "w_lm"), inputs,
             lambda t, p: _loss_and_grads(_hf_loss, t), coda_fwd_bwd, lambda t, o: o, ("loss", "dX", "dW"),
             check=_check_cross_entropy, compiled=lambda t: _loss_and_grads(compiled_loss(), t),
             gemms=_three_gemms),
    ]


def _three_gemms(t: Operands) -> None:
    """The LM head's three GEMMs: logits = X·Wᵀ, dX = G·W, dW = Gᵀ·X (G: the logits' gradient)."""
    x, w, g = t["x"], t["w_lm"], t["d_logits"]
    torch.matmul(x, w.t())
    torch.matmul(g, w)
    torch.matmul(g.t(), x)


def _gelu_cases(model: Model) -> list[Case]:
    """The GPT-2 / BERT MLP at the model's width (N = 4·hidden): Y = GELU_tanh(X·Wᵀ + b) as
    `F.gelu(F.linear(x, w, b), approximate="tanh")` (addmm: one rounding with the bias), optionally
    keeping Pre; its backward in the down projection's dgrad as autograd runs it (dgrad GEMM, then
    gelu_backward). ∂b (a sum over every row) is the op tests' to check; dPre is checked here."""
    from coda import ops

    def forward(save_pre):
        def stock(t, p):
            pre = p.lo(t["x"] @ t["w_fc"].t() + t["b_fc"])
            y = p.gelu_tanh(pre)
            return (y, pre) if save_pre else (y,)

        def coda(t):
            pre, y = ops.linear_bias_gelu(t["x"], t["w_fc"], t["b_fc"], save_pre)
            return (y, pre) if save_pre else (y,)

        name = "linear_bias_gelu_save_pre" if save_pre else "linear_bias_gelu"
        return Case(name, ("x", "w_fc"), ("x", "w_fc", "b_fc"), stock, coda, lambda t, o: o,
                    ("Y", "Pre") if save_pre else ("Y",))

    def stock_bwd(t, p):
        d_pre = p.gelu_tanh_backward(p.lo(t["d_out"] @ t["w_proj"]), t["pre_fc"])
        return p.lo(d_pre), p.hi(d_pre).sum(0)

    def coda_bwd(t):
        return ops.linear_bias_gelu_bwd(t["d_out"], t["w_proj"], t["pre_fc"])

    return [forward(False), forward(True),
            # Both compute ∂b; `outputs` names the checked (per-row) one only.
            Case("linear_bias_gelu_bwd", ("d_out", "w_proj"), ("d_out", "w_proj", "pre_fc"), stock_bwd,
                 coda_bwd, lambda t, o: o, ("dPre",), dgrad=True)]


def cases(model: Model) -> list[Case]:
    return (_forward_cases(model)
            + [_swiglu_bwd_case(model), _rmsnorm_bwd_case(model, "gate_up"), _rmsnorm_bwd_case(model, "qkv")]
            + _cross_entropy_cases(model) + _gelu_cases(model))


def compiled(case: Case) -> Callable:
    """torch.compile of a case's stock computation in bf16 (dynamic shapes: compiled once)."""
    return case.compiled or torch.compile(lambda inputs: case.stock(inputs, PYTORCH), dynamic=True)
