#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The shared-memory budget of every compiled epilogue kernel, without a GPU: mainloop stages,
the epilogue's load (StagesC) and store (StagesD) stages and its shared-memory bytes, as
gemm::GemmKernel builds them. It writes one host program that instantiates every kernel type of
scripts/instances.py's list (types only: no device code is generated), compiles it with nvcc on
this machine (~1 min) and runs it.

    python3 scripts/kernel_stages.py [--nvcc nvcc] [--cutlass third_party/cutlass/include]

What it answers: whether an epilogue's buffers cost its kernel a mainloop stage (a 128 x 256 x 64
Cooperative stage is 48 KB, a 128 x 128 x 64 Pingpong stage 32 KB, of 227 KB). Twelfth session:
14 kernels were a stage short; giving them the stage back did not make them faster
(bench/RESULTS.md), so read it as a budget, not as a diagnosis.
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

from instances import D_TYPES, PROGRAMS, ROOT, epilogue_instances


def probe_source():
    headers = sorted({p.header for p in PROGRAMS})
    lines = [f'#include "coda/programs/{h}.hpp"' for h in headers]
    lines += ['#include "coda/gemm/kernel.hpp"', "#include <cstdio>", "",
              "using namespace coda;", "using namespace coda::epilogue;", "",
              "template <class K>", "void show(const char* kernel) {",
              '  std::printf("%-62s mainloop %d  StagesC %d  StagesD %d  epilogue smem %6zu\\n", kernel,',
              "              int(K::CollectiveMainloop::DispatchPolicy::Stages),",
              "              int(K::CollectiveEpilogue::DispatchPolicy::StagesC),",
              "              int(K::CollectiveEpilogue::DispatchPolicy::StagesD),",
              "              sizeof(typename K::CollectiveEpilogue::SharedStorage));",
              "}", "", "int main() {"]
    for kernel, program, config in epilogue_instances():
        element = "void" if program.d == "void" else D_TYPES[program.d][1]
        lines.append(f"  show<gemm::GemmKernel<gemm::OperandLayout::k{program.layout}, {element}, "
                     f'gemm::TileConfig::{config}, {program.name}>>("{kernel}");')
    lines += ["}", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--cutlass", default=str(ROOT / "third_party" / "cutlass" / "include"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = pathlib.Path(tmp) / "kernel_stages.cu", pathlib.Path(tmp) / "kernel_stages"
        source.write_text(probe_source())
        subprocess.run([args.nvcc, "-std=c++17", "--expt-relaxed-constexpr", "-arch=sm_90a",
                        "-DNDEBUG", f"-I{ROOT / 'include'}", f"-I{ROOT / 'kernels'}",
                        f"-I{args.cutlass}", "-o", str(binary), str(source)], check=True)
        return subprocess.run([str(binary)]).returncode


if __name__ == "__main__":
    sys.exit(main())
