# SPDX-License-Identifier: BSD-3-Clause
"""The CODA decoder layer's autograd wiring on meta tensors (the ops' fake kernels; no GPU, so it
runs in CI): forward and backward reach every parameter and the input with gradients of their own
shapes, through the ops the design says — the RMSNorm backwards add the residual gradient inside
their GEMMs (one copying, the QKV one in place), the RoPE backward reads dQ, dK, dV as three blocks
— and nothing else (no elementwise add or concatenation of gradients on the way)."""
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


@pytest.mark.parametrize("qk_norm", [False, True], ids=["llama", "qwen3"])
def test_layer_backward_on_meta_tensors(monkeypatch, qk_norm):
    calls = []
    for op in ops.ALL_OPS:
        def recorded(*args, _op=op):
            calls.append((_op.name, args))
            return _op(*args)
        monkeypatch.setattr(ops, op.name, recorded)

    layer = coda.nn.CodaDecoderLayer(HIDDEN, HEADS, KV, HD, FFN, 1e-5, qk_norm, device=META)
    layer.frequencies = layout.rope_frequencies(HEADS, KV, HD, 5e5, None, META)
    object.__setattr__(layer, "next_norm_weight", torch.empty(HIDDEN, device=META, dtype=torch.bfloat16))
    x = torch.empty(M, HIDDEN, device=META, dtype=torch.bfloat16, requires_grad=True)
    out = layer(coda.nn.first_state(x, layer.input_norm_weight), torch.empty(M, dtype=torch.int32, device=META),
                batch=2)
    with AtenLog() as log:
        out.x.backward(torch.empty_like(out.x))

    assert x.grad is not None and x.grad.shape == x.shape
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape and p.grad.dtype == p.dtype, name
    names = [name for name, _ in calls]
    assert names.count("linear_rmsnorm_bwd") == 1 and names.count("linear_rmsnorm_bwd_add_") == 1, names
    rope = "qknorm_rope_bwd" if qk_norm else "rope_bwd"
    (args,) = [a for n, a in calls if n == rope]
    blocks = [args[1], *args[-2:]]  # dQ, then dK and dV as the trailing arguments
    assert [b.shape[1] for b in blocks] == [HEADS * HD, KV * HD, KV * HD]
    summed = [n for n in log.names if n in ("aten.cat", "aten.add", "aten.add_")]
    assert not summed, f"the backward concatenated or added tensors outside the GEMMs: {summed}"
