#!/usr/bin/env bash
# Session 29, call 11 (H100): the RMSNorm backward's Pingpong rows against Cooperative in the
# end-state configuration (every variant, as call 9), passes pp final final pp: pp = e8f6aec's code
# with the Pingpong rows (the v2pp wheel of call 8), final = the submitted state (Cooperative rows).
# 8B and Qwen3-8B at M = 16384 and 13350. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
repo=$PWD
cd "$OUT/r"
i=0
for w in pp final final pp; do
  i=$((i + 1))
  python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab6/$w/"coda-*.whl > /dev/null 2>&1 || exit 1
  timeout 80 python3 -m coda.bench ops --models 8B,Qwen3-8B --tokens 16384,13350 --seed 2911 --rounds 5 \
    --ops linear_rmsnorm_bwd_qkv --out "$OUT/r/ops_${i}_$w" > "ops_${i}_$w.log" 2>&1
  echo "pass $i $w rc=$?"
done
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sorted(glob.glob("ops_*_*/ops.json")):
    w = path.split("/")[0].split("_")[2]
    for r in json.load(open(path))["rows"]:
        rows[(r["name"], r["shape"], r["M"])][w].append((r["coda_ms"], r["ratios"]["coda/torch_matmul"], r["ratios"]["coda/compile"], r["kernel"]))
for key, by in rows.items():
    print(*key)
    for w in ("pp", "final"):
        print(f"  {w:5s}", "  ".join(f"{ms:.3f} ms {x:.3f}x mm {c:.3f}x compile {k}" for ms, x, c, k in by[w]))
PY
cd "$OUT" && tar -czf r.tgz r && rm -rf r
