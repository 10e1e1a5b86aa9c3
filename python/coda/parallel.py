# SPDX-License-Identifier: BSD-3-Clause
"""Data parallelism for coda-train when torchrun launches it (one process a GPU): the process
group from torchrun's environment, each rank's rows of a step's batch, the wrapper every variant
trains under, and the per-step losses averaged over the ranks.

  ddp   DistributedDataParallel: every rank holds the whole model, gradients all-reduced;
  fsdp  FSDP2 as large models train: fully_shard on each decoder layer, then on the model (a
        patched model is sharded after patching; coda.nn gathers the one vector a layer reads
        from the next layer's unit, its norm weight); fp32 master weights (--precision amp)
        under its MixedPrecisionPolicy, bf16 compute and fp32 gradient reduction, not autocast.
Without torchrun (no WORLD_SIZE in the environment) nothing is distributed."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import torch

MODES = ("ddp", "fsdp")


@dataclass(frozen=True)
class Ranks:
    rank: int = 0
    world: int = 1
    mode: Optional[str] = None  # None: one process, no wrapper

    @property
    def leader(self) -> bool:
        return self.rank == 0


def start(mode: str, device: torch.device) -> tuple[Ranks, torch.device]:
    """Joins torchrun's process group (NCCL on GPUs, gloo on the CPU); returns this rank and its
    device (cuda:LOCAL_RANK)."""
    if "WORLD_SIZE" not in os.environ:
        return Ranks(), device
    import torch.distributed as dist

    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Ranks(dist.get_rank(), dist.get_world_size(), mode), device


def stop(ranks: Ranks) -> None:
    if ranks.mode is not None:
        import torch.distributed as dist

        dist.destroy_process_group()


def rows(batches: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """This rank's rows of every step's batch (steps, batch, seq): the ranks together train on the
    whole batch, as one process would."""
    batch = batches.shape[1]
    if batch % ranks.world:
        raise ValueError(f"--batch {batch} must be a multiple of the {ranks.world} ranks")
    per = batch // ranks.world
    return batches[:, ranks.rank * per:(ranks.rank + 1) * per]


def casts_parameters(ranks: Ranks, fp32_masters: bool) -> bool:
    """Whether the wrapper itself runs fp32 master weights in bf16: FSDP2 does, through its
    MixedPrecisionPolicy (bf16 parameters all-gathered for each unit's forward and backward, bf16
    gradients reduced in fp32 into the fp32 shards), as FSDP2 trains; then no autocast is needed.
    DDP, and one process, keep the masters fp32 and run the forward under autocast instead."""
    return fp32_masters and ranks.mode == "fsdp"


def wrap(model: torch.nn.Module, ranks: Ranks, device: torch.device,
         fp32_masters: bool = False) -> torch.nn.Module:
    """The module to call for the forward (DDP's wrapper; FSDP2 shards the model in place)."""
    if ranks.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    if ranks.mode == "fsdp":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        policy = (MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
                  if casts_parameters(ranks, fp32_masters) else MixedPrecisionPolicy())  # else: own dtypes
        for layer in model.model.layers:
            fully_shard(layer, mp_policy=policy)
        return fully_shard(model, mp_policy=policy)
    return model


def mean_over_ranks(values: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """Each rank's per-step mean losses → the whole batch's (every rank has as many tokens)."""
    if ranks.mode is None:
        return values
    import torch.distributed as dist

    values = values.float().clone()
    dist.all_reduce(values)
    return values / ranks.world
