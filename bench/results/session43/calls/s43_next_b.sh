#!/usr/bin/env bash
# Prepared in the 43rd session for the next (H100, then an H200 with needs_h200; carry a wheel of
# main as .prebuilt/sNN and set WHEEL=.prebuilt/sNN). The first experiment of docs/gemm-gap.md:
# CODA's plain GEMM against matmul over K = 1024 ... 16384 at the 8B QKV (N = 6144) and gate/up
# (N = 28672) widths, M = 16384, as the GPU comes and under sustained load, each fitted to
# t = a + b·K (python -m coda.bench ksweep, never GPU-run before this call: check its output first).
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=${CODA_COMMIT:-$(cat "$repo/${WHEEL:?}/COMMIT" 2>/dev/null || echo unknown)}
python3 -m pip install -q --no-deps --force-reinstall "$repo/$WHEEL"/coda-*.whl > /dev/null 2>&1 || exit 1
for n in 6144 28672; do
  for state in boost sustained; do
    extra=""; [ $state = sustained ] && extra="--sustained 20"
    timeout $((580 - SECONDS + t0)) python3 -m coda.bench ksweep --m 16384 --n $n $extra \
      --out "$OUT/r/ksweep_${n}_$state" > ksweep_${n}_$state.log 2>&1
    echo "ksweep N=$n $state rc=$? at $((SECONDS - t0)) s"; cat ksweep_${n}_$state.log
  done
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
