#!/usr/bin/env bash
# Session 38, call 2 (H100). Branch exp-pp192x128 at 32b99e0 (wheel .prebuilt/exp192b: call 1's
# wheel + the stats capacity padded to 768 rows, whose Python mirror had stopped call 1's tuner at
# the first RMSNorm consumer). (1) The Python op tuner on every op x 1B/8B/Qwen3-8B at 16384, as the
# GPU comes and sustained (--sustained 20), then scripts/both_states_picks.py. (2) The Python GPU
# suite on the same wheel (main's tests but the branch's test_cpu_package.py: 40 candidates).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/exp192b/coda-*.whl > /dev/null 2>&1 || exit 1
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  CODA_COMMIT=32b99e0-exp192 timeout 200 python3 -m coda.bench tune --models 1B,8B,Qwen3-8B --tokens 16384 \
    --rounds 5 --seed 3407 $extra --out "$OUT/r/tune_$state" > tune_$state.log 2>&1
  echo "tune $state rc=$? at $((SECONDS - t0)) s"
  grep -E "within|written" tune_$state.log | cut -c1-200
done
python3 "$repo/scripts/both_states_picks.py" tune_boost/tune.json tune_sustained/tune.json > both_states.inc 2> both_states.err
echo "both_states rc=$?"; cat both_states.inc both_states.err
cp "$repo"/.prebuilt/exp192b/test_cpu_package.py "$repo"/tests/python/  # the branch's candidate counts
CODA_REQUIRE_GPU=1 timeout $((585 - SECONDS + t0)) python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
