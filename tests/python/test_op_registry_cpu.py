# SPDX-License-Identifier: BSD-3-Clause
"""Every fused op key (CODA_OP_KEYS in include/coda/ops/op_key.hpp, the op registry the op tables
and the autotuner read) reaches every per-op list on the Python side: a public op in coda.ops, a
case in the op benchmark (which `python -m coda.bench tune` tunes, so a key without one is never
tuned), a branch in the C++ `coda-bench ops|tune-ops` (bench/ops_bench.cu, kernel work), and a
name the library's table writer accepts. A key added in C++ and forgotten here fails."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
OP_KEY_HPP = ROOT / "include" / "coda" / "ops" / "op_key.hpp"
OPS_BENCH_CU = ROOT / "bench" / "ops_bench.cu"


def _op_keys() -> list[str]:
    names = re.findall(r'X\(k\w+, "(\w+)",', OP_KEY_HPP.read_text())  # X(kId, "name", Params)
    assert len(names) >= 16, f"CODA_OP_KEYS not found in {OP_KEY_HPP}"
    return names


KEYS = _op_keys()


def _entry_point(key: str, names: set[str]) -> str | None:
    """The public op a key belongs to: the longest op name that is the key or its prefix (a
    variant key, e.g. linear_bias_gelu_save_pre, runs linear_bias_gelu with an optional output)."""
    fits = [n for n in names if key == n or key.startswith(n + "_")]
    return max(fits, key=len) if fits else None


@pytest.mark.parametrize("key", KEYS)
def test_key_has_a_public_op(key):
    from coda import ops

    names = {op.name for op in ops.ALL_OPS}
    assert _entry_point(key, names) is not None, f"{key}: no op in coda.ops.ALL_OPS runs it"


@pytest.mark.parametrize("key", KEYS)
def test_key_has_a_benchmark_case(key):
    from coda.bench.op_cases import MODELS, cases

    assert key in {c.name for c in cases(MODELS["8B"])}, (
        f"{key}: no case in coda/bench/op_cases.py, so `python -m coda.bench ops` never times it "
        "and `python -m coda.bench tune` never tunes it")


@pytest.mark.parametrize("key", KEYS)
def test_key_has_a_cpp_benchmark_branch(key):
    # measure() picks the op's call by name: `op == "linear_…"` (a save-Pre key is its own branch).
    assert f'op == "{key}"' in OPS_BENCH_CU.read_text(), (
        f"{key}: no branch in bench/ops_bench.cu's measure(), so `coda-bench ops` and "
        "`coda-bench tune-ops` cannot run it")


@pytest.mark.parametrize("key", KEYS)
def test_key_is_known_to_the_library(key):
    from coda import _C

    assert _C.op_table_row(key, 16, 16, 16, 0).startswith("{OpKey::k")


def test_an_unknown_key_is_refused():
    from coda import _C

    with pytest.raises(Exception, match="linear_nothing"):
        _C.op_table_row("linear_nothing", 16, 16, 16, 0)
