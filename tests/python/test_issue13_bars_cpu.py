# SPDX-License-Identifier: BSD-3-Clause
"""scripts/issue13_bars.py on a made-up ops JSON: each row is held to its own bar (forward 1.06,
backward and loss-only CE 1.10 × matmul, CE forward + backward 1.10 × its GEMMs, every row under
torch.compile), a verdict whose rounds straddle the bar is counted as split, and a row that failed
its check is no verdict; the geomeans and the rows torch.compile beats skip that row too."""
import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "issue13_bars.py"
spec = importlib.util.spec_from_file_location("issue13_bars", SCRIPT)
bars = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bars)


def row(name, m, coda, baseline, key="torch_matmul", compile_ms=(9.0, 9.0, 9.0), passed=True):
    ratios = sorted(c / b for c, b in zip(coda, baseline))
    to_compile = sorted(c / b for c, b in zip(coda, compile_ms))
    return {"name": name, "M": m, "shape": "8B", "check_passed": passed, "errors": {},
            "ratios": {f"coda/{key}": ratios[1], "coda/compile": to_compile[1]},
            "rounds_ms": {"coda": list(coda), key: list(baseline), "compile": list(compile_ms)}}


def test_each_row_meets_its_own_bar_and_splits_are_counted():
    rows = [
        row("linear_rope", 4096, (1.05, 1.05, 1.05), (1.0, 1.0, 1.0)),              # 1.05: passes 1.06
        row("linear_swiglu", 4096, (1.08, 1.08, 1.08), (1.0, 1.0, 1.0)),            # 1.08: fails 1.06
        row("linear_swiglu_bwd", 4096, (1.08, 1.08, 1.08), (1.0, 1.0, 1.0)),        # 1.08: passes 1.10
        row("linear_cross_entropy", 4096, (1.09, 1.09, 1.09), (1.0, 1.0, 1.0)),     # passes 1.10
        row("linear_cross_entropy_fwd_bwd", 4096, (3.4, 3.4, 3.4), (3.0, 3.0, 3.0), key="torch_gemms"),  # 1.13
        # matmul fast in one round, slow in two: rounds 1.20, 1.00, 1.00 -> median 1.00, split.
        row("linear_qknorm_rope", 4096, (1.2, 1.2, 1.2), (1.0, 1.2, 1.2), compile_ms=(1.1, 1.3, 1.3)),
        row("linear_rmsnorm", 4096, (2.0, 2.0, 2.0), (1.0, 1.0, 1.0), passed=False),  # no verdict
    ]
    got = bars.verdicts(rows)[4096]
    assert got["forward <= 1.06"] == [2, 1, 3]
    assert got["backward <= 1.10"] == [1, 0, 1]
    assert got["loss-only CE <= 1.10"] == [1, 0, 1]
    assert got["CE fwd+bwd <= 1.10 x its GEMMs"] == [0, 0, 1]
    # Every row but the failed one is under compile's 9 ms or the qknorm one's 1.1-1.3 (split).
    assert got["faster than torch.compile"] == [6, 1, 6]


def test_geomeans_and_compile_losses_count_checked_rows_only():
    rows = [
        row("linear_rope", 4096, (2.0, 2.0, 2.0), (1.0, 1.0, 1.0), compile_ms=(1.0, 1.0, 1.0)),
        row("linear_swiglu", 4096, (0.5, 0.5, 0.5), (1.0, 1.0, 1.0), compile_ms=(4.0, 4.0, 4.0)),
        row("linear_cross_entropy_fwd_bwd", 4096, (3.0, 3.0, 3.0), (3.0, 3.0, 3.0), key="torch_gemms",
            compile_ms=(3.0, 3.0, 3.0)),
        # The CE forward + backward against one matmul (3x) is not held to matmul: left out.
        row("linear_cross_entropy_fwd_bwd", 8192, (3.0, 3.0, 3.0), (1.0, 1.0, 1.0),
            compile_ms=(6.0, 6.0, 6.0)),
        row("linear_rmsnorm", 4096, (9.0, 9.0, 9.0), (1.0, 1.0, 1.0), compile_ms=(1.0, 1.0, 1.0),
            passed=False),
    ]
    means = bars.geomeans(rows)[4096]
    # coda/torch_matmul: 2.0 and 0.5 (the CE row has none, the failed row is left out) -> 1.0.
    assert means["coda/torch_matmul"][1] == 2
    assert abs(means["coda/torch_matmul"][0] - 1.0) < 1e-12
    # coda/compile: 2.0, 0.125, 1.0 -> (0.25)^(1/3).
    assert means["coda/compile"][1] == 3
    assert abs(means["coda/compile"][0] - 0.25 ** (1 / 3)) < 1e-12
    assert "coda/torch_matmul" not in bars.geomeans(rows)[8192]
    # A tie with compile is not faster; the failed row is no verdict.
    assert bars.slower_than_compile(rows) == [
        (4096, "linear_rope", "8B", 2.0), (4096, "linear_cross_entropy_fwd_bwd", "8B", 1.0)]


def test_against_compares_checked_rows_and_names_kernel_changes():
    def timed(name, m, ms, kernel, passed=True):
        return {"name": name, "M": m, "shape": "8B", "coda_ms": ms, "kernel": kernel,
                "check_passed": passed, "errors": {}, "ratios": {}}
    old = [timed("linear_rope", 4096, 1.0, "a"), timed("linear_swiglu", 4096, 2.0, "b"),
           timed("linear_rmsnorm", 4096, 1.0, "c"), timed("linear_qknorm_rope", 4096, 1.0, "d")]
    new = [timed("linear_rope", 4096, 0.5, "a"), timed("linear_swiglu", 4096, 4.0, "e"),
           timed("linear_rmsnorm", 4096, 9.0, "c", passed=False)]  # no verdict: left out
    ratio, n, changed = bars.against(new, old)
    assert n == 2  # the rows both runs checked: RoPE and SwiGLU
    assert abs(ratio - 1.0) < 1e-12  # 0.5 and 2.0
    assert changed == [(4096, "linear_swiglu", "8B", 2.0, "b", "e")]
