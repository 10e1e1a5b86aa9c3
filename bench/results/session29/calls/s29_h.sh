#!/usr/bin/env bash
# Session 29, call 8 (H100): the per-column node without shared memory of its own (e8f6aec: the
# RMSNorm backward's Pingpong kernel back to 6 mainloop stages). Carries .prebuilt/ab5: v2 = this
# commit's wheel and coda_device_tests, v2pp = the same code with this session's Pingpong rows of
# the RMSNorm backward put back in the H100 table, old = 49cbac1's wheel. 1. The C++ device suite.
# 2. The Python GPU tests. 3. The benchmark of record (variants coda and torch_matmul), passes
# old v2 v2pp v2pp v2 old, 1B and 8B at M = 16384 and 22882. One tarball back.
set -u
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
repo=$OLDPWD
timeout 200 "$repo/.prebuilt/ab5/coda_device_tests" > device_tests.log 2>&1
echo "device tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" device_tests.log | tail -12
python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab5/v2/"coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 190 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
i=0
for w in old v2 v2pp v2pp v2 old; do
  i=$((i + 1))
  python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab5/$w/"coda-*.whl > /dev/null 2>&1 || exit 1
  timeout 60 python3 -m coda.bench ops --models 1B,8B --tokens 16384,22882 --seed 296 --rounds 5 \
    --ops linear_bias_gelu_bwd,linear_rmsnorm_bwd_qkv --variants coda,torch_matmul \
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
    for w in ("old", "v2", "v2pp"):
        print(f"  {w:4s}", "  ".join(f"{ms:.3f} ms {x:.3f}x {k}" for ms, x, k in by[w] if ms is not None))
PY
cd "$OUT" && tar -czf r.tgz r && rm -rf r
