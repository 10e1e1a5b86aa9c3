#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The shared-memory budget of every compiled epilogue kernel, without a GPU: mainloop stages,
the epilogue's load (StagesC) and store (StagesD) stages and its shared-memory bytes, as
gemm::GemmKernel builds them. It writes one host program that instantiates every kernel type of
scripts/instances.py's list (types only: no device code is generated), compiles it with nvcc on
this machine (~1 min) and runs it.

    python3 scripts/kernel_stages.py [--nvcc nvcc] [--cutlass third_party/cutlass/include]

What it answers: whether an epilogue's buffers cost its kernel a mainloop stage (a 128 x 256 x 64
Cooperative stage is 48 KB, a 128 x 128 x 64 Pingpong stage 32 KB, of 227 KB): each kernel's
line ends with "short N" where its mainloop has N stages fewer than the plain GEMM of its config
(printed first). Twelfth session: 14 kernels were a stage short and giving them the stage back
did not make them faster; twenty-sixth: the 1B SwiGLU backward's Pingpong 128 x 128 kernel, a
stage short, got 4-5 % faster on an H100 with it (not on an H200), and its 128 x 192 kernel
slower (bench/RESULTS.md). Read it as a budget and a lead, not as a diagnosis.
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
    lines += ['#include "coda/epilogue/scaled_acc.hpp"']
    lines += ['#include "coda/gemm/kernel.hpp"', "#include <cstdio>", "",
              "using namespace coda;", "using namespace coda::epilogue;", "",
              "template <class K>", "int stages() { return K::CollectiveMainloop::DispatchPolicy::Stages; }",
              "// The K extent a kernel's stages hold (stages x K-block): what compares across K-blocks.",
              "template <class K>", "int k_in_flight() { return stages<K>() * K::kKBlock; }",
              "",
              "// The plain GEMM (D = alpha * acc, bf16) of a config: the stage count an epilogue can cost.",
              "template <gemm::TileConfig C>",
              "using Plain = gemm::GemmKernel<gemm::OperandLayout::kAkBk, cutlass::bfloat16_t, C, ScaledAcc>;",
              "template <gemm::TileConfig C>", "int plain_stages() { return stages<Plain<C>>(); }", "",
              "template <class K, gemm::TileConfig C>", "void show(const char* kernel) {",
              "  const int shortfall = (k_in_flight<Plain<C>>() - k_in_flight<K>()) / K::kKBlock;",
              '  std::printf("%-62s mainloop %d x K %d  StagesC %d  StagesD %d  epilogue smem %6zu%s\\n", kernel,',
              "              stages<K>(), K::kKBlock, int(K::CollectiveEpilogue::DispatchPolicy::StagesC),",
              "              int(K::CollectiveEpilogue::DispatchPolicy::StagesD),",
              "              sizeof(typename K::CollectiveEpilogue::SharedStorage),",
              '              shortfall > 0 ? (shortfall == 1 ? "  short 1" : "  short 2+") : "");',
              "}", "", "int main() {"]
    for config in sorted({config for _, _, config in epilogue_instances()}):
        lines.append(f'  std::printf("plain GEMM {config:<58} mainloop %d\\n", '
                     f"plain_stages<gemm::TileConfig::{config}>());")
    for kernel, program, config in epilogue_instances():
        element = "void" if program.d == "void" else D_TYPES[program.d][1]
        lines.append(f"  show<gemm::GemmKernel<gemm::OperandLayout::k{program.layout}, {element}, "
                     f'gemm::TileConfig::{config}, {program.name}>, gemm::TileConfig::{config}>("{kernel}");')
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
