# SPDX-License-Identifier: BSD-3-Clause
"""CODA: fused-epilogue GEMMs for Transformer training on NVIDIA Hopper, for PyTorch.

  coda.patch_llama(model) / coda.patch_qwen3(model) / coda.unpatch(model)   Hugging Face drop-in
  coda.nn        the CODA decoder layer, its autograd Functions and the model-level forward
  coda.ops       every kernel as a torch custom op (torch.ops.coda.*)
  coda-train     the end-to-end training comparison (python -m coda.train)

The native module loads on first use of any of these, so `coda.train` and `coda.bench` can start
(and report a missing build clearly) without it.
"""
import importlib

__version__ = "0.1.0"
_LAZY = {"patch_llama": "hf", "patch_qwen3": "hf", "unpatch": "hf", "UnsupportedModel": "nn.config"}
__all__ = [*_LAZY, "__version__"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name in ("nn", "ops"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'coda' has no attribute {name!r}")
