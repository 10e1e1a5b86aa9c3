# SPDX-License-Identifier: BSD-3-Clause
"""The op benchmark's own correctness, on the CPU (`python -m coda.bench ops` itself needs a GPU):
its float64 reference computes what its PyTorch baseline computes, and its output check passes an
output with the baseline's own error and refuses one with a larger error."""
import dataclasses

import json

import pytest
import torch

from coda.bench.op_cases import FLOAT64, PYTORCH, Model, Operands, cases
from coda.bench.ops import check, kernel_ran, not_run_row, table

TINY = Model(hidden=64, q_heads=4, kv_heads=2, head_dim=16, ffn=96, vocab=300)
M = 200
NAMES = [c.name for c in cases(TINY)]


def _case(name):
    return next(c for c in cases(TINY) if c.name == name)


def _operands(case):
    torch.manual_seed(0)
    t = Operands(TINY, M, torch.device("cpu"))
    return t, {n: t[n] for n in case.inputs}


def _stock_as_coda(case, offset: float):
    """The case with CODA replaced by the baseline itself, every output moved by `offset` times
    its largest value (already in the standard layout)."""
    def coda(t):
        outs = case.stock({n: t[n] for n in case.inputs}, PYTORCH)
        return tuple(o + offset * o.abs().max() if o.is_floating_point() else o for o in outs)

    return dataclasses.replace(case, coda=coda, standard=lambda t, o: o)


@pytest.mark.parametrize("name", [n for n in NAMES if "cross_entropy" not in n])
def test_reference_computes_what_the_baseline_computes(name):
    case = _case(name)
    t, inputs = _operands(case)
    rows = torch.arange(M)
    ref = case.stock(t.float64_rows(case.inputs, rows), FLOAT64)
    for label, got, want in zip(case.outputs, case.stock(inputs, PYTORCH), ref):
        assert got.shape == want.shape, label
        err = (got.double() - want).abs().max()
        assert err <= 0.05 * want.abs().max(), f"{name} {label}: bf16 and float64 differ by {float(err)}"


@pytest.mark.parametrize("name", NAMES)
def test_check_passes_the_baselines_own_error(name):
    case = _stock_as_coda(_case(name), 0.0)
    t, inputs = _operands(case)
    result = check(case, t, case.coda(t), case.stock(inputs, PYTORCH))
    assert set(result) and all(err <= bound for err, _, bound in result.values()), result


@pytest.mark.parametrize("name", NAMES)
def test_check_refuses_a_larger_error(name):
    case = _stock_as_coda(_case(name), 0.05)
    t, inputs = _operands(case)
    result = check(case, t, case.coda(t), case.stock(inputs, PYTORCH))
    assert any(err > bound for err, _, bound in result.values()), result


def test_every_multi_gemm_yardstick_runs_on_its_own_operands():
    """A case held to several GEMMs (CE forward+backward: logits, dX, dW) runs them on its set."""
    held = [c for c in cases(TINY) if c.gemms is not None]
    assert [c.name for c in held] == ["linear_cross_entropy_fwd_bwd"]
    for case in held:
        t, _ = _operands(case)
        case.gemms(t)
        assert t["d_logits"].shape == (M, TINY.vocab)


def test_a_case_that_could_not_run_is_reported_not_dropped():
    line = table([not_run_row("linear_swiglu", "70B", 32768, "OutOfMemoryError: CUDA out of memory")]).splitlines()[-1]
    assert "linear_swiglu" in line and "32768" in line and "not run" in line and "OutOfMemoryError" in line


def test_a_row_names_the_kernel_it_timed_or_says_there_is_none():
    # Before any launch no op has a kernel; a case of several ops (CE forward + backward) has no
    # one kernel to name: both print as "—" rather than failing the run.
    assert kernel_ran(_case("linear_swiglu")) is None
    assert kernel_ran(_case("linear_cross_entropy_fwd_bwd")) is None
    row = dict(not_run_row("linear_swiglu", "8B", 8192, "x"), kernel="pingpong_128x192_2x1 along_n 4")
    assert "| pingpong_128x192_2x1 along_n 4 |" in table([row]).splitlines()[-1]


def test_heat_runs_right_before_every_timed_block():
    """--sustained: the heater runs once before each variant's block of timed iterations (after
    the warm-up), so that no block starts from a cool GPU."""
    from coda.bench.timing import Stopwatch, interleaved_rounds

    log = []
    watch = Stopwatch(torch.device("cpu"))

    def step(name):
        def run(w):
            with w.region():
                log.append(name)
        return run

    result = interleaved_rounds({"a": step("a"), "b": step("b")}, watch, rounds=3, iters=2, warmup=1,
                                heat=lambda: log.append("heat"))
    timed = log[2:]  # after one warm-up iteration of each
    assert timed == ["heat", "a", "a", "heat", "b", "b",
                     "heat", "b", "b", "heat", "a", "a",
                     "heat", "a", "a", "heat", "b", "b"], timed
    assert all(len(v) == 3 for v in result.round_medians_ms.values())


def test_tune_sweep_scores_todays_choice_against_the_best():
    """The tuner's sweep summary: best ÷ today per row (capped at 1 where today is the best), the
    rows within the bar counted, the worst named with its M; rows where today's choice did not run
    are left out, not scored as perfect."""
    from coda.bench.tune import best_over_today, parse_args, summary

    def row(name, m, today, pick):
        return {"name": name, "shape": "8B", "M": m, "today_x_matmul": today, "pick_x_matmul": pick}

    rows = [row("linear_rmsnorm", 4096, 1.00, 0.98), row("linear_swiglu", 9216, 1.20, 1.02),
            row("linear_rope", 32768, 1.05, 1.05), row("linear_rope", 8192, None, 1.0),
            row("linear_swiglu", 4096, 1.30, 1.00)]
    # The sweep's pick looked 23 % ahead; head to head it was 3 % ahead: the confirmation counts.
    rows[4]["confirmed"] = {"gain": 0.03, "today_x_matmul": 1.1, "pick_x_matmul": 1.067}
    assert best_over_today(rows[0]) == pytest.approx(0.98)
    assert best_over_today(rows[2]) == 1.0
    assert best_over_today(rows[3]) is None
    assert best_over_today(rows[4]) == pytest.approx(0.97)
    line = summary(rows, 0.92)
    assert "on 3 of 4 rows" in line and "linear_swiglu 8B M = 9216" in line and "0.850" in line
    args = parse_args(["--tokens", "4096,8192", "--random-tokens"])
    assert args.tokens == "4096,8192" and args.random_tokens


def test_tune_says_a_min_gain_of_one_is_a_sweep(capsys):
    """--min-gain is a fraction: 1 (the sweeps' flag) asks a 100 % gain, so the run confirms and
    writes nothing; the tuner says so before any GPU work, and says nothing at the default."""
    from coda.bench.tune import parse_args

    assert parse_args(["--min-gain", "1"]).min_gain == 1
    assert "is a sweep: no pick can be 100% faster" in capsys.readouterr().err
    assert parse_args([]).min_gain == 0.02
    assert capsys.readouterr().err == ""


def test_tune_writes_a_row_only_when_the_head_to_head_confirms(monkeypatch):
    """The winner's curse: the least of many noisy candidates reads faster than it is, so the
    tuner re-times the pick against today's choice alone and writes the row only where that
    paired ratio shows the gain too. Here on the CPU with fake steps whose times are set."""
    from coda.bench import tune
    from coda.bench.timing import RoundsResult

    def fake_rounds(ms):  # each step's per-round medians, as the timer would report them
        def run(steps, watch, **kw):
            r = RoundsResult()
            for name in steps:
                r.round_medians_ms[name] = list(ms[name])
            return r
        return run

    args = tune.parse_args(["--confirm-rounds", "3"])
    args.heater = args.clocks = None
    steps = {"torch_matmul": None, "today": None, "c3": None}
    monkeypatch.setattr(tune, "interleaved_rounds",
                        fake_rounds({"torch_matmul": [1, 1, 1], "today": [1.1, 1.1, 1.2], "c3": [1.09, 1.1, 1.17]}))
    c = tune.confirm(steps, "c3", None, args)
    assert c["gain"] == pytest.approx(1 - 1.09 / 1.1) and c["gain"] < args.min_gain
    monkeypatch.setattr(tune, "interleaved_rounds",
                        fake_rounds({"torch_matmul": [1, 1, 1], "today": [1.1, 1.1, 1.2], "c3": [1.0, 1.0, 1.1]}))
    c = tune.confirm(steps, "c3", None, args)
    assert c["gain"] >= args.min_gain and c["today_x_matmul"] == pytest.approx(1.1)


def test_tune_never_confirms_todays_own_kernel():
    """A pick is re-timed (and may be written) only where it passed, looked --min-gain ahead and is
    another kernel than today's: the same kernel "ahead" is the harness's noise."""
    from coda.bench.tune import worth_confirming
    pick, other = "pingpong_128x192 along n swizzle 1", "pingpong along n swizzle 2"
    assert worth_confirming(pick, other, 0.05, True, 0.02)
    assert not worth_confirming(pick, pick, 0.09, True, 0.02)
    assert not worth_confirming(pick, other, 0.01, True, 0.02)
    assert not worth_confirming(pick, other, 0.05, False, 0.02)
    assert not worth_confirming(pick, other, None, True, 0.02)
    assert worth_confirming(pick, None, 0.05, True, 0.02)  # today's kernel unknown: time it


def test_tune_confirms_a_schedule_flip_with_every_variant():
    """A pick of another schedule than today's (Cooperative / Pingpong) is confirmed with eager and
    compiled PyTorch in the rounds, as the benchmark of record times it; one of the same schedule
    with the op and matmul only."""
    from coda.bench.tune import flips_schedule
    assert flips_schedule("pingpong along n swizzle 1", "coop along m swizzle 8")
    assert flips_schedule("coop heuristic swizzle 1", "pingpong_128x192 along n swizzle 4")
    assert not flips_schedule("pingpong_128x192 along n swizzle 1", "pingpong along n swizzle 2")
    assert not flips_schedule("coop along n swizzle 2", "coop heuristic swizzle 1")
    assert not flips_schedule("coop along n swizzle 2", None)


def test_tune_configs_restrict_the_sweep_and_refuse_unknown_names():
    """--configs times only the named configs' candidates among those the op is compiled for; a
    name no candidate has is refused with the known names, never swept as nothing."""
    from coda.bench.tune import select_candidates
    candidates = [("coop_128x256_2x1", "along_m", 1), ("ovcoop_128x256_2x1", "along_n", 2),
                  ("pingpong_128x128_2x1", "along_n", 2), ("ovcoop_128x256_2x1", "along_m", 8)]
    assert select_candidates(candidates, [0, 1, 2, 3], "all") == [0, 1, 2, 3]
    assert select_candidates(candidates, [0, 1, 2, 3], "ovcoop_128x256_2x1") == [1, 3]
    assert select_candidates(candidates, [0, 2], "ovcoop_128x256_2x1") == []  # not compiled for the op
    assert select_candidates(candidates, [0, 1, 2], "coop_128x256_2x1,pingpong_128x128_2x1") == [0, 2]
    with pytest.raises(ValueError, match=r"--configs: ovcoop_128x256 is not a program config.*coop_128x256_2x1"):
        select_candidates(candidates, [0, 1], "ovcoop_128x256")


def test_tune_shortlist_keeps_the_candidates_near_today_and_the_best():
    """--shortlist (a boost run's tune.json for the sustained run) times, per row, the candidates
    within --slack of today's reading there and the best one; rows it lacks time every candidate;
    a shortlist naming none of the op's candidates is an error, never an empty sweep."""
    from coda.bench.tune import shortlisted
    candidates = [("coop_128x256_2x1", "along_m", 1), ("pingpong_128x128_2x1", "along_n", 2),
                  ("pingpong_128x192_2x1", "along_n", 4), ("ovcoop_128x256_2x1", "along_m", 8)]
    previous = {"today": 1.00, "candidates": [
        {"kernel": "coop along m swizzle 1", "x_matmul": 1.10},
        {"kernel": "pingpong along n swizzle 2", "x_matmul": 1.02},
        {"kernel": "pingpong_128x192 along n swizzle 4", "x_matmul": 0.97},
        {"kernel": "ovcoop_128x256 along m swizzle 8", "x_matmul": None}]}
    assert shortlisted([0, 1, 2, 3], candidates, previous, 0.03) == [1, 2]
    assert shortlisted([0, 1, 2, 3], candidates, previous, 0.0) == [2]  # the best is always kept
    assert shortlisted([0, 1, 3], candidates, previous, 0.03) == [1]   # only compiled ones
    assert shortlisted([0, 1, 2, 3], candidates, None, 0.03) == [0, 1, 2, 3]
    slow_today = {"today": None, "candidates": previous["candidates"]}
    assert shortlisted([0, 1, 2, 3], candidates, slow_today, 0.03) == [2]
    with pytest.raises(ValueError, match="--shortlist: its candidates .* are none of this build's"):
        shortlisted([0, 3], candidates, previous, 0.03)


def test_tune_shortlist_file_is_checked_before_any_gpu_work(tmp_path):
    from coda.bench.tune import load_shortlist
    candidates = [("coop_128x256_2x1", "along_m", 1), ("pingpong_128x128_2x1", "along_n", 2)]
    good = {"rows": [{"name": "linear_rope", "shape": "8B", "M": 16384, "today_x_matmul": 1.0,
                      "candidates": [{"kernel": "coop along m swizzle 1", "x_matmul": 1.01}]}]}
    (tmp_path / "good.json").write_text(json.dumps(good))
    assert load_shortlist(tmp_path / "good.json", candidates)[("linear_rope", "8B", 16384)]["today"] == 1.0
    assert load_shortlist(None, candidates) == {}
    (tmp_path / "ops.json").write_text(json.dumps({"rows": [{"name": "linear_rope"}]}))
    with pytest.raises(ValueError, match="--shortlist: .*ops.json is not a tune.json"):
        load_shortlist(tmp_path / "ops.json", candidates)
    good["rows"][0]["candidates"][0]["kernel"] = "pingpong_192x128 along n swizzle 1"
    (tmp_path / "other.json").write_text(json.dumps(good))
    with pytest.raises(ValueError, match="names kernels this build lacks: pingpong_192x128 along n swizzle 1"):
        load_shortlist(tmp_path / "other.json", candidates)


def test_token_counts_add_one_seeded_random_m():
    from coda.bench.ops import token_counts

    assert token_counts("16384,5194", False, 1) == [16384, 5194]
    drawn = token_counts("", True, 1398805695)
    assert len(drawn) == 1 and 4096 <= drawn[0] <= 32768
    assert token_counts("8192", True, 1398805695) == [8192, drawn[0]]


def test_a_gpu_run_without_a_gpu_says_so_and_returns_2(monkeypatch, capsys):
    """ops and tune start through one start_run; without CUDA both refuse with their own name."""
    from coda.bench import ops, tune

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert ops.main(["--tokens", "4096"]) == 2 and "coda.bench ops: needs a CUDA GPU" in capsys.readouterr().err
    assert tune.main(["--tokens", "4096"]) == 2 and "coda.bench tune: needs a CUDA GPU" in capsys.readouterr().err
    # A --configs naming no program config is refused before the GPU is looked at.
    assert tune.main(["--configs", "ovcoop"]) == 2
    assert "coda.bench tune: --configs: ovcoop is not a program config" in capsys.readouterr().err


def test_a_run_record_keeps_every_finished_row_on_disk(tmp_path):
    import json

    from coda.bench.report import RunRecord

    path = tmp_path / "out" / "ops.json"
    record = RunRecord(path, {"commit": "abc1234", "gpu": "cpu"})
    assert json.loads(path.read_text()) == {"commit": "abc1234", "gpu": "cpu", "complete": False, "rows": []}
    record.add({"name": "a"})
    record.add({"name": "b"})
    # What a run cut off here leaves: both rows, marked incomplete.
    on_disk = json.loads(path.read_text())
    assert on_disk["rows"] == [{"name": "a"}, {"name": "b"}] and on_disk["complete"] is False
    record.finish()
    assert json.loads(path.read_text())["complete"] is True
    assert [p.name for p in path.parent.iterdir()] == ["ops.json"]  # no temporary file left


def test_ops_gemm_kernel_flag_names_a_plain_gemm_kernel(capsys):
    """--gemm-kernel CONFIG[,RASTER,SWIZZLE]: the coda_gemm variant's forced kernel, checked before
    any GPU work (a bad raster or swizzle, or a wrong count of fields, exits with a message)."""
    from coda.bench.ops import parse_args

    assert parse_args([]).gemm_kernel_choice is None
    assert parse_args(["--gemm-kernel", "coop_256x128_1x2"]).gemm_kernel_choice == (
        "coop_256x128_1x2", "heuristic", 1)
    assert parse_args(["--gemm-kernel", "coop_256x128_1x2,along_n,2"]).gemm_kernel_choice == (
        "coop_256x128_1x2", "along_n", 2)
    for bad in ("coop_256x128_1x2,along_n", "coop_256x128_1x2,sideways,2", "coop_256x128_1x2,along_m,3", ","):
        with pytest.raises(SystemExit):
            parse_args(["--gemm-kernel", bad])
        assert "--gemm-kernel" in capsys.readouterr().err


def test_a_forced_gemm_kernel_is_checked_by_name_before_the_gemm():
    """The native plain GEMM takes a kernel by name (coda.ops.forced_gemm_kernel); an unknown
    config or raster is refused by name before anything reaches the GPU."""
    import torch
    from coda._native import C, view

    d, a, w = (torch.zeros(64, 64, dtype=torch.bfloat16) for _ in range(3))
    with pytest.raises(ValueError, match="config: 'coop_999x1' is not a tile config .*coop_256x128_1x2"):
        C.gemm_workspace_bytes(view(d), view(a), view(w), "coop_999x1", "heuristic", 1)
    with pytest.raises(ValueError, match="raster: 'sideways' is not along_m, along_n or heuristic"):
        C.gemm_workspace_bytes(view(d), view(a), view(w), "coop_256x128_1x2", "sideways", 1)
