# SPDX-License-Identifier: BSD-3-Clause
"""Dispatch: `python -m coda.bench <benchmark> [args]`; `<benchmark> --help` lists its arguments."""
from __future__ import annotations

import importlib
import sys

BENCHMARKS = {"kernels": "coda.bench.kernels", "ksweep": "coda.bench.ksweep", "layer": "coda.bench.layer",
              "layer-tune": "coda.bench.layer_tune",
              "ops": "coda.bench.ops",
              "overhead": "coda.bench.overhead", "tune": "coda.bench.tune"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in BENCHMARKS:
        print(f"usage: python -m coda.bench {{{','.join(BENCHMARKS)}}} [args]", file=sys.stderr)
        return 2
    return importlib.import_module(BENCHMARKS[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
