# SPDX-License-Identifier: BSD-3-Clause
"""Python-level benchmarks of CODA against stock PyTorch, Hugging Face and Liger-Kernel.

`python -m coda.bench layer [args]`: one Llama-3 decoder layer (layer.py). The kernel-level
benchmarks are the C++ `coda-bench` (bench/); these time what a PyTorch training loop calls.
Nothing here imports the native module until the `coda` variant is built.
"""
