#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The static instruction mix of one epilogue kernel against the plain GEMM of its config and
layout, without a GPU: each is compiled alone here (one kernel a unit, the build's nvcc flags) and
disassembled, and the opcodes are counted. The difference is what the epilogue program adds; it is
also printed per output element a thread (the epilogue unrolls over its tile: a Pingpong tile is one
warp group's, a Cooperative tile two's).

    python3 scripts/sass_mix.py KERNEL [--top 30] [--nvcc nvcc] [--cuobjdump cuobjdump]
    python3 scripts/sass_mix.py KERNEL --spills
    python3 scripts/sass_mix.py --list

KERNEL: a name from scripts/instances.py's list (--list prints them), e.g.
epi_swiglu_bwd_akbn_bf16_128x128_2x1_pingpong. Needs cuobjdump and nvdisasm, which a CUDA
toolkit without its binary utilities lacks: `pip download --no-deps nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm`, unzip both, and pass --cuobjdump and --nvdisasm (each wheel's
nvidia/cu13/bin/). ~1 min a kernel on 2 cores.

What it answers: how many instructions an epilogue node costs, before a GPU is at hand to time it
(compare two versions of a program by running this on each), and whether its kernel spills
(ptxas's bytes of spill stores and loads, fused and plain; `--spills` prints only those and needs
no disassembler). A spill beside a tile's accumulators is what sank the QK-norm programs on a
192-row Pingpong tile (docs/design.md §10.3). Static counts, not executed ones: a
branch-free epilogue unrolled over its tile executes each about once a tile, but the mainloop's
and the scheduler's loops do not. Read it beside Nsight Compute's executed counts
(docs/benchmarks.md §8), never as a timing.
"""
import argparse
import collections
import copy
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from instances import ROOT, accumulators_per_thread, epilogue_instances, epilogue_tu, instance_tu, instances

INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T] )?([A-Z][A-Z0-9_.]*)", re.M)
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def spill_bytes(ptxas_log):
    """(spill store, spill load) bytes summed over the kernels of a `ptxas -v` log."""
    spills = [tuple(map(int, m)) for m in SPILLS.findall(ptxas_log)]
    return sum(st for st, _ in spills), sum(ld for _, ld in spills)


def compile_unit(source, work, stem, args):
    """The unit's cubin, and ptxas's (spill store, spill load) bytes summed over its kernels."""
    unit, cubin = work / f"{stem}.cu", work / f"{stem}.cubin"
    unit.write_text(source)
    run = subprocess.run([args.nvcc, "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr",
                          "-gencode", "arch=compute_90a,code=sm_90a", "-cubin", "-Xptxas=-v",
                          f"-I{ROOT / 'include'}", f"-I{ROOT / 'kernels'}", f"-isystem={args.cutlass}",
                          "-o", str(cubin), str(unit)], capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"sass_mix: nvcc failed on {stem}:\n{run.stderr.strip()}")
    return cubin, spill_bytes(run.stderr)


def count_instructions(cubin, stem, args):
    """Opcode counts of the cubin's SASS (cuobjdump and nvdisasm)."""
    folder = str(pathlib.Path(args.nvdisasm).resolve().parent)  # cuobjdump runs nvdisasm from PATH
    env = dict(os.environ, PATH=folder + os.pathsep + os.environ.get("PATH", ""))
    run = subprocess.run([args.cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, env=env)
    if run.returncode:
        sys.exit(f"sass_mix: cuobjdump failed: {run.stderr.strip()}")
    sass = run.stdout
    counts = collections.Counter(op for op in INSTRUCTION.findall(sass) if op != "NOP")  # NOP: alignment
    if not counts:
        sys.exit(f"sass_mix: no instructions in cuobjdump's output for {stem} (is nvdisasm found?)")
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", nargs="?")
    parser.add_argument("--list", action="store_true", help="print the kernel names and stop")
    parser.add_argument("--top", type=int, default=30, help="opcodes to print, largest difference first")
    parser.add_argument("--spills", action="store_true",
                        help="print ptxas's spill bytes of both kernels and stop (no disassembler)")
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    parser.add_argument("--nvdisasm", help="default: beside cuobjdump, else on PATH")
    parser.add_argument("--cutlass", default=str(ROOT / "third_party" / "cutlass" / "include"))
    args = parser.parse_args()
    beside = pathlib.Path(args.cuobjdump).resolve().with_name("nvdisasm")
    args.nvdisasm = args.nvdisasm or (str(beside) if beside.exists() else shutil.which("nvdisasm") or "nvdisasm")
    kernels = {kernel: (program, config) for kernel, program, config in epilogue_instances()}
    if args.list or not args.kernel:
        print("\n".join(kernels))
        return 0
    if args.kernel not in kernels:
        sys.exit(f"sass_mix: no kernel {args.kernel} (--list prints them)")
    program, config = kernels[args.kernel]
    alone = copy.copy(program)
    alone.configs = [config]
    # The plain GEMM of the same config and layout, bf16 D, as scripts/instances.py lists it.
    plain = next(k for k in instances() if k[1] == program.layout and k[2] == "bf16" and k[4] == config)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        fused_cubin, fused_spills = compile_unit(epilogue_tu([alone]), work, "fused", args)
        base_cubin, base_spills = compile_unit(instance_tu([plain]), work, "plain", args)
        print(f"spill stores / loads, bytes: {args.kernel} {fused_spills[0]} / {fused_spills[1]}; "
              f"plain GEMM {plain[0]} {base_spills[0]} / {base_spills[1]}")
        if args.spills:
            return 0
        fused = count_instructions(fused_cubin, "fused", args)
        base = count_instructions(base_cubin, "plain", args)
    per = accumulators_per_thread(config)  # outputs a consumer thread holds for one tile
    print(f"{args.kernel}: {sum(fused.values())} instructions; plain GEMM {plain[0]}: "
          f"{sum(base.values())}; {per} outputs a thread a tile")
    print(f"{'opcode':<34}{'fused':>8}{'plain':>8}{'added':>8}{'a output':>10}")
    rows = sorted(set(fused) | set(base), key=lambda op: (-abs(fused[op] - base[op]), op))
    for op in rows[:args.top]:
        added = fused[op] - base[op]
        print(f"{op:<34}{fused[op]:>8}{base[op]:>8}{added:>8}{added / per:>10.2f}")
    added = sum(fused.values()) - sum(base.values())
    print(f"{'all':<34}{sum(fused.values()):>8}{sum(base.values()):>8}{added:>8}{added / per:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
