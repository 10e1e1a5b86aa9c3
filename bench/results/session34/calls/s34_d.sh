#!/usr/bin/env bash
# Session 34, call 4 (H100). overlap-coop 9833cc4: (1) the C++ device suite on its binaries
# (.prebuilt/ovpack); (2) every-variant A/B of the loss-only cross-entropy and its forward+backward
# at 1B and 8B widths, M = 10837 and 16384, in the op benchmark (outputs checked), processes old new
# new old: old = the wheel of 1c03be1 (main's kernels and tables), new = the overlap-coop wheel
# (the 1B CE row now ovcoop along M s2; every other H100 row as main's).
set -u
repo=$PWD
tar -xJf .prebuilt/ovpack/ovbin.tar.xz -C .prebuilt || exit 1
bin=$PWD/.prebuilt/ovbin
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
cat "$bin/COMMIT" .prebuilt/ab/*/COMMIT | tee "$OUT/r/commit.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
timeout 200 "$bin/coda_device_tests" --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED)|tests ran" device_tests.log | head -20
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
i=0
for w in old new new old; do
  i=$((i + 1)); left=$((570 - SECONDS + t0)); [ $left -lt 40 ] && break
  install $w
  timeout $((left < 110 ? left : 110)) python3 -m coda.bench ops --ops linear_cross_entropy,linear_cross_entropy_fwd_bwd \
    --models 1B,8B --tokens 10837,16384 --seed 341$i --rounds 5 --out "$OUT/r/ab_${i}_${w}" > "ab_${i}_${w}.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
