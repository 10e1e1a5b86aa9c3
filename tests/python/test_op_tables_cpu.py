# SPDX-License-Identifier: BSD-3-Clause
"""The per-GPU op tables (src/ops/op_table_<gpu>.inc; and the GEMM tables below) as the tuners and scripts/merge_table.py
leave them: one row per (op, M, N, K) — program_choice takes the nearest row and the first of
equals, so a second row for a key would be silently shadowed — and every choice one the op's
program is compiled for (as scripts/instances.py generates its kernels; no stream-K; swizzle 1,
2, 4 or 8)."""
import pathlib
import re

import pytest

OPS = pathlib.Path(__file__).resolve().parents[2] / "src" / "ops"
ROW = re.compile(r"\{OpKey::(\w+), (\d+), (\d+), (\d+), \{TileConfig::(\w+), RasterOrder::(\w+), (\d+), "
                 r"Decomposition::(\w+)\}\},")


ROOT = pathlib.Path(__file__).resolve().parents[2]


def _compiled_configs() -> dict[str, list[str]]:
    """Per op key (kLinearSwiglu): the configs its program is compiled for — the op registry
    (CODA_OP_KEYS: X(kId, "name", ProgramParams)) joined with the kernel generator's own list."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("instances", ROOT / "scripts" / "instances.py")
    instances = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(instances)
    configs = {p.name: p.configs for p in instances.PROGRAMS}
    text = (ROOT / "include/coda/ops/op_key.hpp").read_text()
    registry = re.findall(r'X\((k\w+), "\w+",[\s\\]*(\w+)Params\)', text)
    assert len(registry) == text.count("  X(k"), "a CODA_OP_KEYS row did not parse"
    return {key: configs[program] for key, program in registry}


def _rows(gpu):
    text = (OPS / f"op_table_{gpu}.inc").read_text()
    lines = [line for line in text.splitlines() if line.startswith("{OpKey::")]
    return lines, [ROW.match(line) for line in lines]


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_every_row_parses_and_names_a_compiled_choice(gpu):
    lines, rows = _rows(gpu)
    assert rows, f"no rows in op_table_{gpu}.inc"
    compiled = _compiled_configs()
    for line, row in zip(lines, rows):
        assert row, f"row does not parse: {line}"
        op, m, n, k, config, raster, swizzle, decomposition = row.groups()
        assert min(int(m), int(n), int(k)) > 0, line
        assert config in compiled[op], f"{op}'s program is compiled for {compiled[op]}: {line}"
        assert raster in ("kAlongM", "kAlongN"), line
        assert int(swizzle) in (1, 2, 4, 8), line
        assert decomposition == "kHeuristic", line


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_no_key_has_two_rows(gpu):
    _, rows = _rows(gpu)
    keys = [row.groups()[:4] for row in rows if row]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    assert not duplicated, f"op_table_{gpu}.inc: keys with two rows (the second is never used): {duplicated}"


GEMM = pathlib.Path(__file__).resolve().parents[2] / "src" / "gemm"
GEMM_ROW = re.compile(r"\{OperandLayout::(k\w+), (\d+), (\d+), (\d+), \{TileConfig::k\w+, RasterOrder::k\w+, "
                      r"(\d+), Decomposition::k\w+\}\},")


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_gemm_table_rows_parse_and_keys_are_unique(gpu):
    """The GEMM table (src/gemm/kernel_table_<gpu>.inc, coda-bench tune + merge_table.py): the same
    one-row-per-key rule (choose_kernel also takes the first of equals). Which configs exist is the
    host test's (ChooseKernel.EveryChoiceIsCompiledIn)."""
    lines = [line for line in (GEMM / f"kernel_table_{gpu}.inc").read_text().splitlines()
             if line.startswith("{OperandLayout::")]
    rows = [GEMM_ROW.match(line) for line in lines]
    assert rows, f"no rows in kernel_table_{gpu}.inc"
    for line, row in zip(lines, rows):
        assert row, f"row does not parse: {line}"
        assert int(row.group(5)) in (1, 2, 4, 8), line
    keys = [row.groups()[:4] for row in rows]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    assert not duplicated, f"kernel_table_{gpu}.inc: keys with two rows: {duplicated}"


def _merge_script():
    import importlib.util

    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "merge_table.py"
    spec = importlib.util.spec_from_file_location("merge_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_merge_replaces_a_key_appends_a_new_one_and_picks_the_table():
    merge_table = _merge_script()
    row = "{{OpKey::kLinearRope, {m}, 6144, 4096, {{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, {s}, Decomposition::kHeuristic}}}},  // 8B"
    table = "// header\n" + row.format(m=16384, s=1) + "\n" + row.format(m=8192, s=2) + "\n"
    merged = merge_table.merge(table, [row.format(m=8192, s=8), row.format(m=4096, s=4)], "run x")
    lines = merged.splitlines()
    assert lines[0] == "// header" and lines[1] == row.format(m=16384, s=1)
    assert lines[2] == row.format(m=8192, s=8) + " (run x)"  # replaced in place
    assert lines[3] == row.format(m=4096, s=4) + " (run x)" and len(lines) == 4  # appended
    gemm = "{OperandLayout::kAkBk, 9216, 128256, 8192, {TileConfig::kCoop256x128Cluster1x2, RasterOrder::kAlongN, 8, Decomposition::kHeuristic}},  // 70B lm_head fwd"
    assert merge_table.table_for([row.format(m=1, s=1)], "h100").name == "op_table_h100.inc"
    assert merge_table.table_for([gemm], "h200").name == "kernel_table_h200.inc"
    with pytest.raises(SystemExit):
        merge_table.table_for([gemm, row.format(m=1, s=1)], "h100")
