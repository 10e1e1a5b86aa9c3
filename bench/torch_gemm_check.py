# SPDX-License-Identifier: BSD-3-Clause
"""Is PyTorch's GEMM faster than `coda-bench`'s cuBLAS baseline, or is the baseline scripts' single
operand set (large shapes) reusing L2 between calls? F.linear (forward) and dY @ W (dgrad) timed
with one operand set and with four, interleaved, at shapes where the two baselines disagreed.

    python3 bench/torch_gemm_check.py
"""
import torch
import torch.nn.functional as F

from torch_ops_fwd import dev, dt, interleaved

SHAPES = [(16384, 6144, 4096, "fwd"), (16384, 3072, 2048, "fwd"), (8192, 8192, 8192, "fwd"),
          (16384, 14336, 4096, "dgrad"), (16384, 57344, 8192, "fwd")]


def main():
    for m, n, k, kind in SHAPES:
        sets = [(torch.randn(m, k, device=dev, dtype=dt),
                 torch.randn(n, k, device=dev, dtype=dt) / k**0.5 if kind == "fwd"
                 else torch.randn(k, n, device=dev, dtype=dt) / k**0.5) for _ in range(4)]
        run = (lambda a, w: F.linear(a, w)) if kind == "fwd" else (lambda a, w: a @ w)
        t = interleaved({"one_set": lambda i: run(*sets[0]), "four_sets": lambda i: run(*sets[i % 4])}, 5)
        tflops = 2.0 * m * n * k / (t["four_sets"] * 1e-3) / 1e12
        print(f"{kind:5s} {m}x{n}x{k}: one set {t['one_set']:.3f} ms, four sets {t['four_sets']:.3f} ms "
              f"({tflops:.0f} TFLOP/s)", flush=True)
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
