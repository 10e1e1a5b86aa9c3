#!/usr/bin/env bash
# Session 29, call 6 (H100): the benchmark of record (python -m coda.bench ops, variants coda and
# torch_matmul) on the three ops with a per-column partial, three wheels in one call, passes in
# the order old mid new new mid old: old = 49cbac1 (CUTLASS's column reduction, last session's
# table), mid = a2b92ff's code with 49cbac1's H100 table (the node alone), new = a2b92ff (the node
# and this session's rows). 1B and 8B at M = 16384 and 22882. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
i=0
for w in old mid new new mid old; do
  i=$((i + 1))
  python3 -m pip install -q --no-deps --force-reinstall "$OLDPWD/.prebuilt/ab3/$w/"coda-*.whl > /dev/null 2>&1 || exit 1
  timeout 75 python3 -m coda.bench ops --models 1B,8B --tokens 16384,22882 --seed 296 --rounds 5 \
    --ops linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd --variants coda,torch_matmul \
    --out "$OUT/r/ops_${i}_$w" > "ops_${i}_$w.log" 2>&1
  echo "pass $i $w rc=$?"
done
python3 - <<'PY'
import json, glob, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sorted(glob.glob("ops_*_*/ops.json")):
    w = path.split("/")[0].split("_")[2]
    for r in json.load(open(path))["rows"]:
        rows[(r["name"], r["shape"], r["M"])][w].append((r["coda_ms"], r["ratios"]["coda/torch_matmul"], r["kernel"]))
for key, by in rows.items():
    print(*key)
    for w in ("old", "mid", "new"):
        print(f"  {w:4s}", "  ".join(f"{ms:.3f} ms {x:.3f}x {k}" for ms, x, k in by[w] if ms is not None))
PY
cd "$OUT" && tar -czf r.tgz r && rm -rf r
