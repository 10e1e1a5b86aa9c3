#!/usr/bin/env bash
# Twenty-fourth session, call 6 (asked for an H200). On an H200: the device suite of .prebuilt/s24,
# coda-train --precision amp, the 8B ops in one process. On an H100: the cold device build on 16
# cores (issue 11's target: <= 3 min), as scripts/test.sh builds (pip, tests and bench on).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > gpu.txt 2>&1; cat gpu.txt
if grep -q H200 gpu.txt; then
  python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24w/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
  site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
  rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
  python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
  export PYTHONPATH=/tmp/ov:/tmp/whl
  timeout 200 "$repo"/.prebuilt/s24w/coda_device_tests --gtest_brief=1 > device_tests.log 2>&1
  echo "device tests rc=$? at $((SECONDS - start)) s"; tail -2 device_tests.log; grep -E "FAILED" device_tests.log | head
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
  mkdir -p "$OUT/r/train_amp" && cd "$OUT/r/train_amp"
  PYTHONUNBUFFERED=1 timeout 240 python3 -m coda.train --precision amp --out "$OUT/r/train_amp" > "$OUT/r/train_amp.log" 2>&1
  echo "train rc=$? at $((SECONDS - start)) s"; grep -E "^(hf_|coda|variant|PASS|MISS|n/a|model)" "$OUT/r/train_amp.log"
  cd "$OUT/r"; tar czf "$OUT/0-all.tgz" . 2>/dev/null
  PYTHONUNBUFFERED=1 timeout $((575 - (SECONDS - start))) python3 -m coda.bench ops --out "$OUT/r/ops" --models 8B --tokens 16384 --rounds 5 > ops.log 2>&1
  echo "ops rc=$? at $((SECONDS - start)) s"
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
else
  cd "$repo"
  export CMAKE_BUILD_PARALLEL_LEVEL=16 CUTLASS_DIR=$repo/third_party/cutlass
  t0=$SECONDS
  timeout 560 python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir=/tmp/b16 \
    -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON . > "$OUT/r/build16.log" 2>&1
  echo "cold build (16 jobs) rc=$? in $((SECONDS - t0)) s"
  python3 scripts/ninja_slowest.py /tmp/b16 > "$OUT/r/slowest.txt" 2>&1; head -15 "$OUT/r/slowest.txt"
  grep -c "Building CUDA" "$OUT/r/build16.log"; nproc
fi
