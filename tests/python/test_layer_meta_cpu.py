# SPDX-License-Identifier: BSD-3-Clause
"""The CODA decoder layer's autograd wiring on meta tensors (the ops' fake kernels; no GPU, so it
runs in CI): forward and backward reach every parameter and the input with gradients of their own
shapes, through the ops the design says — the RMSNorm backwards add the residual gradient inside
their GEMMs (one copying, the QKV one in place), the RoPE backward reads dQ, dK, dV as three blocks
— and nothing else (no elementwise add or concatenation of gradients on the way). With fp32
master weights under bf16 autocast, the ops get bf16 copies and every gradient comes back fp32;
outside autocast the layer refuses before any op runs."""
import contextlib

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import coda.nn
from coda import ops
from coda.nn import layout

META = torch.device("meta")


class AtenLog(TorchDispatchMode):
    """The ATen ops dispatched inside, by name."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))
HIDDEN, HEADS, KV, HD, FFN, M = 64, 4, 2, 16, 128, 256


@contextlib.contextmanager
def cuda_autocast(dtype):
    """torch.autocast("cuda", dtype) as the GPU has it (on a machine without CUDA, torch.autocast
    switches itself off, so the state is set directly)."""
    enabled, old = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
    torch.set_autocast_enabled("cuda", True)
    torch.set_autocast_dtype("cuda", dtype)
    try:
        yield
    finally:
        torch.set_autocast_enabled("cuda", enabled)
        torch.set_autocast_dtype("cuda", old)


def recorded_ops(monkeypatch) -> list:
    calls = []
    for op in ops.ALL_OPS:
        def recorded(*args, _op=op):
            calls.append((_op.name, args))
            return _op(*args)
        monkeypatch.setattr(ops, op.name, recorded)
    return calls


def meta_layer(qk_norm: bool, dtype):
    layer = coda.nn.CodaDecoderLayer(HIDDEN, HEADS, KV, HD, FFN, 1e-5, qk_norm, device=META, dtype=dtype)
    layer.frequencies = layout.rope_frequencies(HEADS, KV, HD, 5e5, None, META)
    object.__setattr__(layer, "next_norm_weight", torch.empty(HIDDEN, device=META, dtype=dtype))
    return layer


@pytest.mark.parametrize("masters", [False, True], ids=["bf16", "fp32_masters_autocast"])
@pytest.mark.parametrize("qk_norm", [False, True], ids=["llama", "qwen3"])
def test_layer_backward_on_meta_tensors(monkeypatch, qk_norm, masters):
    calls = recorded_ops(monkeypatch)
    dtype = torch.float32 if masters else torch.bfloat16
    layer = meta_layer(qk_norm, dtype)
    x = torch.empty(M, HIDDEN, device=META, dtype=dtype, requires_grad=True)
    with cuda_autocast(torch.bfloat16) if masters else contextlib.nullcontext():
        out = layer(coda.nn.first_state(x, layer.input_norm_weight),
                    torch.empty(M, dtype=torch.int32, device=META), batch=2)
    with AtenLog() as log:
        out.x.backward(torch.empty_like(out.x))

    assert out.x.dtype == torch.bfloat16
    assert x.grad is not None and x.grad.shape == x.shape and x.grad.dtype == dtype
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape and p.grad.dtype == p.dtype, name
    floats = [a for _, args in calls for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()]
    if masters:  # the ops read bf16 copies: no fp32 master reaches a kernel
        params = list(layer.parameters()) + [layer.next_norm_weight]
        assert not [a for a in floats if any(a is p for p in params)]
    names = [name for name, _ in calls]
    assert names.count("linear_rmsnorm_bwd") == 1 and names.count("linear_rmsnorm_bwd_add_") == 1, names
    rope = "qknorm_rope_bwd" if qk_norm else "rope_bwd"
    (args,) = [a for n, a in calls if n == rope]
    blocks = [args[1], *args[-2:]]  # dQ, then dK and dV as the trailing arguments
    assert [b.shape[1] for b in blocks] == [HEADS * HD, KV * HD, KV * HD]
    summed = [n for n in log.names if n in ("aten.cat", "aten.add", "aten.add_")]
    assert not summed, f"the backward concatenated or added tensors outside the GEMMs: {summed}"


@pytest.mark.parametrize("autocast", [None, torch.float16], ids=["no_autocast", "fp16_autocast"])
def test_fp32_layer_refused_before_any_op(monkeypatch, autocast):
    """fp32 parameters outside bf16 autocast would compute in fp32 under Hugging Face: the layer and
    first_state refuse them, naming the argument, and launch nothing."""
    calls = recorded_ops(monkeypatch)
    layer = meta_layer(False, torch.float32)
    x = torch.empty(M, HIDDEN, device=META, dtype=torch.float32)
    state = coda.nn.ResidualState.of(x.bfloat16(), x.bfloat16(), torch.empty(8, device=META), 0)
    positions = torch.empty(M, dtype=torch.int32, device=META)
    with cuda_autocast(autocast) if autocast else contextlib.nullcontext():
        want = "autocast dtype torch.float16" if autocast else "first_state: x is float32 outside autocast"
        with pytest.raises(coda.nn.UnsupportedModel, match=want):
            coda.nn.first_state(x, layer.input_norm_weight)
        want = "autocast dtype torch.float16" if autocast else "CodaDecoderLayer: [a-z_]+ is float32 outside autocast"
        with pytest.raises(coda.nn.UnsupportedModel, match=want):
            layer(state, positions, batch=2)
    assert calls == []


@pytest.mark.parametrize("reentrant", [None, False, True], ids=["default", "non_reentrant", "reentrant"])
def test_checkpointed_layer_recomputes_its_forward_in_the_backward(monkeypatch, reentrant):
    """With gradient_checkpointing set (as Hugging Face's gradient_checkpointing_enable sets it, with
    its checkpoint function, reentrant or not), the forward's fused ops run again in the backward,
    and every gradient still arrives with its shape and dtype; in eval mode nothing is checkpointed."""
    import functools

    calls = recorded_ops(monkeypatch)
    layer = meta_layer(False, torch.bfloat16)
    layer.gradient_checkpointing = True
    if reentrant is not None:
        layer._gradient_checkpointing_func = functools.partial(torch.utils.checkpoint.checkpoint,
                                                               use_reentrant=reentrant, preserve_rng_state=False)
    x = torch.empty(M, HIDDEN, device=META, dtype=torch.bfloat16, requires_grad=True)
    positions = torch.empty(M, dtype=torch.int32, device=META)
    out = layer(coda.nn.first_state(x, layer.input_norm_weight), positions, batch=2)
    forward_ops = ("linear_rmsnorm_rope", "linear_residual_rms", "linear_rmsnorm_swiglu")
    assert [n for n, _ in calls if n in forward_ops] == ["linear_rmsnorm_rope", "linear_residual_rms",
                                                         "linear_rmsnorm_swiglu", "linear_residual_rms"]
    out.x.backward(torch.empty_like(out.x))
    names = [n for n, _ in calls]
    assert [names.count(n) for n in forward_ops] == [2, 4, 2], names
    assert x.grad is not None and x.grad.shape == x.shape
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape and p.grad.dtype == p.dtype, name

    calls.clear()
    layer.eval()
    with torch.no_grad():
        layer(coda.nn.first_state(x, layer.input_norm_weight), positions, batch=2)
    assert sum(n in forward_ops for n, _ in calls) == 4
