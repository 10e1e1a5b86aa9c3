# SPDX-License-Identifier: BSD-3-Clause
"""The fused ops' kernel choice tuned in the op benchmark's own harness: `python -m coda.bench tune`.

For each op and model at M tokens, every kernel candidate its program is compiled for
(C.op_candidates(op) of C.program_candidates(): 4 configs × 2 rasters × 4 swizzles; --configs
narrows them) is forced
on the op in turn (coda.ops.forced_kernel) and timed in the same interleaved rounds, on the same
operand sets and realistic side inputs, as `python -m coda.bench ops` times the op (ops.py),
together with PyTorch's matmul of the shape and the op as it runs today (its table row or the
rule). The pick is the candidate of least median per-round ratio to matmul.

The least of 16–24 noisy estimates is biased low (the winner's curse): with a few % of round-to-round
noise, the best-looking candidate reads several % faster than it is, so "beats today by 2 %" in the
same timing that picked it is no evidence. Where the pick looks --min-gain ahead, it is timed again
head to head with today's choice (and matmul) in fresh rounds (--confirm-rounds), and the row is
written only where that paired ratio pick ÷ today also shows --min-gain and the pick's outputs
pass the float64 check.

Why here and not `coda-bench tune-ops`: a table row is worth what the benchmark of record confirms,
and the C++ tuner's harness differs from this one (uniform operands, zero side inputs, another
rotation); its picks disagreed with this benchmark on some rows (bench/RESULTS.md, twelfth session).

Several --tokens (and --random-tokens) make it a sweep of the kernel choice over M: each row's
"best ÷ today" says how far the choice a user gets at that M (its table row, the nearest tuned M,
or the rule) is from the best candidate; the summary counts the rows within --within of it.

Output under --out: op_table.inc (rows for scripts/merge_table.py), tune.json (every candidate's
ratio, today's, the pick) and tune.md.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from coda.bench import report
from coda.bench.op_cases import MODELS, PYTORCH, cases, compiled
from coda.bench.ops import (_operand_sets, _rotating, add_run_arguments, check, kernel_ran, matmul_step,
                            round_ratio, run_metadata, start_run, stock_inputs, stock_steps)
from coda.bench.timing import Stopwatch, interleaved_rounds


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m coda.bench tune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="1B,8B,70B", help=f"comma-separated, of {','.join(MODELS)}")
    p.add_argument("--ops", default="all", help="comma-separated op names (default: every op with a table key)")
    add_run_arguments(p, "comma-separated M values (most table rows are at 16384; rows at other M "
                         "make the nearest-M lookup's buckets, op_checks.cpp)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--min-gain", type=float, default=0.02,
                   help="write a row only where the pick is this much faster than today's choice "
                        "(a fraction: 0.02 is 2 %%; 1 or more confirms and writes nothing, a sweep)")
    p.add_argument("--confirm-rounds", type=int, default=10,
                   help="rounds of the head-to-head pick vs today's choice that must confirm the gain")
    p.add_argument("--within", type=float, default=0.92,
                   help="the summary's bar: best ÷ today at least this (issue 13: 0.92)")
    p.add_argument("--configs", default="all",
                   help="comma-separated program configs whose candidates the sweep times (e.g. "
                        "ovcoop_128x256_2x1; default: all): to ask whether one config beats today's "
                        "choice; a pick of another schedule is confirmed with every variant")
    p.add_argument("--shortlist", type=Path, default=None, metavar="TUNE_JSON",
                   help="another run's tune.json (the one as the GPU comes, for the sustained run): "
                        "a row it has times only the candidates that read within --slack of today's "
                        "choice there, and its best; rows it lacks time every candidate")
    p.add_argument("--slack", type=float, default=0.03,
                   help="--shortlist keeps candidates at most this much slower than today's choice")
    p.add_argument("--out", type=Path, default=Path("tune-out"))
    args = p.parse_args(argv)
    if not 0 <= args.slack < 1:
        p.error(f"--slack: must be in [0, 1); got {args.slack}")
    if args.min_gain >= 1:  # the fortieth session took the sweep's flag for a tuning run
        print(f"coda.bench tune: --min-gain {args.min_gain:g} is a sweep: no pick can be "
              f"{args.min_gain:.0%} faster, so nothing is confirmed or written", file=sys.stderr)
    return args


def select_candidates(candidates: Sequence[tuple[str, str, int]], runnable: Sequence[int],
                      configs: str) -> list[int]:
    """The indices of `runnable` (an op's compiled candidates) whose config --configs names ("all":
    every one). A name no candidate has is an error, not an empty sweep."""
    if configs == "all":
        return list(runnable)
    wanted = set(configs.split(","))
    unknown = wanted - {c[0] for c in candidates}
    if unknown:
        raise ValueError(f"--configs: {', '.join(sorted(unknown))} is not a program config; the "
                         f"configs are {', '.join(sorted({c[0] for c in candidates}))}")
    return [i for i in runnable if candidates[i][0] in wanted]


def load_shortlist(path: Path | None, candidates: Sequence[tuple[str, str, int]]) -> dict:
    """{(op name, model, M): that row} from a tune.json (None: no shortlist). A file that is not a
    tune run's output, or that names a kernel this build lacks (another build's run), is an
    error here, before any GPU work."""
    if path is None:
        return {}
    import json

    try:
        rows = json.loads(path.read_text())["rows"]
        shortlist = {(r["name"], r["shape"], r["M"]): {"candidates": r["candidates"], "today": r["today_x_matmul"]}
                     for r in rows}
        named = {c["kernel"] for row in shortlist.values() for c in row["candidates"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--shortlist: {path} is not a tune.json of python -m coda.bench tune "
                         f"({type(error).__name__}: {error})") from error
    unknown = named - {_describe(c) for c in candidates}
    if unknown:
        raise ValueError(f"--shortlist: {path} names kernels this build lacks: {', '.join(sorted(unknown))}")
    return shortlist


def shortlisted(runnable: Sequence[int], candidates: Sequence[tuple[str, str, int]],
                previous: dict | None, slack: float) -> list[int]:
    """The indices of `runnable` that the same row of another run (`previous`: its candidates'
    × matmul and today's) read within `slack` of today's choice, and its best one (None: every
    runnable one). For the sustained run after one as the GPU comes: scripts/both_states_picks.py
    writes no kernel that loses more than 2 % to today's in either state, so one 3 % behind as the
    GPU comes needs no sustained reading; in the 37th and 38th sessions' runs such a shortlist
    kept 5–7 of 24–40 candidates a row and none of the dropped ones' sustained wins passed that
    bound. (8B and Qwen3-8B share shapes: a kernel dropped for one model keeps the other's
    readings.) A shortlist that names none of them is an error (another build's candidates)."""
    if previous is None:
        return list(runnable)
    timed = [c for c in previous["candidates"] if c["x_matmul"] is not None]
    if not timed:
        return list(runnable)
    keep = {min(timed, key=lambda c: c["x_matmul"])["kernel"]}
    if previous["today"] is not None:
        keep |= {c["kernel"] for c in timed if c["x_matmul"] <= (1 + slack) * previous["today"]}
    kept = [i for i in runnable if _describe(candidates[i]) in keep]
    if not kept:
        raise ValueError(f"--shortlist: its candidates ({', '.join(sorted(keep))}) are none of this "
                         "build's candidates for the op")
    return kept


def _has_key(name: str) -> bool:
    from coda._native import C

    try:
        C.op_table_row(name, 1, 1, 1, 0)
        return True
    except ValueError:
        return False


# The program configs as the tune JSON names them: "coop" and "pingpong" for the first two (as
# since the first runs, so that old and new files compare), the schedule and tile for the others.
# The scripts' copy: scripts/coda_choose.py (the package does not import scripts).
SHORT_CONFIG_NAMES = {"coop_128x256_2x1": "coop", "pingpong_128x128_2x1": "pingpong"}


def _describe(candidate: tuple[str, str, int]) -> str:
    config, raster, swizzle = candidate
    name = SHORT_CONFIG_NAMES.get(config, config.rsplit("_", 1)[0])
    return f"{name} {raster.replace('_', ' ')} swizzle {swizzle}"


def tune_case(case, model_name: str, m: int, args, watch: Stopwatch, device) -> dict | None:
    """The op's row at M; None where it is compiled for none of --configs."""
    from coda import ops
    from coda._native import C

    candidates = C.program_candidates()
    runnable = select_candidates(candidates, C.op_candidates(case.op_key), args.configs)
    runnable = shortlisted(runnable, candidates, args.shortlist_rows.get((case.name, model_name, m)),
                           args.slack)
    if not runnable:
        return None
    sets = _operand_sets(case, MODELS[model_name], m, device)
    gemm_ab = [(t[case.gemm[0]], t[case.gemm[1]]) for t in sets]
    a, w = gemm_ab[0]
    n, k = (w.shape[1] if case.dgrad else w.shape[0]), a.shape[1]

    def forced(i):
        def run(t):
            with ops.forced_kernel(case.op_key, i):
                return case.coda(t)
        return run

    steps = {"torch_matmul": matmul_step(case, gemm_ab), "today": _rotating(sets, case.coda)}
    steps.update({f"c{i}": _rotating(sets, forced(i)) for i in runnable})
    result = interleaved_rounds(steps, watch, rounds=args.rounds, iters=args.iters, warmup=args.warmup,
                                heat=args.heater, clocks=args.clocks)
    case.coda(sets[0])  # once more as the op runs today, to name the kernel it chose
    today_kernel = kernel_ran(case)

    def ratio(name):
        return round_ratio(result.round_medians_ms, result.errors, name, "torch_matmul")

    ratios = {f"c{i}": ratio(f"c{i}") for i in runnable}
    today = ratio("today")
    timed = {name: r for name, r in ratios.items() if r is not None}
    best = min(timed, key=timed.get)
    index = int(best[1:])
    stock_out = case.stock(stock_inputs(case, sets[:1])[0], PYTORCH)
    with ops.forced_kernel(case.op_key, index):  # the standard layout of its outputs too
        checks = check(case, sets[0], case.coda(sets[0]), stock_out)
    passed = all(err <= bound for err, _, bound in checks.values())
    gain = 1 - timed[best] / today if today else None
    confirmed = None
    if worth_confirming(_describe(candidates[index]), today_kernel, gain, passed, args.min_gain):
        between = {}
        if flips_schedule(_describe(candidates[index]), today_kernel):
            between = stock_steps(case, stock_inputs(case, sets), compiled(case))
        confirmed = confirm({**steps, **between}, best, watch, args, between=list(between))
    row = {"name": case.name, "op": case.op_key, "shape": model_name, "M": m, "N": n, "K": k,
           "candidates": [{"kernel": _describe(candidates[i]), "x_matmul": ratios[f"c{i}"]} for i in runnable],
           "today_kernel": today_kernel,
           "today_x_matmul": today, "pick": _describe(candidates[index]), "pick_x_matmul": timed[best],
           "gain": gain, "confirmed": confirmed, "check_passed": passed, "errors": result.errors,
           "rounds_ms": result.round_medians_ms, **result.clock_record(),
           "table_row": C.op_table_row(case.op_key, m, n, k, index)}
    row["written"] = confirmed is not None and confirmed["gain"] is not None and confirmed["gain"] >= args.min_gain
    del sets, gemm_ab, stock_out
    torch.cuda.empty_cache()
    return row


def worth_confirming(pick_kernel: str, today_kernel: str | None, gain: float | None, passed: bool,
                     min_gain: float) -> bool:
    """Whether a pick is re-timed head to head against today's choice (and may become a row): its
    outputs passed, it looked `min_gain` ahead, and it is another kernel than the one today runs.
    The same kernel "ahead" measures only the harness's noise: in the thirty-first session the
    1B RMSNorm-RoPE at M = 4096 (~60 µs) read 9 % faster forced than as chosen, the same kernel,
    in 10 confirmation rounds (bench/RESULTS.md); such a row would pin today's choice, not change it."""
    return passed and gain is not None and gain >= min_gain and pick_kernel != today_kernel


def flips_schedule(pick_kernel: str, today_kernel: str | None) -> bool:
    """Whether a pick runs another schedule (Cooperative / Pingpong) than today's kernel. Such a pick
    is confirmed with the benchmark of record's other variants (eager and compiled PyTorch) in the
    rounds: timed with torch.matmul alone, Pingpong read 5-9 % ahead of Cooperative at the RMSNorm
    backward's QKV dgrad, and 4-7 % behind it with them (twenty-ninth, thirty-first and
    thirty-second sessions; docs/benchmarks.md §5.1): what runs between launches decides it."""
    def schedule(kernel: str) -> str:
        return kernel.split()[0].split("_")[0]  # "coop", "pingpong"

    return today_kernel is not None and schedule(pick_kernel) != schedule(today_kernel)


def best_over_today(row: dict) -> float | None:
    """The best candidate's time over today's choice's (1: today is the best; issue 13's bar 0.92):
    from the head-to-head confirmation where one ran (unbiased), else from the sweep (the pick's
    estimate biased low, so this errs against today's choice)."""
    confirmed = row.get("confirmed") or {}
    if confirmed.get("gain") is not None:
        return min(1.0, 1 - confirmed["gain"])
    today, best = row["today_x_matmul"], row["pick_x_matmul"]
    return min(1.0, best / today) if today else None


def summary(rows: list[dict], within: float) -> str:
    """One line: how many rows' choice today is within `within` of the best candidate, and the worst."""
    scored = [(score, r) for r in rows if (score := best_over_today(r)) is not None]
    if not scored:
        return "no row timed today's choice"
    worst, r = min(scored, key=lambda x: x[0])
    ok = sum(score >= within for score, _ in scored)
    return (f"today's choice within {within:.2f} of the best candidate on {ok} of {len(scored)} rows; "
            f"worst {worst:.3f} ({r['name']} {r['shape']} M = {r['M']})")


def confirm(steps: dict, pick: str, watch: Stopwatch, args, between: Sequence[str] = ()) -> dict:
    """The pick against today's choice alone, in fresh rounds: the paired per-round ratio
    pick ÷ today (no selection among candidates, so no winner's curse), and both against matmul;
    `between`: other steps timed in the same rounds (flips_schedule), named in the result."""
    names = ("torch_matmul", *between, "today", pick)
    result = interleaved_rounds({name: steps[name] for name in names}, watch,
                                rounds=args.confirm_rounds, iters=args.iters, warmup=args.warmup,
                                heat=args.heater, clocks=args.clocks)
    r = result.round_medians_ms
    if result.errors or not r.get(pick) or not r.get("today"):
        return {"gain": None, "errors": result.errors}

    def paired(a, b):
        return round_ratio(r, result.errors, a, b)

    return {"gain": 1 - paired(pick, "today"), "today_x_matmul": paired("today", "torch_matmul"),
            "pick_x_matmul": paired(pick, "torch_matmul"), "rounds_ms": r, **result.clock_record(),
            "between": list(between)}


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.3f}"


def table(rows: list[dict]) -> str:
    lines = ["| op | model | M×N×K | today × matmul | pick | pick × matmul | gain | confirmed gain | best ÷ today | check | row |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['shape']} | {r['M']}×{r['N']}×{r['K']} | {_fmt(r['today_x_matmul'])} | "
                     f"{r['pick']} | {_fmt(r['pick_x_matmul'])} | {_fmt(r['gain'])} | "
                     f"{_fmt((r.get('confirmed') or {}).get('gain'))} | {_fmt(best_over_today(r))} | "
                     f"{'ok' if r['check_passed'] else '**FAILED**'} | {'written' if r['written'] else 'kept'} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    from coda._native import C

    try:  # a bad --configs or --shortlist fails before any GPU work
        select_candidates(C.program_candidates(), [], args.configs)
        args.shortlist_rows = load_shortlist(args.shortlist, C.program_candidates())
    except ValueError as error:
        print(f"coda.bench tune: {error}", file=sys.stderr)
        return 2
    run = start_run(args, "coda.bench tune")
    if run is None:
        return 2
    device, tokens, watch, args.heater, args.clocks = run.device, run.tokens, run.watch, run.heater, run.clocks
    record = report.RunRecord(args.out / "tune.json", run_metadata(run, args, "tune", argv, min_gain=args.min_gain))
    rows, lines = record.rows, []
    for model_name in args.models.split(","):
        for case in cases(MODELS[model_name]):
            if (args.ops != "all" and case.name not in args.ops.split(",")) or not _has_key(case.op_key):
                continue
            for m in tokens:
                row = tune_case(case, model_name, m, args, watch, device)
                if row is None:
                    print(f"{case.name}: compiled for none of --configs {args.configs}", flush=True)
                    break
                record.add(row)
                if row["written"]:
                    c = row["confirmed"]
                    lines.append(f"{row['table_row']}  // {model_name}: {c['pick_x_matmul']:.3f} x matmul, "
                                 f"was {c['today_x_matmul']:.3f} (head to head)")
                print(table([row]).splitlines()[-1], flush=True)
    record.finish()
    (args.out / "op_table.inc").write_text("".join(line + "\n" for line in lines))
    (args.out / "tune.md").write_text(table(rows) + "\n\n" + summary(rows, args.within) + "\n")
    print(table(rows))
    print(summary(rows, args.within))
    print(f"{len(lines)} of {len(rows)} rows written to {args.out / 'op_table.inc'}")
    return 0 if all(r["check_passed"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
