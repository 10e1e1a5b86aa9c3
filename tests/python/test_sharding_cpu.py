# SPDX-License-Identifier: BSD-3-Clause
"""FSDP2 and sharded tensors, on the CPU (a one-rank gloo group; CI): what a unit per decoder layer
needs from coda.nn without running a kernel — the next layer's norm weight, still sharded while
the previous layer runs, all-gathered bit for bit; the residual stream visible to FSDP2 as
tensors, its fp32 statistics untouched by FSDP2's mixed-precision input cast — and the refusals:
a model sharded before patching, a DTensor at any entry. The training itself on two GPUs:
test_gpu_distributed.py."""
import pytest
import torch
import torch.distributed as dist

import coda
from coda.nn.layer import ResidualState
from coda.nn import model as coda_model
from coda.nn.model import run_layers, whole
from coda.nn.precision import require_computable
from hf_layers import make_config

fsdp = pytest.importorskip("torch.distributed.fsdp")
if not hasattr(fsdp, "fully_shard"):
    pytest.skip("this PyTorch has no FSDP2 (torch.distributed.fsdp.fully_shard, 2.6+)", allow_module_level=True)


@pytest.fixture
def one_rank_group(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    from torch.distributed.device_mesh import init_device_mesh

    try:
        yield init_device_mesh("cpu", (1,))
    finally:
        dist.destroy_process_group()


def _stream(m=8, d=16, dtype=torch.bfloat16):
    x = torch.randn(m, d, dtype=dtype, requires_grad=True)
    return ResidualState.of(x, torch.randn(m, d, dtype=dtype), torch.randn(m, 3, dtype=torch.float32), d)


def test_the_next_layers_norm_weight_is_gathered_whole(one_rank_group):
    from torch.distributed.tensor import Shard, distribute_tensor

    w = torch.randn(64, dtype=torch.bfloat16)
    shard = distribute_tensor(w, one_rank_group, [Shard(0)])
    got = whole(shard)
    assert type(got) is torch.Tensor and torch.equal(got, w) and not got.requires_grad
    assert whole(w) is w  # an unsharded parameter as it is
    master = torch.randn(64)  # an fp32 master shard: rounded to bf16, as its own unit computes it
    got = whole(distribute_tensor(master, one_rank_group, [Shard(0)]))
    assert got.dtype == torch.bfloat16 and torch.equal(got, master.to(torch.bfloat16))


def test_every_norm_weight_is_gathered_before_the_first_layer_runs(monkeypatch):
    """A gather between two layers would be a collective queued behind the previous layer's
    compute, and FSDP2's all-gather of the next unit behind it (one NCCL stream a process group):
    no overlap of the forward's communication. So run_layers gathers every norm weight first, and
    each layer still gets the next layer's (the last one the final norm's)."""
    events = []
    monkeypatch.setattr(coda_model, "whole", lambda w: events.append(("gather", w)) or w)
    monkeypatch.setattr(coda_model, "first_state", lambda x, w: events.append(("first", w)) or "state")

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.input_norm_weight = torch.nn.Parameter(torch.randn(4))

        def forward(self, state, positions, batch, documents, next_norm_weight):
            events.append(("layer", next_norm_weight))
            return state

    layers = torch.nn.ModuleList(Layer() for _ in range(3))
    final = torch.randn(4)
    assert run_layers(torch.zeros(1, 2, 4), layers, final, None) == "state"
    assert [kind for kind, _ in events] == ["gather"] * 3 + ["first"] + ["layer"] * 3
    expected = [layer.input_norm_weight for layer in layers] + [final]
    assert all(w is e for (_, w), e in zip(events[3:], expected))


def test_the_stream_crosses_an_fsdp2_unit_with_its_statistics_in_fp32(one_rank_group):
    """FSDP2 with mixed precision casts the floating tensors of a unit's inputs to param_dtype: x
    and h are bf16 already; the fp32 Σx² partials must reach the layer unchanged, bit for bit."""
    seen = {}

    class Unit(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(16))

        def forward(self, state: ResidualState):
            seen["state"] = state
            return ResidualState.of(state.x * self.w, state.h, state.stats, state.stats_k)

    unit = Unit()
    fsdp.fully_shard(unit, mesh=one_rank_group, mp_policy=fsdp.MixedPrecisionPolicy(param_dtype=torch.bfloat16))
    state = _stream()
    out = unit(state)
    inner = seen["state"]
    assert inner.stats.dtype == torch.float32 and torch.equal(inner.stats, state.stats)
    assert inner.x.dtype == torch.bfloat16 and inner.stats_k == state.stats_k
    assert isinstance(out, ResidualState) and out.stats.dtype == torch.float32
    leaves = torch.utils._pytree.tree_leaves(state)
    assert any(t is state.x for t in leaves)  # FSDP2 hooks the backward on it


def test_a_model_sharded_before_patching_is_refused(one_rank_group):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_config(make_config("llama", "tiny")).to(torch.bfloat16)
    fsdp.fully_shard(model, mesh=one_rank_group)
    with pytest.raises(coda.UnsupportedModel, match="DTensor .*patch the model before sharding"):
        coda.patch_llama(model)


def test_every_entry_refuses_a_dtensor_naming_it(one_rank_group):
    from torch.distributed.tensor import Shard, distribute_tensor

    w = distribute_tensor(torch.ones(64, dtype=torch.bfloat16), one_rank_group, [Shard(0)])
    with pytest.raises(coda.UnsupportedModel, match="where: norm_weight is a DTensor"):
        require_computable("where", x=torch.ones(4, dtype=torch.bfloat16), norm_weight=w)
