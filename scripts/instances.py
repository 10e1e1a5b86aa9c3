#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The compiled GEMM kernels, and the generator of their translation units: the plain GEMMs from
the list below, the epilogue programs from their own declarations (read_programs).

The kernels of one program header share translation units, up to MAX_KERNELS_PER_UNIT a unit, and
so do the plain GEMMs of one D type and the example programs: nvcc's front ends (parsing CUTLASS)
are most of a unit's time, so a kernel costs far less in a shared unit than in its own; each kernel
must still earn its place: see docs/design.md §10 for why these configs.

CMake runs it at configure time into the build tree (nothing generated is committed):
    python3 scripts/instances.py --out <build>/generated/instances
It rewrites only files whose text changed, so a reconfigure rebuilds only what the lists changed.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

LAYOUTS = ["AkBk", "AkBn", "AmBn"]  # forward, dgrad, wgrad operand layouts (config.hpp)

# TileConfig enumerator -> file-name tag, read from the one list of configs (include/coda/gemm/config.hpp,
# CODA_TILE_CONFIGS): "coop_128x256_2x1" -> "128x256_2x1_coop".
CONFIG_LINE = re.compile(r'^\s*X\((k\w+), "(\w+?)_(\w+)", ', re.M)


def read_configs():
    text = (ROOT / "include/coda/gemm/config.hpp").read_text()
    configs = {enumerator: f"{tile}_{schedule}" for enumerator, schedule, tile in CONFIG_LINE.findall(text)}
    assert len(configs) == text.count("X(k"), "a CODA_TILE_CONFIGS line does not read as X(kName, \"schedule_tile\", ...)"
    return configs


CONFIGS = read_configs()

# D dtype -> (DType enumerator, CUTLASS element type, configs compiled for it)
D_TYPES = {
    "bf16": ("kBF16", "cutlass::bfloat16_t", list(CONFIGS)),
    # fp32 D (weight gradients accumulated in fp32): the two most general configs only.
    "f32": ("kF32", "float", ["kCoop128x256Cluster2x1", "kStreamKCoop128x256Cluster2x1"]),
}


# The epilogue programs, read from their declarations: each program in
# kernels/coda/programs/<family>.hpp is followed by one line (kernels/coda/programs/common.hpp)
#   CODA_COMPILE_PROGRAM(Program, Layout, ElementD);   or   CODA_COMPILE_EXAMPLE(...);
# naming the operand layout it runs in and its D type (bf16, float, or void: no D stored). An
# example program (a composition no op uses, run by tests/device/epilogue and `coda-bench
# epilogue`) builds into <out>/examples/, the coda_examples library, not libcoda.
PROGRAMS_DIR = ROOT / "kernels/coda/programs"
DECLARATION = re.compile(r"^CODA_COMPILE_(PROGRAM|EXAMPLE)\((\w+), k(AkBk|AkBn|AmBn), (bf16|float|void)\);$",
                         re.M)
D_OF_ELEMENT = {"bf16": "bf16", "float": "f32", "void": "void"}
# Every program compiles in the configs of kProgramConfigs (include/coda/epilogue/program_launchers.hpp:
# the configs an op's options.choice may force), an fp32 D in the first only (the Cooperative one,
# the plain fp32 GEMMs' config), and a program that widens its epilogue subtile
# (`static constexpr int kEpilogueTileN = ...;`, kernels/coda/gemm/kernel.hpp) only the configs
# whose tile N that subtile divides (CUTLASS requires it).
def read_config_list(path, name):
    """The TileConfig enumerators of `inline constexpr gemm::TileConfig <name>[] = {...}` in path."""
    body = re.search(rf"{name}\[\] = \{{([^}}]*)\}}", (ROOT / path).read_text())
    assert body, f"{path}: no {name}[] = {{...}} list"
    configs = re.findall(r"TileConfig::(k\w+)", body.group(1))
    assert configs and all(c in CONFIGS for c in configs), f"{name} names unknown configs: {configs}"
    return configs


EPILOGUE_CONFIGS = read_config_list("include/coda/epilogue/program_launchers.hpp", "kProgramConfigs")
# The example programs test the primitives under both schedules, in the configs of kExampleConfigs
# (src/epilogue/example_launchers.hpp); the ops' tests cover every config an op is compiled for.
EXAMPLE_CONFIGS = read_config_list("src/epilogue/example_launchers.hpp", "kExampleConfigs")


def tile_n(config):
    """A config's tile N, from its CODA_TILE_CONFIGS name ("128x192_2x1_pingpong" -> 192)."""
    return int(CONFIGS[config].split("_")[0].split("x")[1])


# Every config but Pingpong 128x192 holds 128 fp32 accumulators a thread (a Pingpong warp group of
# 128 threads holds its whole tile, the two Cooperative ones half each); that one holds 192, beside
# which a heavy epilogue spills (scripts/sass_mix.py reads it).
def accumulators_per_thread(config):
    tile, _cluster, schedule = CONFIGS[config].split("_")
    tile_m, tile_n_ = (int(x) for x in tile.split("x"))
    return tile_m * tile_n_ // (128 if schedule == "pingpong" else 256)


def constant_value(expression):
    """An int literal, or a `constexpr int NAME = <int>;` of the epilogue headers."""
    if expression.isdigit():
        return int(expression)
    for header in (ROOT / "kernels/coda/epilogue").glob("*.hpp"):
        found = re.search(rf"constexpr int {expression} = (\d+);", header.read_text())
        if found:
            return int(found.group(1))
    raise AssertionError(f"kEpilogueTileN = {expression}: neither an int literal nor a constexpr int "
                         "of kernels/coda/epilogue")


# The overlapped Cooperative configs hand the tile to the epilogue in bf16 (kernels/coda/gemm/
# overlap_cooperative.hpp): not for a program that needs the fp32 accumulator (its
# `static constexpr bool kNeedsFp32Accumulator = true;`: the deferred RMSNorm's rstd · acc and a
# linear layer's acc + b, which the framework rounds once; sums it takes at another rounding point).
def hands_over_in_bf16(config):
    return CONFIGS[config].endswith("_ovcoop")


class Program:
    def __init__(self, name, header, layout, d, example, epilogue_tile_n=None, needs_fp32_accumulator=False):
        self.name, self.header, self.layout, self.d, self.example = name, header, layout, d, example
        # snake_case; "SwiGlu" is one word
        self.snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.replace("SwiGlu", "Swiglu")).lower()
        configs = EXAMPLE_CONFIGS if example else EPILOGUE_CONFIGS
        configs = configs[:1] if d == "f32" else configs
        self.configs = [c for c in configs if (epilogue_tile_n is None or tile_n(c) % epilogue_tile_n == 0)
                        and not (needs_fp32_accumulator and hands_over_in_bf16(c))]
        self.kernel_prefix = f"epi_{self.snake}_{layout.lower()}_{d}"

    def kernel(self, config):
        """The launch function of this program's kernel in `config` (generated unit, dispatch list)."""
        return f"{self.kernel_prefix}_{CONFIGS[config]}"


def declares(text, name, line):
    """Whether struct `name` of `text`, or the struct it derives from (`struct A : B {`), holds `line`."""
    struct = re.search(rf"^struct {name}\b( : (\w+))?(.*?)^}};", text, re.M | re.S)
    return line in struct.group(3) or (struct.group(2) is not None and declares(text, struct.group(2), line))


def read_programs():
    programs = []
    for header in sorted(PROGRAMS_DIR.glob("*.hpp")):
        text = header.read_text()
        for kind, name, layout, element in DECLARATION.findall(text):
            struct = re.search(rf"^struct {name}\b(.*?)^}};", text, re.M | re.S)
            assert struct, f"{header.name}: no struct {name}"
            subtile = re.search(r"static constexpr int kEpilogueTileN = (\w+);", struct.group(1))
            programs.append(Program(name, header.stem, layout, D_OF_ELEMENT[element], kind == "EXAMPLE",
                                    constant_value(subtile.group(1)) if subtile else None,
                                    declares(text, name, "static constexpr bool kNeedsFp32Accumulator = true;")))
        # A declaration line the pattern missed would drop a program silently: count them.
        lines = len(re.findall(r"^CODA_COMPILE_", text, re.M))
        assert lines == sum(p.header == header.stem for p in programs), (
            f"{header.name}: a CODA_COMPILE_ line does not read as (Program, kLayout, bf16|float|void);")
    names = [p.name for p in programs]
    assert len(set(names)) == len(names), "a program is declared twice"
    return programs


PROGRAMS = read_programs()


def epilogue_instances():
    for program in PROGRAMS:
        for config in program.configs:
            yield (program.kernel(config), program, config)


# At most this many kernels in one translation unit. A unit costs ~40 s of nvcc front ends (CUTLASS
# parsed once) plus ~10 s a kernel (docs/design.md §7), so the kernels of one header share units:
# less work for the build, and an edit to a header still rebuilds only its own units. The cap keeps
# a unit from becoming the build's tail and its nvcc within the memory CMakeLists.txt allows a job.
MAX_KERNELS_PER_UNIT = 6


def packed(items, kernels_of):
    """items in order, cut into consecutive groups of at most MAX_KERNELS_PER_UNIT kernels."""
    groups, count = [], 0
    for item in items:
        if not groups or count + kernels_of(item) > MAX_KERNELS_PER_UNIT:
            groups.append([])
            count = 0
        groups[-1].append(item)
        count += kernels_of(item)
    return groups


def named(stem, groups):
    """(file stem, group) of each group: stem, or stem_0, stem_1, ... when there are several."""
    return [(stem if len(groups) == 1 else f"{stem}_{i}", g) for i, g in enumerate(groups)]


def epilogue_units():
    """(folder, file stem, programs) of each epilogue unit: an op header's programs share units in
    libcoda; the example programs (from any header) share theirs in coda_examples (examples/)."""
    by_header = {}
    for program in PROGRAMS:
        if not program.example:
            by_header.setdefault(program.header, []).append(program)
    for header, programs in by_header.items():
        for stem, group in named(f"epi_{header}", packed(programs, lambda p: len(p.configs))):
            yield "", stem, group
    examples = [p for p in PROGRAMS if p.example]
    for stem, group in named("examples", packed(examples, lambda p: len(p.configs))):
        yield "examples", stem, group


def epilogue_tu(programs):
    """One translation unit: every config of each of `programs`."""
    headers, body = [], ""
    for program in programs:
        if program.header not in headers:
            headers.append(program.header)
        element = "void" if program.d == "void" else D_TYPES[program.d][1]  # the plain GEMMs' types
        name = program.name
        body += (f"static_assert(Compiled<{name}>::kLayout == gemm::OperandLayout::k{program.layout} &&\n"
                 + f"                  std::is_same_v<Compiled<{name}>::D, {element}>,\n"
                 + f'              "scripts/instances.py misread {name}\'s CODA_COMPILE line");\n\n')
        for config in program.configs:
            body += (
                f"void {program.kernel(config)}(const gemm::GemmProblem& p,\n"
                + f"    const gemm::KernelChoice& c, const {name}::Params& e, void* workspace,\n"
                + "    cudaStream_t stream) {\n"
                + f"  using K = gemm::GemmKernel<gemm::OperandLayout::k{program.layout}, {element},\n"
                + f"                             gemm::TileConfig::{config}, {name}>;\n"
                + "  K::FusionArguments fusion{};\n"
                + f"  {name}::fill(fusion, e);\n"
                + "  gemm::launch_gemm<K>(p, c, fusion, workspace, stream);\n"
                + "}\n\n"
            )
    return (
        HEADER
        + "".join(f'#include "coda/programs/{h}.hpp"\n' for h in headers)
        + '#include "coda/gemm/launch.hpp"\n\n'
        + "#include <type_traits>\n\n"
        + "namespace coda::epilogue::instances {\n\n"
        + body
        + "}  // namespace coda::epilogue::instances\n"
    )


def epilogue_dispatch_inc():
    lines = [HEADER, "// CODA_EPILOGUE_INSTANCE(program, config, layout, name)\n"]
    for kernel, program, config in epilogue_instances():
        lines.append(f"CODA_EPILOGUE_INSTANCE({program.name}, {config}, k{program.layout}, {kernel})\n")
    return "".join(lines)


def instances():
    for dname, (dtype, _, configs) in D_TYPES.items():
        for layout in LAYOUTS:
            for config in configs:
                name = f"gemm_{layout.lower()}_{dname}_{CONFIGS[config]}"
                yield name, layout, dname, dtype, config


HEADER = "// GENERATED by scripts/instances.py from its list; do not edit.\n"


def instance_tu(kernels):
    """Plain-GEMM kernels of one D type in one translation unit (MAX_KERNELS_PER_UNIT)."""
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
    files = {out / "dispatch.inc": dispatch_inc(),
             out / "epilogue_dispatch.inc": epilogue_dispatch_inc()}
    for folder, stem, programs in epilogue_units():
        files[out / folder / f"{stem}_sm90a.cu"] = epilogue_tu(programs)
    by_d_type = {}
    for kernel in instances():
        by_d_type.setdefault(kernel[2], []).append(kernel)
    for dname, kernels in by_d_type.items():
        for stem, group in named(f"gemm_{dname}", packed(kernels, lambda _: 1)):
            files[out / f"{stem}_sm90a.cu"] = instance_tu(group)
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
