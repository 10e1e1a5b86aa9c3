#!/usr/bin/env bash
# Session 40, call 2 (H200; run again as call 3 with the default --min-gain 0.02 and M = 5793,11585:
# call 2 passed --min-gain 1, which confirms and writes nothing, a sweep only). The H200's op table has Llama-shape rows at M = 16384 only, so every
# other M takes the 16384 row (at the random M = 5958 of the 39th session's record, 13 of 42
# forward rows met the bar as the GPU came, against 27 at 16384). The op tuner at M = 5793 (the
# H100 table's bucket), 8B / Qwen3-8B / 1B widths, every op: as the GPU comes, then sustained on
# the shortlist, then the rows best over both clock states (docs/benchmarks.md §5.1).
# Wheel .prebuilt/s39a (1cf0d79: the library code of HEAD but a host-only change in merge.cu).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/s39a/coda-*.whl > /dev/null 2>&1 || exit 1
export PYTHONUNBUFFERED=1 CODA_COMMIT=1cf0d79-s40b
args=(--models 8B,Qwen3-8B,1B --tokens ${TUNE_TOKENS:-5793} --rounds 3 ${TUNE_EXTRA:-})
cd "$OUT/r"
timeout ${BOOST_S:-310} python3 -m coda.bench tune --out tune "${args[@]}" > tune.log 2>&1
echo "boost rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune.log
timeout $((560 - SECONDS + t0)) python3 -m coda.bench tune --out tune_sustained --sustained 20 \
  --shortlist tune/tune.json "${args[@]}" > tune_sustained.log 2>&1
echo "sustained rc=$? at $((SECONDS - t0)) s"; grep -E "within|rows written" tune_sustained.log
python3 "$repo/scripts/both_states_picks.py" tune/tune.json tune_sustained/tune.json > both_states.inc
cat both_states.inc | cut -c1-250
cd "$OUT" && tar -czf r.tgz r && rm -rf r
