#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The one list of compiled GEMM kernels, and the generator of their translation units.

Each epilogue program is one translation unit with all its configs, and the plain GEMMs one unit
per (operand layout, D type): nvcc's front ends (parsing CUTLASS) are most of a unit's ~60 s, so a
second kernel in a unit costs far less than a unit of its own; each kernel must still earn its
place: see docs/design.md §10 for why these configs.

CMake runs it at configure time into the build tree (nothing generated is committed):
    python3 scripts/instances.py --out <build>/generated/instances
It rewrites only files whose text changed, so a reconfigure rebuilds only what the list changed.
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

LAYOUTS = ["AkBk", "AkBn", "AmBn"]  # forward, dgrad, wgrad operand layouts (config.hpp)

# TileConfig enumerator -> file-name tag (tile_cluster_schedule)
CONFIGS = {
    "kCoop128x256Cluster1x2": "128x256_1x2_coop",
    "kCoop128x256Cluster2x1": "128x256_2x1_coop",
    "kCoop256x128Cluster1x2": "256x128_1x2_coop",
    "kStreamKCoop128x256Cluster2x1": "128x256_2x1_skcoop",
    "kPingpong128x128Cluster2x1": "128x128_2x1_pingpong",
}

# D dtype -> (DType enumerator, CUTLASS element type, configs compiled for it)
D_TYPES = {
    "bf16": ("kBF16", "cutlass::bfloat16_t", list(CONFIGS)),
    # fp32 D (weight gradients accumulated in fp32): the two most general configs only.
    "f32": ("kF32", "float", ["kCoop128x256Cluster2x1", "kStreamKCoop128x256Cluster2x1"]),
}


# Epilogue programs (kernels/coda/programs/<family>.hpp), compiled for the forward
# layout with bf16 D in one Cooperative and one Pingpong config: what tests/device/epilogue and
# `coda-bench epilogue` run. Program -> its snake_case name.
EPILOGUE_PROGRAMS = {"ResidualRms": "residual_rms", "RowScale": "row_scale",
                     "BiasSiluColSum": "bias_silu_col_sum", "Activation": "activation",
                     "ResidualAdd": "residual_add", "RowSumSquares": "row_sum_squares",
                     "SwiGluPairs": "swiglu_pairs", "RopeRotate": "rope_rotate",
                     "SwiGluPairsGrad": "swiglu_pairs_grad", "RstdRowScale": "rstd_row_scale",
                     "ResidualAccumulate": "residual_accumulate",
                     "CrossEntropyPartials": "cross_entropy_partials",
                     "RstdSwiGluPairs": "rstd_swiglu_pairs", "RstdRopeRotate": "rstd_rope_rotate",
                     "CrossEntropyLoss": "cross_entropy_loss", "QkNormRope": "qk_norm_rope",
                     "RstdQkNormRope": "rstd_qk_norm_rope", "SwiGluPairsNoD": "swiglu_pairs_no_d",
                     "RstdSwiGluPairsNoD": "rstd_swiglu_pairs_no_d", "SwiGluBwd": "swiglu_bwd",
                     "RmsNormBwd": "rms_norm_bwd", "RmsNormBwdAccumulate": "rms_norm_bwd_accumulate",
                     "WeightGradAccumulate": "weight_grad_accumulate",
                     "QkNormRopeSavePre": "qk_norm_rope_save_pre",
                     "RstdQkNormRopeSavePre": "rstd_qk_norm_rope_save_pre",
                     "BiasGelu": "bias_gelu", "BiasGeluSavePre": "bias_gelu_save_pre",
                     "BiasGeluBwd": "bias_gelu_bwd"}
# The header each program is declared in (kernels/coda/programs/): a program's unit includes only
# that one, so an edit to one family rebuilds only its units.
PROGRAM_HEADERS = {
    "ResidualRms": "residual_rms", "RowScale": "examples", "BiasSiluColSum": "examples",
    "Activation": "examples", "ResidualAdd": "examples", "RowSumSquares": "examples",
    "SwiGluPairs": "swiglu", "RstdSwiGluPairs": "swiglu", "SwiGluPairsNoD": "swiglu",
    "RstdSwiGluPairsNoD": "swiglu", "RopeRotate": "rope", "RstdRopeRotate": "rope",
    "SwiGluPairsGrad": "swiglu_grad", "SwiGluBwd": "swiglu_grad", "RstdRowScale": "rstd_row_scale",
    "ResidualAccumulate": "accumulate", "WeightGradAccumulate": "accumulate",
    "CrossEntropyPartials": "cross_entropy", "CrossEntropyLoss": "cross_entropy",
    "QkNormRope": "qk_norm_rope", "RstdQkNormRope": "qk_norm_rope",
    "QkNormRopeSavePre": "qk_norm_rope", "RstdQkNormRopeSavePre": "qk_norm_rope",
    "RmsNormBwd": "rms_norm_bwd", "RmsNormBwdAccumulate": "rms_norm_bwd",
    "BiasGelu": "bias_gelu", "BiasGeluSavePre": "bias_gelu", "BiasGeluBwd": "bias_gelu"}
# The example programs: compositions no op uses, run by tests/device/epilogue and `coda-bench
# epilogue`. Their units go to <out>/examples/, built into the coda_examples library, not libcoda
# (src/epilogue/example_launchers.hpp).
EXAMPLE_PROGRAMS = {"RowScale", "BiasSiluColSum", "Activation", "ResidualAdd", "RowSumSquares",
                    "SwiGluPairsGrad", "ResidualAccumulate", "CrossEntropyPartials"}
# Programs that store no D (their epilogue writes only their own outputs); the rest write bf16 D.
NO_D_PROGRAMS = {"CrossEntropyLoss", "SwiGluPairsNoD", "RstdSwiGluPairsNoD"}
EPILOGUE_CONFIGS = ["kCoop128x256Cluster2x1", "kPingpong128x128Cluster2x1"]
# The operand layout a program is compiled for (config.hpp): the forward's unless listed. Backward
# programs run in dgrad GEMMs (dY = dOut · W with W in nn.Linear layout).
PROGRAM_LAYOUTS = {"SwiGluBwd": "AkBn", "RmsNormBwd": "AkBn", "RmsNormBwdAccumulate": "AkBn",
                   "BiasGeluBwd": "AkBn", "WeightGradAccumulate": "AmBn"}
# Programs with an fp32 D (weight gradients accumulated across chunks), in the Cooperative config
# only (the plain fp32 GEMMs' config); the rest write bf16 D in both EPILOGUE_CONFIGS.
F32_D_PROGRAMS = {"WeightGradAccumulate"}


def d_type_of(program):
    return "void" if program in NO_D_PROGRAMS else "f32" if program in F32_D_PROGRAMS else "bf16"


def epilogue_instances():
    for program, pname in EPILOGUE_PROGRAMS.items():
        d = d_type_of(program)
        layout = PROGRAM_LAYOUTS.get(program, "AkBk")
        configs = EPILOGUE_CONFIGS[:1] if program in F32_D_PROGRAMS else EPILOGUE_CONFIGS
        for config in configs:
            yield f"epi_{pname}_{layout.lower()}_{d}_{CONFIGS[config]}", program, config, layout


def epilogue_tu_name(program):
    """One translation unit per program holds all its configs: the CUTLASS headers are parsed once
    for both kernels (nvcc's front ends are most of a kernel's compile time), and an edit to one
    program rebuilds only its file."""
    layout = PROGRAM_LAYOUTS.get(program, "AkBk")
    return f"epi_{EPILOGUE_PROGRAMS[program]}_{layout.lower()}_{d_type_of(program)}"


def epilogue_tu(program, kernels):
    element = {"void": "void", "f32": "float", "bf16": "cutlass::bfloat16_t"}[d_type_of(program)]
    body = ""
    for name, _, config, layout in kernels:
        body += (
            f"void {name}(const gemm::GemmProblem& p, const gemm::KernelChoice& c,\n"
            + f"    const {program}::Params& e, void* workspace, cudaStream_t stream) {{\n"
            + f"  using K = gemm::GemmKernel<gemm::OperandLayout::k{layout}, {element},\n"
            + f"                             gemm::TileConfig::{config}, {program}>;\n"
            + "  K::FusionArguments fusion{};\n"
            + f"  {program}::fill(fusion, e);\n"
            + "  gemm::launch_gemm<K>(p, c, fusion, workspace, stream);\n"
            + "}\n\n"
        )
    return (
        HEADER
        + f'#include "coda/programs/{PROGRAM_HEADERS[program]}.hpp"\n'
        + '#include "coda/gemm/launch.hpp"\n\n'
        + "namespace coda::epilogue::instances {\n\n"
        + body
        + "}  // namespace coda::epilogue::instances\n"
    )


def epilogue_dispatch_inc():
    lines = [HEADER, "// CODA_EPILOGUE_INSTANCE(program, config, layout, name)\n"]
    for name, program, config, layout in epilogue_instances():
        lines.append(f"CODA_EPILOGUE_INSTANCE({program}, {config}, k{layout}, {name})\n")
    return "".join(lines)


def instances():
    for dname, (dtype, _, configs) in D_TYPES.items():
        for layout in LAYOUTS:
            for config in configs:
                name = f"gemm_{layout.lower()}_{dname}_{CONFIGS[config]}"
                yield name, layout, dname, dtype, config


HEADER = "// GENERATED by scripts/instances.py from its list; do not edit.\n"


def instance_tu(kernels):
    """All plain-GEMM kernels of one (operand layout, D type) in one translation unit, for the same
    reason as the epilogue programs (epilogue_tu_name)."""
    body = ""
    for name, layout, dname, _, config in kernels:
        element = D_TYPES[dname][1]
        body += (
            f"void {name}_run(const GemmProblem& p, const KernelChoice& c, const float* alpha,\n"
            + "    void* workspace, cudaStream_t stream) {\n"
            + f"  PlainGemm<OperandLayout::k{layout}, {element}, TileConfig::{config}>::run(p, c, alpha,"
            + " workspace, stream);\n}\n\n"
            + f"std::size_t {name}_workspace(const GemmProblem& p, const KernelChoice& c) {{\n"
            + f"  return PlainGemm<OperandLayout::k{layout}, {element}, TileConfig::{config}>::"
            + "workspace_bytes(p, c);\n}\n\n"
        )
    return (
        HEADER
        + '#include "coda/gemm/plain_gemm.hpp"\n\n'
        + "namespace coda::gemm::instances {\n\n"
        + body
        + "}  // namespace coda::gemm::instances\n"
    )


def dispatch_inc():
    lines = [HEADER, "// CODA_GEMM_INSTANCE(layout, d_dtype, config, name)\n"]
    for name, layout, _, dtype, config in instances():
        lines.append(f"CODA_GEMM_INSTANCE(k{layout}, {dtype}, {config}, {name})\n")
    return "".join(lines)


def expected_files(out):
    assert EXAMPLE_PROGRAMS <= set(EPILOGUE_PROGRAMS), "EXAMPLE_PROGRAMS names a program not listed"
    assert set(PROGRAM_HEADERS) == set(EPILOGUE_PROGRAMS), "every program needs its header, once"
    for header in set(PROGRAM_HEADERS.values()):
        assert (ROOT / "kernels/coda/programs" / f"{header}.hpp").is_file(), f"no {header}.hpp"
    files = {out / "dispatch.inc": dispatch_inc(),
             out / "epilogue_dispatch.inc": epilogue_dispatch_inc()}
    by_program = {}
    for kernel in epilogue_instances():
        by_program.setdefault(kernel[1], []).append(kernel)
    for program, kernels in by_program.items():
        folder = out / "examples" if program in EXAMPLE_PROGRAMS else out
        files[folder / f"{epilogue_tu_name(program)}_sm90a.cu"] = epilogue_tu(program, kernels)
    by_layout = {}
    for kernel in instances():
        by_layout.setdefault((kernel[1], kernel[2]), []).append(kernel)
    for (layout, dname), kernels in by_layout.items():
        files[out / f"gemm_{layout.lower()}_{dname}_sm90a.cu"] = instance_tu(kernels)
    return files


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder of the generated files")
    args = parser.parse_args()
    out = args.out
    files = expected_files(out)
    (out / "examples").mkdir(parents=True, exist_ok=True)
    generated = set(out.glob("*_sm90a.cu")) | set(out.glob("examples/*_sm90a.cu")) | set(out.glob("*.inc"))
    for p in generated - set(files):
        p.unlink()
    for p, text in files.items():
        if not p.exists() or p.read_text() != text:
            p.write_text(text)
    examples = sum(p.parent.name == "examples" for p in files)
    print(f"{len(files) - 2 - examples} kernel translation units in {out}, {examples} in {out / 'examples'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
