#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The rate (TFLOP/s) each kernel config reached in a `python -m coda.bench ops` JSON, per GEMM
shape: the fused ops' kernels grouped by the config their row names, beside CODA's plain GEMM and
PyTorch's matmul of the same shape.

    python3 scripts/tile_rates.py bench/results/ops_py.h100.json [--m 16384]

Why: a config whose fused kernels sit at one rate whatever their epilogue, while another config
or matmul runs faster on the same shape, is capped by its mainloop, not by its epilogue. That is
how the thirty-sixth session found the Pingpong 128 x 128 tile's L2 bound (docs/design.md §10.3):
640-695 TFLOP/s on the H100 at the QKV shapes, for row scale, RoPE and QK-norm alike. Forward
rows only (2·M·N·K FLOPs of the op's one GEMM; the backward and cross-entropy rows run several).
"""
import argparse
import json
import statistics
import sys

from issue13_bars import bar_of


# The rows issue13_bars.py holds to the forward bar: one forward GEMM each.
FORWARD = bar_of("linear_rope")[0]


def config_of(kernel):
    """The config part of a row's kernel name ("pingpong_128x192 along n swizzle 2" -> "pingpong_128x192")."""
    return kernel.split(" ")[0] if kernel else None


def rates(rows, m=None):
    """{(N, K): {name: [TFLOP/s, ...]}} over the forward rows (at M = m if given); name is a
    fused kernel's config, or "coda gemm" / "matmul" for the baselines (each row's own timing)."""
    out = {}
    for r in rows:
        mnk, ms, config = r.get("mnk"), r.get("coda_ms"), config_of(r.get("kernel"))
        if not mnk or not ms or not config or bar_of(r["name"])[0] != FORWARD:
            continue
        if m is not None and r["M"] != m:
            continue
        flops = 2.0 * mnk[0] * mnk[1] * mnk[2]
        shape = out.setdefault((mnk[1], mnk[2]), {})
        shape.setdefault(config, []).append(flops / ms / 1e9)
        for name, key in (("coda gemm", "coda_gemm"), ("matmul", "torch_matmul")):
            base = r.get("baseline", {}).get(key)
            if base:
                shape.setdefault(name, []).append(flops / base / 1e9)
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", nargs="+")
    p.add_argument("--m", type=int, default=None, help="only the rows at this M")
    args = p.parse_args(argv)
    for path in args.json:
        doc = json.load(open(path))
        print(f"== {path} ({doc.get('gpu')}, {doc.get('commit')})")
        for (n, k), by_name in sorted(rates(doc["rows"], args.m).items()):
            cells = "; ".join(f"{name} {min(v):.0f}-{max(v):.0f} (median {statistics.median(v):.0f}, {len(v)})"
                              for name, v in sorted(by_name.items()))
            print(f"N = {n}, K = {k}: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
