# SPDX-License-Identifier: BSD-3-Clause
"""Which parameter dtypes the CODA chain computes from (docs/design.md §9.4).

The kernels compute in bfloat16. Parameters may be
  bfloat16  (model.to(torch.bfloat16)): used as they are;
  float32   the master weights of mixed-precision training — the model stays fp32 and its forward
            runs under torch.autocast("cuda", dtype=torch.bfloat16), as Hugging Face's
            Trainer(bf16=True) and Lightning's "bf16-mixed" run it. Each Function makes a bf16
            copy of the fp32 parameters it reads, once per forward (what autocast does for
            nn.Linear), and returns their gradients in fp32.
float32 parameters outside bf16 autocast are refused rather than silently run in bf16: the model
would compute in fp32 under Hugging Face, so running it in bf16 would change its numerics unasked.
A sharded tensor (a DTensor) is refused too: FSDP2 hands a unit's forward whole parameters, and
coda.nn.model all-gathers the one it reads from the next unit (the next layer's norm weight).
The residual stream is bf16 either way (the fused GEMMs write it), where Hugging Face's model
under autocast keeps it in fp32 (Megatron-LM's default, fp32_residual_connection=False, is bf16)."""
from __future__ import annotations

import sys
from typing import Optional

import torch

from .config import UnsupportedModel

COMPUTE_DTYPE = torch.bfloat16


def is_dtensor(t) -> bool:
    """Whether t is a DTensor: a parameter sharded by FSDP2 or tensor parallelism, whose storage
    holds one shard, not the tensor a kernel would read. No DTensor exists before its module is
    loaded (FSDP2 and tensor parallelism load it), so the class is looked up there: no import on
    every layer's forward."""
    for module in ("torch.distributed.tensor", "torch.distributed._tensor"):  # PyTorch >= 2.5, 2.4
        dtensor = getattr(sys.modules.get(module), "DTensor", None)
        if dtensor is not None:
            return isinstance(t, dtensor)
    return False


def require_computable(where: str, **tensors: Optional[torch.Tensor]) -> None:
    """Raises UnsupportedModel, naming the argument, unless every tensor is bf16, or fp32 under bf16
    autocast on CUDA; None entries are skipped. Called before anything is launched."""
    autocast = torch.is_autocast_enabled("cuda")
    if autocast and torch.get_autocast_dtype("cuda") != COMPUTE_DTYPE:
        raise UnsupportedModel(f"{where}: torch.autocast dtype {torch.get_autocast_dtype('cuda')}: the CODA kernels "
                               "compute in bfloat16 (use dtype=torch.bfloat16)")
    for name, t in tensors.items():
        if is_dtensor(t):
            raise UnsupportedModel(f"{where}: {name} is a DTensor (a shard): the CODA kernels read whole tensors. FSDP2 "
                                   "units unshard their parameters for the forward (fully_shard each decoder layer "
                                   "and the model, after patching); tensor parallelism is not supported")
        if t is None or t.dtype == COMPUTE_DTYPE:
            continue
        if t.dtype != torch.float32:
            raise UnsupportedModel(f"{where}: {name} is {t.dtype}; parameters must be bfloat16, or float32 master "
                                   "weights under torch.autocast('cuda', dtype=torch.bfloat16)")
        if not autocast:
            raise UnsupportedModel(f"{where}: {name} is float32 outside autocast. The CODA kernels compute in "
                                   "bfloat16: run the forward under torch.autocast('cuda', dtype=torch.bfloat16) "
                                   "(mixed precision, e.g. Trainer(bf16=True)), or convert the model with "
                                   "model.to(torch.bfloat16)")


def compute_copy(t: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """t in the compute dtype: a bf16 tensor as it is, an fp32 one rounded to a bf16 copy."""
    return t if t is None or t.dtype == COMPUTE_DTYPE else t.to(COMPUTE_DTYPE)


def dtype_of(t: Optional[torch.Tensor]) -> Optional[torch.dtype]:
    return None if t is None else t.dtype


def scaled_grad(grad: torch.Tensor, g: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """grad · g (the upstream gradient) in `dtype`, one pass: the product in grad's precision,
    rounded once on the write — the bits of (grad * g).to(dtype) without the intermediate copy in
    grad's dtype (for an fp32 ∂W_lm of Qwen3-8B widths that copy is 2.5 GB written and read again
    and 2.5 GB more peak memory)."""
    return torch.mul(grad, g, out=torch.empty(grad.shape, dtype=dtype, device=grad.device))
