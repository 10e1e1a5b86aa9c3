# SPDX-License-Identifier: BSD-3-Clause
"""A patched model under DistributedDataParallel and under FSDP2 (the whole model one unit, or a
unit per decoder layer, resharded after the forward, with or without activation checkpointing),
on two Hopper GPUs (NCCL): after one backward, every gradient is the ranks' mean of the gradients each rank's patched model computes
alone on its own batch; and FSDP2 as it usually trains, fp32 master shards under a
MixedPrecisionPolicy (bf16 compute, fp32 reduction), against the mean of the bf16 model's gradients (deterministic algorithms on, so the same kernels give the same bits), up
to the one bf16 rounding of the reduction, |g − ḡ| ≤ 2⁻⁸·|ḡ| element by element.

Needs two GPUs: skipped with fewer, unless CODA_REQUIRE_GPUS=2 (the device script's two-GPU run),
which fails it instead."""
import os

import pytest
import torch
import torch.distributed.fsdp

from hf_layers import make_config

pytestmark = pytest.mark.hopper

WORLD = 2
if torch.cuda.device_count() < WORLD and os.environ.get("CODA_REQUIRE_GPUS") != str(WORLD):
    pytest.skip(f"needs {WORLD} GPUs (CODA_REQUIRE_GPUS={WORLD} fails instead)", allow_module_level=True)

ROUNDING = 2.0 ** -8  # bf16: half an ulp, relative to the value


def _patched_model(model_type, dtype=torch.bfloat16):
    import coda
    from transformers import AutoModelForCausalLM

    torch.manual_seed(1234)  # the same weights on every rank; bf16 ones are the fp32 ones rounded
    model = AutoModelForCausalLM.from_config(make_config(model_type, "tiny")).to("cuda", torch.float32)
    model = model.to(dtype)
    return coda.patch_llama(model) if model_type == "llama" else coda.patch_qwen3(model)


def _grads(model):
    return {n: (p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad).float()
            for n, p in model.named_parameters()}


def _worker(rank, store, mode, model_type):
    import torch.distributed as dist

    import coda
    from coda.nn.layer import CodaDecoderLayer
    from coda.train import enable_checkpointing

    chains = []  # the layers' forward chains run under activation checkpointing: twice each
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    try:
        torch.use_deterministic_algorithms(True)
        model = _patched_model(model_type)
        gen = torch.Generator(device="cuda").manual_seed(99 + rank)  # each rank its own batch
        ids = torch.randint(0, model.config.vocab_size, (2, 160), device="cuda", generator=gen)

        model(input_ids=ids, labels=ids).loss.backward()  # this rank alone
        mean = _grads(model)
        for g in mean.values():
            dist.all_reduce(g)  # fp32: exact for two bf16 values
            g /= WORLD
        model.zero_grad(set_to_none=True)

        if mode == "fsdp_mixed_precision":
            # fp32 masters, sharded; FSDP2 casts each unit's parameters to bf16 for its forward and
            # backward and reduces the bf16 gradients in fp32: the same bf16 arithmetic as above.
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

            model = _patched_model(model_type, torch.float32)
            policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            for layer in model.model.layers:
                fully_shard(layer, mp_policy=policy)
            wrapped = fully_shard(model, mp_policy=policy)
        elif mode == "ddp":
            from torch.nn.parallel import DistributedDataParallel

            wrapped = DistributedDataParallel(model, device_ids=[rank])
        else:
            from torch.distributed.fsdp import fully_shard

            if mode == "fsdp_checkpointing":  # each layer's forward recomputed inside its unit's backward
                enable_checkpointing(model)
                chain = CodaDecoderLayer._chain
                CodaDecoderLayer._chain = lambda self, *a: chains.append(self) or chain(self, *a)
            if mode in ("fsdp_per_layer", "fsdp_checkpointing"):  # the usual layout: a unit per layer
                for layer in model.model.layers:
                    fully_shard(layer)
            wrapped = fully_shard(model)
        wrapped(input_ids=ids, labels=ids).loss.backward()
        if mode == "fsdp_checkpointing":
            assert len(chains) == 2 * len(model.model.layers), f"{len(chains)} forwards of the layers' chain"
        got = _grads(model)
        assert got.keys() == mean.keys()
        if mode == "fsdp_mixed_precision":
            assert all(p.dtype == torch.float32 for p in model.parameters()), "the masters stay fp32"
        for name, g in got.items():
            excess = (g - mean[name]).abs() - ROUNDING * mean[name].abs()
            assert excess.max().item() <= 0, (
                f"{mode} rank {rank}: {name}: |g - mean| exceeds 2^-8 |mean| by {excess.max().item():.3g}")
            assert mean[name].abs().max().item() > 0, f"{name}: no gradient reached it"
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("model_type", ["llama", "qwen3"])
@pytest.mark.parametrize("mode", ["ddp", "fsdp_whole_model", "fsdp_per_layer", "fsdp_mixed_precision",
                                  "fsdp_checkpointing"])
def test_data_parallel_gradients_are_the_mean_of_the_ranks(tmp_path, mode, model_type):
    if mode != "ddp" and not hasattr(torch.distributed.fsdp, "fully_shard"):
        pytest.skip("this PyTorch has no FSDP2 (torch.distributed.fsdp.fully_shard, 2.6+)")
    torch.multiprocessing.spawn(_worker, args=(str(tmp_path / "store"), mode, model_type), nprocs=WORLD, join=True)
