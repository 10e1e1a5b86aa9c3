#!/usr/bin/env bash
# Session 34, call 5 (H100). overlap-coop c8d87a7's wheel (call 4): every-variant A/B of the
# loss-only cross-entropy and its forward+backward at 1B and 8B widths, M = 10837 and 16384, in the
# op benchmark (outputs checked), processes old new new old (old = 1c03be1, main's kernels and
# tables; new = overlap-coop, whose only H100 table change is the 1B CE row); then the Python GPU
# suite on the new wheel.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat .prebuilt/ab/*/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
i=0
for w in old new new old; do
  i=$((i + 1)); left=$((330 - SECONDS + t0)); [ $left -lt 40 ] && break
  install $w
  CODA_COMMIT=$w timeout $((left < 80 ? left : 80)) python3 -m coda.bench ops --ops linear_cross_entropy,linear_cross_entropy_fwd_bwd \
    --models 1B,8B --tokens 10837,16384 --seed 341$i --rounds 5 --out "$OUT/r/ab_${i}_${w}" > "ab_${i}_${w}.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
install new
CODA_REQUIRE_GPU=1 timeout $((585 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider -x "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
