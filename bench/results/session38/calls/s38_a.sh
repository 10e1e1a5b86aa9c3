#!/usr/bin/env bash
# Session 38, call 1 (H100). (1) Branch exp-pp192x128 (wheel .prebuilt/exp192, labelled e9d7eb7):
# the Python op tuner on the four QK-norm programs x 1B/8B/Qwen3-8B at 16384, once as the GPU comes
# and once sustained (--sustained 20), then scripts/both_states_picks.py on the two runs.
# (2) The Python GPU suite on main's exact kernels and tables (.prebuilt/s37t = 3ddf8e3's device
# code = HEAD 5c1f23e's). (3) The C++ device suite on the branch binary (covers the new config:
# the op tests force every compiled config).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/exp192/coda-*.whl > /dev/null 2>&1 || exit 1
ops=linear_qknorm_rope,linear_rmsnorm_qknorm_rope,linear_qknorm_rope_save_pre,linear_rmsnorm_qknorm_rope_save_pre
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  CODA_COMMIT=e9d7eb7-exp192 timeout 200 python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --tokens 16384 \
    --rounds 5 --seed 3407 --ops $ops $extra --out "$OUT/r/tune_$state" > tune_$state.log 2>&1
  echo "tune $state rc=$? at $((SECONDS - t0)) s"
  grep -E "within|written" tune_$state.log | cut -c1-200
done
python3 "$repo/scripts/both_states_picks.py" tune_boost/tune.json tune_sustained/tune.json > both_states.inc 2> both_states.err
echo "both_states rc=$?"; cat both_states.inc both_states.err
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s37t/coda-*.whl > /dev/null 2>&1 || exit 1
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
left=$((585 - SECONDS + t0))
timeout $left "$repo"/.prebuilt/exp192/coda_device_tests > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|tests ran" device_tests.log | tail -5
cd "$OUT" && tar -czf r.tgz r && rm -rf r
