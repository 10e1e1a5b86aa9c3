# SPDX-License-Identifier: BSD-3-Clause
"""Every CODA op as a PyTorch custom op (namespace `coda`), with a fake (shape and dtype only, for
torch.compile and meta tensors) for each. Outputs and workspaces come from PyTorch's caching
allocator; the kernels run on the current CUDA stream; nothing synchronises the host.

Autograd is not registered per op: the backward of a fused op needs state its neighbours own
(the row statistics of the residual stream, the ⟨z, dz⟩ of the next GEMM), so the backward ops
are wired together per block in `coda.nn.functions` (one autograd.Function per fused group).

Row statistics. A producer of the residual stream X (`linear_residual_rms`, `rms_norm_stats`)
leaves Σx² per row as fp32 partials in a flat buffer of `norm_stats_floats(M, N)` floats; how the
partials are laid out depends on the kernel the producer ran, which is a pure function of its
shape. Consumers therefore take the buffer and `stats_k`: the K of the `linear_residual_rms` that
wrote it, or 0 for `rms_norm_stats`, and rebuild the layout from it on the host."""
from __future__ import annotations

import contextlib
import functools
import threading
from typing import Optional

import torch
from torch import Tensor

from ._native import C, stream, view

_LIB = "coda"
REDUCTIONS = {"none": 0, "sum": 1, "mean": 2}


# --- shared helpers --------------------------------------------------------------------------
# How a row-statistics buffer is tiled under any kernel config (the C++ per_row_partial_tiling_
# any_config): the smallest tile N, and the lcm of every tile M. Read once from the library, so a
# new tile config cannot leave this formula behind.
_STATS_TILE_N, _STATS_ROW_MULTIPLE = C.norm_stats_tiling()


def norm_stats_floats(m, n):
    """Floats of a row-statistics buffer for an M × N producer, whatever kernel it runs (the C++
    norm_stats_floats, written so that it also works on symbolic sizes)."""
    tiles = (n + _STATS_TILE_N - 1) // _STATS_TILE_N
    return tiles * ((m + _STATS_ROW_MULTIPLE - 1) // _STATS_ROW_MULTIPLE * _STATS_ROW_MULTIPLE)


def stats_layout(m: int, n: int, stats_k: int) -> tuple[int, int]:
    """(tiles, padded) of the partials a producer of an M × N residual stream wrote on the current
    device (its kernel, hence the layout, is chosen from that GPU's table)."""
    if stats_k == 0:
        return 1, m
    return _producer_layout(m, n, stats_k, torch.cuda.current_device())


@functools.lru_cache(maxsize=4096)
def _producer_layout(m: int, n: int, k: int, device: int) -> tuple[int, int]:
    with torch.cuda.device(device):
        return C.linear_residual_rms_stats_layout(m, n, k)


def set_autotune(on: bool) -> None:
    """Turns the kernel autotuner on or off for this process (default: on when the environment has
    CODA_TUNE=1). On, the first call of a fused op at a new (device, op, N, K, M bucket) times every
    kernel candidate on its own arguments and keeps the fastest, in memory and in a JSON file under
    $XDG_CACHE_HOME/coda/ (C.autotune_cache_file()); never during CUDA-graph capture."""
    C.set_autotune(bool(on))


@contextlib.contextmanager
def forced_kernel(op: str, candidate: int):
    """For a benchmark that tunes from outside the op (python -m coda.bench tune): inside, every
    call of `op` (an op-table key, e.g. "linear_swiglu") on this thread runs kernel candidate
    `candidate` (an index into C.program_candidates()) instead of its table's choice, with no
    autotuning. The stats layout a producer predicts follows the forced kernel."""
    C.force_op_choice(op, int(candidate))
    _producer_layout.cache_clear()
    try:
        yield
    finally:
        C.force_op_choice(op, -1)
        _producer_layout.cache_clear()


_forced_gemm = threading.local()


@contextlib.contextmanager
def forced_gemm_kernel(config: str, raster: str = "heuristic", swizzle: int = 1):
    """For a benchmark (python -m coda.bench ops --gemm-kernel): inside, coda.ops.linear on this
    thread runs the plain-GEMM kernel `config` (a tile config as the kernel tables name it, e.g.
    "coop_256x128_1x2"), raster "along_m", "along_n" or "heuristic", and `swizzle`, instead of its
    table's choice. A kernel that is not compiled in, or a bad name, raises ValueError."""
    before = getattr(_forced_gemm, "choice", None)
    _forced_gemm.choice = (str(config), str(raster), int(swizzle))
    try:
        yield
    finally:
        _forced_gemm.choice = before


# The 1-D arguments, by name; every other tensor argument is a matrix.
_VECTORS = frozenset({"norm_weight", "stats", "positions", "frequencies", "q_norm_weight", "k_norm_weight",
                      "targets", "zdz", "bias"})


def _require_cuda(op: str, **tensors: Optional[Tensor]) -> None:
    """What the wrappers themselves read before the C++ op validates the rest: each argument is a
    CUDA tensor of its rank (a wrong rank would otherwise fail unpacking a shape, naming nothing)."""
    for name, t in tensors.items():
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"coda.{op}: argument '{name}' must be a torch.Tensor, got {type(t).__name__}")
        if t.device.type != "cuda":
            raise ValueError(f"coda.{op}: argument '{name}' must be a CUDA tensor, got device {t.device}")
        rank = 1 if name in _VECTORS else 2
        if t.dim() != rank:
            raise ValueError(f"coda.{op}: argument '{name}' must have {rank} dimension{'s' * (rank > 1)}, "
                             f"got shape {tuple(t.shape)}")


def _empty(ref: Tensor, *shape, dtype=torch.bfloat16) -> Tensor:
    return torch.empty(shape, dtype=dtype, device=ref.device)


def _stats_buffer(ref: Tensor, m, n) -> Tensor:
    # Zeroed: a producer writes only the partials its kernel's layout covers, and an output with
    # unwritten bytes would differ run to run (1 MB at 16k tokens: a negligible memset).
    return torch.zeros(norm_stats_floats(m, n), dtype=torch.float32, device=ref.device)


def _workspace(ref: Tensor, nbytes: int) -> Tensor:
    return torch.empty(max(int(nbytes), 16), dtype=torch.uint8, device=ref.device)


class CodaOp:
    """One CODA op. `custom_op` is its torch.library custom op (torch.ops.coda.<name>): what
    torch.compile traces, opcheck checks and meta or CPU tensors dispatch to (fake shapes, or the
    validation error). Calling the CodaOp on CUDA tensors in eager mode runs the implementation
    directly: the custom-op dispatcher alone costs tens of microseconds of host time per call."""

    def __init__(self, name: str, fn, mutates_args=()):
        self.name = name
        self.custom_op = torch.library.custom_op(f"{_LIB}::{name}", mutates_args=mutates_args)(fn)
        self._overload = getattr(getattr(torch.ops, _LIB), name).default
        self._fn = fn
        self.__doc__ = fn.__doc__

    def register_fake(self, fake):
        return self.custom_op.register_fake(fake)

    def __call__(self, *args):
        if torch.compiler.is_compiling() or args[0].device.type != "cuda":
            return self._overload(*args)
        return self._fn(*args)

    def __repr__(self):
        return f"<CodaOp coda::{self.name}>"


def _custom_op(name: str, mutates_args=()):
    return lambda fn: CodaOp(name, fn, mutates_args)


# --- the plain GEMM ---------------------------------------------------------------------------
@_custom_op("linear")
def linear(a: Tensor, weight: Tensor) -> Tensor:
    """D = A·Wᵀ (W in nn.Linear layout) by CODA's GEMM with no epilogue: the mainloop every fused
    op runs, under the GPU's own kernel table; the yardstick of the fused ops' epilogue cost."""
    _require_cuda("linear", a=a, weight=weight)
    if a.stride(-1) != 1 or weight.stride(-1) != 1:
        raise ValueError(f"coda.linear: a and weight must be row-major (unit column stride), the forward "
                         f"layout; got strides {a.stride()} and {weight.stride()}")
    d = _empty(a, a.shape[0], weight.shape[0])
    choice = getattr(_forced_gemm, "choice", None) or ("", "heuristic", 1)
    ws = _workspace(a, C.gemm_workspace_bytes(view(d), view(a), view(weight), *choice))
    C.gemm(view(d), view(a), view(weight), ws.data_ptr(), ws.numel(), stream(a), *choice)
    return d


@linear.register_fake
def _(a, weight):
    return a.new_empty(a.shape[0], weight.shape[0])


# --- forward: the residual stream and its statistics -------------------------------------------
@_custom_op("rms_norm_stats")
def rms_norm_stats(x: Tensor, norm_weight: Tensor) -> tuple[Tensor, Tensor]:
    """H = X ⊙ w and Σx² per row of X (stats_k = 0): the first block's input norm."""
    _require_cuda("rms_norm_stats", x=x, norm_weight=norm_weight)
    m, n = x.shape
    h = _empty(x, m, n)
    stats = _stats_buffer(x, m, n)
    C.rms_norm_stats(view(h), view(stats), view(x), view(norm_weight), stream(x))
    return h, stats


@rms_norm_stats.register_fake
def _(x, norm_weight):
    m, n = x.shape
    return x.new_empty(m, n), x.new_empty(norm_stats_floats(m, n), dtype=torch.float32)


@_custom_op("linear_residual_rms")
def linear_residual_rms(a: Tensor, weight: Tensor, residual: Tensor,
                        norm_weight: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """X = A·Wᵀ + R, H = X ⊙ w, Σx² partials of X (stats_k = A's K)."""
    _require_cuda("linear_residual_rms", a=a, weight=weight, residual=residual, norm_weight=norm_weight)
    m, n = a.shape[0], weight.shape[0]
    x, h = _empty(a, m, n), _empty(a, m, n)
    stats = _stats_buffer(a, m, n)
    got = C.linear_residual_rms(view(x), view(h), view(stats), view(a), view(weight), view(residual),
                                view(norm_weight), stream(a))
    assert tuple(got) == stats_layout(m, n, a.shape[1]), "stats layout differs from its prediction"
    return x, h, stats


@linear_residual_rms.register_fake
def _(a, weight, residual, norm_weight):
    m, n = a.shape[0], weight.shape[0]
    return a.new_empty(m, n), a.new_empty(m, n), a.new_empty(norm_stats_floats(m, n), dtype=torch.float32)


@_custom_op("row_rstd")
def row_rstd(h: Tensor, stats: Tensor, stats_k: int, eps: float) -> Tensor:
    """rstd[m] = 1/sqrt(Σx²/D + eps) of the stream whose h [M, D] and stats a producer wrote
    (partials summed in tile order, as the kernels' RowRstd does), fp32 [M]."""
    _require_cuda("row_rstd", h=h, stats=stats)
    m, width = h.shape
    if h.dtype != torch.bfloat16 or stats.dtype != torch.float32:
        raise ValueError(f"coda.row_rstd: h must be bf16 and stats fp32; got {h.dtype} and {stats.dtype}")
    if stats.numel() != norm_stats_floats(m, width):
        raise ValueError(f"coda.row_rstd: stats has {stats.numel()} floats, made for another shape than h's "
                         f"M × D: norm_stats_floats(M, D) = {norm_stats_floats(m, width)}")
    tiles, padded = stats_layout(m, width, stats_k)
    sumsq = stats[: tiles * padded].view(tiles, padded)[:, :m].sum(0)
    return torch.rsqrt(sumsq / width + eps)


@row_rstd.register_fake
def _(h, stats, stats_k, eps):
    return h.new_empty(h.shape[0], dtype=torch.float32)


# --- forward: consumers of the deferred norm ------------------------------------------------
@_custom_op("linear_rmsnorm")
def linear_rmsnorm(h: Tensor, weight: Tensor, stats: Tensor, stats_k: int, eps: float) -> Tensor:
    """D = RMSNorm(X)·Wᵀ as rstd ⊙ (H·Wᵀ)."""
    _require_cuda("linear_rmsnorm", h=h, weight=weight, stats=stats)
    m, k = h.shape
    d = _empty(h, m, weight.shape[0])
    C.linear_rmsnorm(view(d), view(h), view(weight), view(stats), *stats_layout(m, k, stats_k), eps, stream(h))
    return d


@linear_rmsnorm.register_fake
def _(h, weight, stats, stats_k, eps):
    return h.new_empty(h.shape[0], weight.shape[0])


def _swiglu_outputs(a: Tensor, w_gate_up: Tensor, save_z: bool):
    m, f2 = a.shape[0], w_gate_up.shape[0]
    z = _empty(a, m, f2) if save_z else _empty(a, 0)
    return z, _empty(a, m, f2 // 2)


@_custom_op("linear_swiglu")
def linear_swiglu(a: Tensor, w_gate_up: Tensor, save_z: bool) -> tuple[Tensor, Tensor]:
    """Z = A·W_guᵀ (gate/up interleaved; empty unless save_z), Y = silu(gate)·up."""
    _require_cuda("linear_swiglu", a=a, w_gate_up=w_gate_up)
    z, y = _swiglu_outputs(a, w_gate_up, save_z)
    C.linear_swiglu(view(z if save_z else None), view(y), view(a), view(w_gate_up), stream(a))
    return z, y


@linear_swiglu.register_fake
def _(a, w_gate_up, save_z):
    m, f2 = a.shape[0], w_gate_up.shape[0]
    return a.new_empty(m, f2) if save_z else a.new_empty(0), a.new_empty(m, f2 // 2)


@_custom_op("linear_rmsnorm_swiglu")
def linear_rmsnorm_swiglu(h: Tensor, w_gate_up: Tensor, stats: Tensor, stats_k: int, eps: float,
                          save_z: bool) -> tuple[Tensor, Tensor]:
    """linear_swiglu of RMSNorm(X) with the norm deferred (H, stats)."""
    _require_cuda("linear_rmsnorm_swiglu", h=h, w_gate_up=w_gate_up, stats=stats)
    z, y = _swiglu_outputs(h, w_gate_up, save_z)
    C.linear_rmsnorm_swiglu(view(z if save_z else None), view(y), view(h), view(w_gate_up), view(stats),
                            *stats_layout(h.shape[0], h.shape[1], stats_k), eps, stream(h))
    return z, y


@linear_rmsnorm_swiglu.register_fake
def _(h, w_gate_up, stats, stats_k, eps, save_z):
    m, f2 = h.shape[0], w_gate_up.shape[0]
    return h.new_empty(m, f2) if save_z else h.new_empty(0), h.new_empty(m, f2 // 2)


@_custom_op("linear_bias_gelu")
def linear_bias_gelu(x: Tensor, weight: Tensor, bias: Tensor, save_pre: bool) -> tuple[Tensor, Tensor]:
    """(Pre = X·Wᵀ + b, empty unless save_pre; Y = GELU_tanh(X·Wᵀ + b)): F.gelu(F.linear(x, weight,
    bias), approximate="tanh") in one GEMM."""
    _require_cuda("linear_bias_gelu", x=x, weight=weight, bias=bias)
    m, n = x.shape[0], weight.shape[0]
    pre = _empty(x, m, n) if save_pre else _empty(x, 0)
    y = _empty(x, m, n)
    C.linear_bias_gelu(view(y), view(pre if save_pre else None), view(x), view(weight), view(bias), stream(x))
    return pre, y


@linear_bias_gelu.register_fake
def _(x, weight, bias, save_pre):
    m, n = x.shape[0], weight.shape[0]
    return x.new_empty(m, n) if save_pre else x.new_empty(0), x.new_empty(m, n)


@_custom_op("linear_rope")
def linear_rope(a: Tensor, w_qkv: Tensor, positions: Tensor, frequencies: Tensor) -> Tensor:
    """QKV = RoPE(A·W_qkvᵀ) on adjacent pairs (W_q, W_k rows permuted per head)."""
    _require_cuda("linear_rope", a=a, w_qkv=w_qkv, positions=positions, frequencies=frequencies)
    qkv = _empty(a, a.shape[0], w_qkv.shape[0])
    C.linear_rope(view(qkv), view(a), view(w_qkv), view(positions), view(frequencies), stream(a))
    return qkv


@linear_rope.register_fake
def _(a, w_qkv, positions, frequencies):
    return a.new_empty(a.shape[0], w_qkv.shape[0])


@_custom_op("linear_rmsnorm_rope")
def linear_rmsnorm_rope(h: Tensor, w_qkv: Tensor, stats: Tensor, stats_k: int, eps: float,
                        positions: Tensor, frequencies: Tensor) -> Tensor:
    """QKV = RoPE(RMSNorm(X)·W_qkvᵀ) with the norm deferred."""
    _require_cuda("linear_rmsnorm_rope", h=h, w_qkv=w_qkv, stats=stats, positions=positions,
                  frequencies=frequencies)
    qkv = _empty(h, h.shape[0], w_qkv.shape[0])
    C.linear_rmsnorm_rope(view(qkv), view(h), view(w_qkv), view(stats),
                          *stats_layout(h.shape[0], h.shape[1], stats_k), eps, view(positions),
                          view(frequencies), stream(h))
    return qkv


@linear_rmsnorm_rope.register_fake
def _(h, w_qkv, stats, stats_k, eps, positions, frequencies):
    return h.new_empty(h.shape[0], w_qkv.shape[0])


@_custom_op("linear_qknorm_rope")
def linear_qknorm_rope(a: Tensor, w_qkv: Tensor, positions: Tensor, frequencies: Tensor,
                       q_norm_weight: Tensor, k_norm_weight: Tensor, q_heads: int, kv_heads: int,
                       qk_eps: float, save_pre: bool) -> tuple[Tensor, Tensor]:
    """QKV = RoPE(QkNorm(A·W_qkvᵀ)); Pre = A·W_qkvᵀ when save_pre (else empty)."""
    _require_cuda("linear_qknorm_rope", a=a, w_qkv=w_qkv, positions=positions, frequencies=frequencies,
                  q_norm_weight=q_norm_weight, k_norm_weight=k_norm_weight)
    m, n = a.shape[0], w_qkv.shape[0]
    qkv, pre = _empty(a, m, n), (_empty(a, m, n) if save_pre else _empty(a, 0))
    C.linear_qknorm_rope(view(qkv), view(pre if save_pre else None), view(a), view(w_qkv), view(positions),
                         view(frequencies), view(q_norm_weight), view(k_norm_weight), q_heads, kv_heads,
                         qk_eps, stream(a))
    return qkv, pre


@linear_qknorm_rope.register_fake
def _(a, w_qkv, positions, frequencies, q_norm_weight, k_norm_weight, q_heads, kv_heads, qk_eps, save_pre):
    m, n = a.shape[0], w_qkv.shape[0]
    return a.new_empty(m, n), (a.new_empty(m, n) if save_pre else a.new_empty(0))


@_custom_op("linear_rmsnorm_qknorm_rope")
def linear_rmsnorm_qknorm_rope(h: Tensor, w_qkv: Tensor, stats: Tensor, stats_k: int, eps: float,
                               positions: Tensor, frequencies: Tensor, q_norm_weight: Tensor,
                               k_norm_weight: Tensor, q_heads: int, kv_heads: int, qk_eps: float,
                               save_pre: bool) -> tuple[Tensor, Tensor]:
    """linear_qknorm_rope of RMSNorm(X) with the norm deferred."""
    _require_cuda("linear_rmsnorm_qknorm_rope", h=h, w_qkv=w_qkv, stats=stats, positions=positions,
                  frequencies=frequencies, q_norm_weight=q_norm_weight, k_norm_weight=k_norm_weight)
    m, n = h.shape[0], w_qkv.shape[0]
    qkv, pre = _empty(h, m, n), (_empty(h, m, n) if save_pre else _empty(h, 0))
    C.linear_rmsnorm_qknorm_rope(view(qkv), view(pre if save_pre else None), view(h), view(w_qkv), view(stats),
                                 *stats_layout(m, h.shape[1], stats_k), eps, view(positions),
                                 view(frequencies), view(q_norm_weight), view(k_norm_weight), q_heads,
                                 kv_heads, qk_eps, stream(h))
    return qkv, pre


@linear_rmsnorm_qknorm_rope.register_fake
def _(h, w_qkv, stats, stats_k, eps, positions, frequencies, q_norm_weight, k_norm_weight, q_heads,
      kv_heads, qk_eps, save_pre):
    m, n = h.shape[0], w_qkv.shape[0]
    return h.new_empty(m, n), (h.new_empty(m, n) if save_pre else h.new_empty(0))


# --- the LM head with cross-entropy ------------------------------------------------------------
def _ce_loss_shape(m, reduction: int):
    return (m,) if reduction == REDUCTIONS["none"] else (1,)


@_custom_op("linear_cross_entropy")
def linear_cross_entropy(x: Tensor, weight: Tensor, targets: Tensor, ignore_index: int, reduction: int,
                         z_loss: float, softcap: float) -> tuple[Tensor, Tensor]:
    """Loss only: (loss, lse); the logits never leave registers. reduction: 0 none, 1 sum, 2 mean."""
    _require_cuda("linear_cross_entropy", x=x, weight=weight, targets=targets)
    m, v = x.shape[0], weight.shape[0]
    loss = _empty(x, *_ce_loss_shape(m, reduction), dtype=torch.float32)
    lse = _empty(x, m, dtype=torch.float32)
    ws = _workspace(x, C.linear_cross_entropy_workspace_bytes(m, v))
    C.linear_cross_entropy(view(loss), view(lse), view(x), view(weight), view(targets), ignore_index,
                           reduction, z_loss, softcap, ws.data_ptr(), ws.numel(), stream(x))
    return loss, lse


@linear_cross_entropy.register_fake
def _(x, weight, targets, ignore_index, reduction, z_loss, softcap):
    m = x.shape[0]
    return x.new_empty(_ce_loss_shape(m, reduction), dtype=torch.float32), x.new_empty(m, dtype=torch.float32)


@_custom_op("linear_cross_entropy_fwd_bwd")
def linear_cross_entropy_fwd_bwd(x: Tensor, weight: Tensor, targets: Tensor, ignore_index: int,
                                 reduction: int, z_loss: float,
                                 softcap: float) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(loss, lse, dX, dW fp32, zdz) for an upstream gradient of 1, in row chunks."""
    _require_cuda("linear_cross_entropy_fwd_bwd", x=x, weight=weight, targets=targets)
    m, v = x.shape[0], weight.shape[0]
    loss = _empty(x, *_ce_loss_shape(m, reduction), dtype=torch.float32)
    lse, zdz = _empty(x, m, dtype=torch.float32), _empty(x, m, dtype=torch.float32)
    dx = _empty(x, *x.shape)
    dw = _empty(x, *weight.shape, dtype=torch.float32)
    ws = _workspace(x, C.linear_cross_entropy_fwd_bwd_workspace_bytes(m, v, 0))
    C.linear_cross_entropy_fwd_bwd(view(loss), view(lse), view(dx), view(dw), False, view(zdz), view(None), view(x),
                                   view(weight), view(targets), ignore_index, reduction, z_loss, softcap,
                                   ws.data_ptr(), ws.numel(), stream(x))
    return loss, lse, dx, dw, zdz


@linear_cross_entropy_fwd_bwd.register_fake
def _(x, weight, targets, ignore_index, reduction, z_loss, softcap):
    m = x.shape[0]
    f32 = torch.float32
    return (x.new_empty(_ce_loss_shape(m, reduction), dtype=f32), x.new_empty(m, dtype=f32),
            x.new_empty(x.shape), x.new_empty(weight.shape, dtype=f32), x.new_empty(m, dtype=f32))


# --- backward ops ------------------------------------------------------------------------------
@_custom_op("linear_swiglu_bwd")
def linear_swiglu_bwd(d_out: Tensor, w_down: Tensor, z: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """SwiGLU backward in the down projection's dgrad: (dZ, Y recomputed, zdz = ⟨Z, dZ⟩ per row)."""
    _require_cuda("linear_swiglu_bwd", d_out=d_out, w_down=w_down, z=z)
    m, f = d_out.shape[0], w_down.shape[1]
    dz, y = _empty(z, m, 2 * f), _empty(z, m, f)
    zdz = _empty(z, m, dtype=torch.float32)
    ws = _workspace(z, C.linear_swiglu_bwd_workspace_bytes(m, f))
    C.linear_swiglu_bwd(view(dz), view(y), view(zdz), view(d_out), view(w_down), view(z), ws.data_ptr(),
                        ws.numel(), stream(z))
    return dz, y, zdz


@linear_swiglu_bwd.register_fake
def _(d_out, w_down, z):
    m, f = d_out.shape[0], w_down.shape[1]
    return z.new_empty(m, 2 * f), z.new_empty(m, f), z.new_empty(m, dtype=torch.float32)


@_custom_op("linear_bias_gelu_bwd")
def linear_bias_gelu_bwd(d_out: Tensor, w_down: Tensor, pre: Tensor) -> tuple[Tensor, Tensor]:
    """GELU_tanh backward in the next linear's dgrad: (dPre = (dOut·W_down) ⊙ GELU_tanh'(Pre),
    ∂b = Σ_rows dPre in fp32)."""
    _require_cuda("linear_bias_gelu_bwd", d_out=d_out, w_down=w_down, pre=pre)
    m, n = d_out.shape[0], w_down.shape[1]
    d_pre, d_bias = _empty(pre, m, n), _empty(pre, n, dtype=torch.float32)
    ws = _workspace(pre, C.linear_bias_gelu_bwd_workspace_bytes(m, n))
    C.linear_bias_gelu_bwd(view(d_pre), view(d_bias), view(d_out), view(w_down), view(pre), ws.data_ptr(),
                           ws.numel(), stream(pre))
    return d_pre, d_bias


@linear_bias_gelu_bwd.register_fake
def _(d_out, w_down, pre):
    m, n = d_out.shape[0], w_down.shape[1]
    return pre.new_empty(m, n), pre.new_empty(n, dtype=torch.float32)


def _rmsnorm_bwd_into(dx: Tensor, accumulate: bool, dz: Tensor, weight: Tensor, x: Tensor, stats: Tensor,
                      stats_k: int, norm_weight: Tensor, eps: float, zdz: Tensor) -> tuple[Tensor, Tensor]:
    m, d = x.shape
    n = _empty(x, m, d)
    dw = _empty(x, d, dtype=torch.float32)
    ws = _workspace(x, C.linear_rmsnorm_bwd_workspace_bytes(m, d))
    C.linear_rmsnorm_bwd(view(dx), accumulate, view(n), view(dw), view(dz), view(weight), view(x), view(stats),
                         *stats_layout(m, d, stats_k), view(norm_weight), eps, view(zdz), ws.data_ptr(),
                         ws.numel(), stream(x))
    return n, dw


@_custom_op("linear_rmsnorm_bwd")
def linear_rmsnorm_bwd(dz: Tensor, weight: Tensor, x: Tensor, stats: Tensor, stats_k: int,
                       norm_weight: Tensor, eps: float, zdz: Tensor,
                       residual_grad: Optional[Tensor]) -> tuple[Tensor, Tensor, Tensor]:
    """RMSNorm backward in the consumer's dgrad: (dX [+ residual_grad], N = RMSNorm(X), ∂w fp32)."""
    _require_cuda("linear_rmsnorm_bwd", dz=dz, weight=weight, x=x, stats=stats, norm_weight=norm_weight,
                  zdz=zdz, residual_grad=residual_grad)
    accumulate = residual_grad is not None
    dx = residual_grad.clone() if accumulate else _empty(x, *x.shape)
    n, dw = _rmsnorm_bwd_into(dx, accumulate, dz, weight, x, stats, stats_k, norm_weight, eps, zdz)
    return dx, n, dw


@linear_rmsnorm_bwd.register_fake
def _(dz, weight, x, stats, stats_k, norm_weight, eps, zdz, residual_grad):
    m, d = x.shape
    return x.new_empty(m, d), x.new_empty(m, d), x.new_empty(d, dtype=torch.float32)


@_custom_op("linear_rmsnorm_bwd_add_", mutates_args=("dx",))
def linear_rmsnorm_bwd_add_(dx: Tensor, dz: Tensor, weight: Tensor, x: Tensor, stats: Tensor, stats_k: int,
                            norm_weight: Tensor, eps: float, zdz: Tensor) -> tuple[Tensor, Tensor]:
    """linear_rmsnorm_bwd with the input gradient added into dx in place (dx += dX, by the GEMM's
    reduce-add store): (N = RMSNorm(X), ∂w fp32). For a caller that owns dx (a gradient no one
    else holds): no copy of it, no separate add."""
    _require_cuda("linear_rmsnorm_bwd_add_", dx=dx, dz=dz, weight=weight, x=x, stats=stats,
                  norm_weight=norm_weight, zdz=zdz)
    return _rmsnorm_bwd_into(dx, True, dz, weight, x, stats, stats_k, norm_weight, eps, zdz)


@linear_rmsnorm_bwd_add_.register_fake
def _(dx, dz, weight, x, stats, stats_k, norm_weight, eps, zdz):
    m, d = x.shape
    return x.new_empty(m, d), x.new_empty(d, dtype=torch.float32)


def _qkv_width(d_qkv: Tensor, d_k: Optional[Tensor], d_v: Optional[Tensor]):
    return d_qkv.shape[1] + sum(t.shape[1] for t in (d_k, d_v) if t is not None)


@_custom_op("rope_bwd")
def rope_bwd(qkv: Tensor, d_qkv: Tensor, positions: Tensor, frequencies: Tensor, d_k: Optional[Tensor] = None,
             d_v: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """(dZ = R(θ)ᵀ·dQKV, zdz = ⟨QKV, dQKV⟩ per row). dQKV is d_qkv [M, N], or with d_k and d_v the
    blocks dQ | dK | dV as attention returns them, read where they are (no concatenation)."""
    _require_cuda("rope_bwd", qkv=qkv, d_qkv=d_qkv, positions=positions, frequencies=frequencies, d_k=d_k, d_v=d_v)
    dz = _empty(qkv, d_qkv.shape[0], _qkv_width(d_qkv, d_k, d_v))
    zdz = _empty(qkv, qkv.shape[0], dtype=torch.float32)
    C.rope_bwd(view(dz), view(zdz), view(qkv), view(d_qkv), view(d_k), view(d_v), view(positions),
               view(frequencies), stream(qkv))
    return dz, zdz


@rope_bwd.register_fake
def _(qkv, d_qkv, positions, frequencies, d_k=None, d_v=None):
    return (d_qkv.new_empty(d_qkv.shape[0], _qkv_width(d_qkv, d_k, d_v)),
            qkv.new_empty(qkv.shape[0], dtype=torch.float32))


@_custom_op("qknorm_rope_bwd")
def qknorm_rope_bwd(pre: Tensor, d_qkv: Tensor, positions: Tensor, frequencies: Tensor,
                    q_norm_weight: Tensor, k_norm_weight: Tensor, q_heads: int, kv_heads: int,
                    qk_eps: float, d_k: Optional[Tensor] = None,
                    d_v: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(dPre, zdz, ∂γ_q fp32, ∂γ_k fp32) of the QK-norm + RoPE epilogue; dQKV as in rope_bwd."""
    _require_cuda("qknorm_rope_bwd", pre=pre, d_qkv=d_qkv, positions=positions, frequencies=frequencies,
                  q_norm_weight=q_norm_weight, k_norm_weight=k_norm_weight, d_k=d_k, d_v=d_v)
    m = pre.shape[0]
    hd = q_norm_weight.shape[0]
    dpre = _empty(pre, d_qkv.shape[0], _qkv_width(d_qkv, d_k, d_v))
    zdz = _empty(pre, m, dtype=torch.float32)
    dgq, dgk = _empty(pre, hd, dtype=torch.float32), _empty(pre, hd, dtype=torch.float32)
    ws = _workspace(pre, C.qknorm_rope_bwd_workspace_bytes(m, hd))
    C.qknorm_rope_bwd(view(dpre), view(zdz), view(dgq), view(dgk), view(pre), view(d_qkv), view(d_k), view(d_v),
                      view(positions), view(frequencies), view(q_norm_weight), view(k_norm_weight), q_heads,
                      kv_heads, qk_eps, ws.data_ptr(), ws.numel(), stream(pre))
    return dpre, zdz, dgq, dgk


@qknorm_rope_bwd.register_fake
def _(pre, d_qkv, positions, frequencies, q_norm_weight, k_norm_weight, q_heads, kv_heads, qk_eps, d_k=None,
      d_v=None):
    m, hd = pre.shape[0], q_norm_weight.shape[0]
    f32 = torch.float32
    return (d_qkv.new_empty(d_qkv.shape[0], _qkv_width(d_qkv, d_k, d_v)), pre.new_empty(m, dtype=f32),
            pre.new_empty(hd, dtype=f32), pre.new_empty(hd, dtype=f32))


ALL_OPS = (linear, rms_norm_stats, linear_residual_rms, row_rstd, linear_rmsnorm, linear_swiglu, linear_rmsnorm_swiglu,
           linear_rope, linear_rmsnorm_rope, linear_qknorm_rope, linear_rmsnorm_qknorm_rope,
           linear_cross_entropy, linear_cross_entropy_fwd_bwd, linear_swiglu_bwd, linear_rmsnorm_bwd,
           linear_rmsnorm_bwd_add_, rope_bwd, qknorm_rope_bwd, linear_bias_gelu, linear_bias_gelu_bwd)
