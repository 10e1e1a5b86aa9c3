"""Session 31: replays the forward rule below 4096 tokens (ops::detail::forward_program_rule and
wide_pingpong_where_measured, as Python twins) on op-tuner runs, each choice at its candidate
column: the old rule, the shipped few-token rule (always Pingpong 128 x 192), and the wave test
prepared for the next session (keep 128 x 128 where the wide grid's waves x 1.5 exceed 128 x 128's
waves by more than delta). Run from the repository root:
    python3 bench/results/session31/calls/wave_test_replay.py"""
import collections
import glob
import json
import math

GEO = {"coop": (128, 256), "pingpong": (128, 128), "pingpong_128x192": (128, 192)}  # cluster 2 x 1
FWD = {"linear_residual_rms", "linear_rmsnorm", "linear_swiglu", "linear_rmsnorm_swiglu", "linear_rope",
       "linear_rmsnorm_rope", "linear_qknorm_rope", "linear_rmsnorm_qknorm_rope", "linear_cross_entropy",
       "linear_bias_gelu", "linear_bias_gelu_save_pre"}


def ru(x, m):
    return (x + m - 1) // m * m


def sched(cfg, m, n, sw):  # gemm::scheduled_tiles
    tm, tn = GEO[cfg]
    bm, bn = ru(-(-m // tm), 2), -(-n // tn)
    small = min(bm, bn)
    sw = min(sw, 8 if small >= 6 else 4 if small >= 3 else 2 if small >= 2 else 1)
    return ru(bm, 2 * sw) * ru(bn, sw)


def fit(cfg, raster, sw, m, n, along_n=True):  # gemm::fit_swizzle, 2 %, Pingpong keeps its raster
    floor, tuned = sched(cfg, m, n, 1), sw
    while sw > 1 and sched(cfg, m, n, sw) > 1.02 * floor:
        sw //= 2
    if along_n and sw < tuned and raster == "along m":
        raster = "along n"
    return cfg, raster, sw


def old_rule(m, n, k, wide):
    cfg = "coop" if k >= 8192 else "pingpong"
    tm, tn = GEO[cfg]
    along_m = ru(-(-m // tm), 2) < -(-n // tn) and m * k * 2 <= 16 << 20
    raster = "along m" if along_m else "along n"
    sw = 4 if cfg == "coop" else 2 if along_m else 1
    if wide and m >= 4096 and k >= 4096 and cfg == "pingpong" and raster == "along n":
        return "pingpong_128x192", "along n", 2
    return cfg, raster, sw


def waves(cfg, m, n):
    return math.ceil(sched(cfg, m, n, 1) / 132) * GEO[cfg][1] / 128


def new_rule(m, n, k, wide, delta):
    base = old_rule(m, n, k, wide)
    if not wide or base[0] != "pingpong" or m >= 4096:
        return base
    if delta is not None and waves("pingpong_128x192", m, n) > waves("pingpong", m, n) * (1 + delta):
        return base
    raster = "along m" if ru(-(-m // 128), 2) < -(-n // 192) else "along n"
    return fit("pingpong_128x192", raster, 2, m, n, along_n=False)


rows = [r for f in sorted(glob.glob("bench/results/session31/call*/r/tune_*/tune.json"))
        for r in json.load(open(f))["rows"] if r["name"] in FWD and r["M"] < 4096]
geomean = lambda a: math.exp(sum(map(math.log, a)) / len(a))
for delta in ("old", None, 0.0, 0.05, 0.1, 0.2):
    out = collections.defaultdict(list)
    for r in rows:
        c = {x["kernel"]: x["x_matmul"] for x in r["candidates"] if x["x_matmul"]}
        wide = any(name.startswith("pingpong_128x192") for name in c)
        m, n, k = r["M"], r["N"], r["K"]
        choice = old_rule(m, n, k, wide) if delta == "old" else new_rule(m, n, k, wide, delta)
        cfg, raster, sw = fit(*choice, m, n)
        if (v := c.get(f"{cfg} {raster} swizzle {sw}")):
            out[m].append(min(c.values()) / v)
    every = sum(out.values(), [])
    print(f"{'shipped' if delta is None else delta!s:8}",
          " ".join(f"{m}:{geomean(a):.3f}/{sum(x >= 0.92 for x in a)}of{len(a)}" for m, a in sorted(out.items())),
          f"| all {geomean(every):.3f} {sum(x >= 0.92 for x in every)}/{len(every)}")
