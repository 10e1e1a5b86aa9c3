#!/usr/bin/env bash
# Prepared in the 42nd session for the next (H100; carry .prebuilt/s42f and .prebuilt/s42n).
# The final RMSNorm's backward in the cross-entropy op's dX GEMMs (branch exp-ce-final-norm,
# .prebuilt/s42n = 44b72b4, rebased onto main 693632e: CrossEntropyGrads::norm, norm_linear_cross_entropy_fwd_bwd, used by
# NormLinearCrossEntropy) against main (.prebuilt/s42f, 28c390c). (1) Its C++ device tests (the new
# BackwardOps.CrossEntropyWithFinalNormAgainstStandard and every cross-entropy / RMSNorm test);
# (2) the Python GPU tests of the ops (opcheck, bad input) and the model (gradients against HF);
# (3) coda-train, coda only, processes old new new old (tokens/s; predicted +0.5-1 % at the
# defaults, H = 1024: the norm's backward was ~1 GB of fp32 passes, ~0.3 ms of a 36 ms step).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
tar -xJf "$repo"/.prebuilt/s42n/tests.tar.xz -C "$repo"/.prebuilt/s42n || exit 1
timeout 120 "$repo"/.prebuilt/s42n/coda_device_tests --gtest_filter='*CrossEntropy*:*cross_entropy*:*RmsNorm*' > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |tests ran" device_tests.log | tail -6
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s42n/coda-*.whl > /dev/null 2>&1 || exit 1
# The branch's Python tests (main's lack the new op's samples): .prebuilt/s42n/tests_python.tar.xz.
mkdir -p branch && tar -xJf "$repo"/.prebuilt/s42n/tests_python.tar.xz -C branch || exit 1
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider branch/tests/python/test_gpu_ops.py \
  branch/tests/python/test_gpu_bad_input.py branch/tests/python/test_gpu_model.py > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
for pass in o1 n1 n2 o2; do
  dir=s42f; [ "${pass%[12]}" = n ] && dir=s42n
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$dir/coda-*.whl > /dev/null 2>&1 || exit 1
  timeout $((585 - SECONDS + t0)) python3 -m coda.train --variants coda --steps 120 --out "train_$pass" > "train_$pass.log" 2>&1
  echo "train $pass ($dir) rc=$? at $((SECONDS - t0)) s: $(grep -h '^coda ' "train_$pass.log" | tail -1)"
done
rm -rf branch; cd "$OUT" && tar -czf r.tgz r && rm -rf r
