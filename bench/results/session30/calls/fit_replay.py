"""Session 30: replays the swizzle fit on op-tuner runs (tune.json), with and without the rule that
a row tuned along M whose swizzle the fit lowers walks along N, reading each rule's choice from the
candidates timed in the same rounds. The tuned choice is the nearest H100 table row (two of M, N,
K equal, the third nearest in log2), as at 1eb3c3b's src/ops/op_table_h100.inc.
    python3 fit_replay.py tune.json [...]"""
import json
import math
import re
import sys

GEOMETRY = {"coop": (128, 256), "pingpong": (128, 128), "pingpong_128x192": (128, 192)}  # cluster 2 x 1
CONFIGS = {"Pingpong128x128Cluster2x1": "pingpong", "Coop128x256Cluster2x1": "coop",
           "Pingpong128x192Cluster2x1": "pingpong_128x192"}
SHARED_KEY = {"linear_qknorm_rope_save_pre": "linear_qknorm_rope", "linear_rmsnorm_bwd_qkv": "linear_rmsnorm_bwd"}


def round_up(x, m):
    return (x + m - 1) // m * m


def tiles(config, m, n, swizzle):  # as gemm::scheduled_tiles
    tm, tn = GEOMETRY[config]
    bm, bn = round_up(-(-m // tm), 2), -(-n // tn)
    small = min(bm, bn)
    swizzle = min(swizzle, 8 if small >= 6 else 4 if small >= 3 else 2 if small >= 2 else 1)
    return round_up(bm, 2 * swizzle) * round_up(bn, swizzle)


def table(path="src/ops/op_table_h100.inc"):
    rows = {}
    pattern = r"\{OpKey::k(\w+), (\d+), (\d+), (\d+), \{TileConfig::k(\w+), RasterOrder::k(\w+), (\d), "
    for op, m, n, k, config, raster, swizzle in re.findall(pattern, open(path).read()):
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower()
        rows.setdefault(name, []).append((int(m), int(n), int(k), CONFIGS.get(config, config),
                                          raster.lower().replace("along", "along "), int(swizzle)))
    return rows


def tuned(rows, op, m, n, k):
    best, distance = None, math.inf
    for tm, tn, tk, *choice in rows.get(SHARED_KEY.get(op, op), []):
        if (m == tm) + (n == tn) + (k == tk) < 2:
            continue
        d = abs(math.log2(m / tm if m != tm else n / tn if n != tn else k / tk))
        if d < distance:
            best, distance = choice, d
    return best


def replay(runs, flip):
    rows, out = table(), []
    for r in runs:
        c = {x["kernel"]: x["x_matmul"] for x in r["candidates"] if x["x_matmul"]}
        choice = tuned(rows, r["name"], r["M"], r["N"], r["K"])
        if choice is None or choice[1] == "heuristic":
            continue
        config, raster, swizzle = choice
        tuned_swizzle, bound = swizzle, 0.05 if r["name"] == "linear_swiglu_bwd" else 0.02
        floor = tiles(config, r["M"], r["N"], 1)
        while swizzle > 1 and tiles(config, r["M"], r["N"], swizzle) > (1 + bound) * floor:
            swizzle //= 2
        if flip and swizzle < tuned_swizzle and raster == "along m":
            raster = "along n"
        if swizzle == 1:  # the heuristic raster is no candidate
            continue
        out.append((c[f"{config} {raster} swizzle {swizzle}"] / min(c.values()), r["name"], r["shape"], r["M"],
                    f"{raster} s{swizzle}"))
    return out


runs = [r for path in sys.argv[1:] for r in json.load(open(path))["rows"]]
for flip in (False, True):
    ratios = replay(runs, flip)
    geomean = math.exp(sum(math.log(x[0]) for x in ratios) / len(ratios))
    print(f"lowered along M walks along N: {flip}: {len(ratios)} rows, best / choice geomean {geomean:.3f}, "
          f"worst {max(ratios)[0]:.3f}, below 0.92: {sum(x[0] > 1 / 0.92 for x in ratios)}")
