# SPDX-License-Identifier: BSD-3-Clause
"""Sharded parameters are refused, naming what to do instead, before any op runs (CPU, a one-rank
gloo group; CI): a model whose parameters are already DTensors is not patched, a CODA layer that
fully_shard made a unit of its own refuses its forward (it reads the next layer's norm weight,
which that layer's unit would hold sharded), and every entry's dtype check refuses a DTensor.
Sharding the whole model as one unit and DistributedDataParallel run: test_gpu_distributed.py."""
import pytest
import torch
import torch.distributed as dist

import coda
from coda.nn import layout
from hf_layers import make_config
from coda.nn.layer import ResidualState
from coda.nn.precision import require_computable

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


def test_a_model_sharded_before_patching_is_refused(one_rank_group):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_config(make_config("llama", "tiny")).to(torch.bfloat16)
    fsdp.fully_shard(model, mesh=one_rank_group)
    with pytest.raises(coda.UnsupportedModel, match="DTensor .*patch the model before sharding"):
        coda.patch_llama(model)


def test_a_layer_sharded_on_its_own_refuses_before_any_op(one_rank_group, monkeypatch):
    hidden, heads, kv, hd, ffn, m = 64, 4, 2, 16, 128, 32
    layer = coda.nn.CodaDecoderLayer(hidden, heads, kv, hd, ffn, 1e-5, False)
    for p in layer.parameters():
        torch.nn.init.normal_(p)
    layer.frequencies = layout.rope_frequencies(heads, kv, hd, 5e5, None, torch.device("cpu"))
    object.__setattr__(layer, "next_norm_weight", torch.ones(hidden, dtype=torch.bfloat16))
    fsdp.fully_shard(layer, mesh=one_rank_group)
    called = []
    for op in coda.ops.ALL_OPS:
        monkeypatch.setattr(coda.ops, op.name, lambda *a, _n=op.name: called.append(_n))
    x = torch.randn(m, hidden, dtype=torch.bfloat16)
    state = ResidualState(x, x.clone(), torch.zeros(m, 4), 0)
    with pytest.raises(coda.UnsupportedModel, match=r"fully_shard\(layer\) per decoder layer"):
        layer(state, torch.arange(m, dtype=torch.int32))
    assert called == []


def test_every_entry_refuses_a_dtensor_naming_it(one_rank_group):
    from torch.distributed.tensor import Shard, distribute_tensor

    w = distribute_tensor(torch.ones(64, dtype=torch.bfloat16), one_rank_group, [Shard(0)])
    with pytest.raises(coda.UnsupportedModel, match="where: norm_weight is a DTensor"):
        require_computable("where", x=torch.ones(4, dtype=torch.bfloat16), norm_weight=w)
