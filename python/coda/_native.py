# SPDX-License-Identifier: BSD-3-Clause
"""The bridge to the native module coda._C: torch tensors as the (pointer, dtype, shape, strides,
device) tuples it reads, and the current CUDA stream as an int. Kept tiny and allocation-free:
it runs on every op call (the per-op host budget is a few microseconds)."""
from __future__ import annotations

import torch

try:
    from . import _C
except ImportError as e:  # pragma: no cover - a source checkout without a build
    raise ImportError(
        "coda: the native module coda._C is missing; install the package with "
        "`pip install .` from the repository root (it builds the CUDA kernels)"
    ) from e

# The codes of coda::DType (include/coda/tensor.hpp).
_DTYPE_CODE = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2, torch.int32: 3, torch.int64: 4}


# An empty TensorView (null data, rank 0): how an absent optional tensor crosses.
EMPTY = (0, 0, (), (), 0)


def view(t: torch.Tensor | None):
    """The C++ TensorView of `t` (None: an empty view, i.e. an absent optional argument)."""
    if t is None:
        return EMPTY
    code = _DTYPE_CODE.get(t.dtype)
    if code is None:
        raise TypeError(f"coda: dtype {t.dtype} is not supported (bf16, fp16, fp32, int32, int64)")
    return (t.data_ptr(), code, t.shape, t.stride(), t.get_device())


def stream(t: torch.Tensor) -> int:
    """The current CUDA stream of t's device, as the int the C++ API takes."""
    return torch._C._cuda_getCurrentRawStream(t.get_device())


C = _C
