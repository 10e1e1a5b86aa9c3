#!/usr/bin/env bash
# Prepared in the 43rd session for the next (H100 first, then an H200 with needs_h200; carry a
# wheel of main as .prebuilt/sNN and set WHEEL=.prebuilt/sNN). Where a layer's time goes, with
# the clock each run had (the 43rd session's profile recorded none, docs/design.md §10.4):
# (1) the kernel profile at 8B and 1B widths (each run's SM clock is in kernels.json since
# 40a2b89); (2) the layer benchmark as the GPU comes and under sustained load (--sustained 20),
# whose per-round clocks say where CODA's layer stands against its floor in each state.
set -u
repo=$PWD; t0=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1 CODA_COMMIT=${CODA_COMMIT:-$(cat "$repo/${WHEEL:?}/COMMIT" 2>/dev/null || echo unknown)}
python3 -m pip install -q --no-deps --force-reinstall "$repo/$WHEEL"/coda-*.whl > /dev/null 2>&1 || exit 1
for size in 8B 1B; do
  timeout 200 python3 -m coda.bench kernels --size $size --variants coda,floor,hf_compile --iters 5 --m 16384 \
    --top 30 --out "$OUT/r/kernels_$size" > kernels_$size.log 2>&1
  echo "kernels $size rc=$? at $((SECONDS - t0)) s"; grep -E "^[a-z_]+:|SM clock|wall" kernels_$size.log
done
for state in boost sustained; do
  extra=""; [ $state = sustained ] && extra="--sustained 20"
  timeout $((580 - SECONDS + t0)) python3 -m coda.bench layer --sizes 8B,1B --rounds 5 --iters 3 $extra \
    --out "$OUT/r/layer_$state" > layer_$state.log 2>&1
  echo "layer $state rc=$? at $((SECONDS - t0)) s"; grep -E "^layer_" layer_$state.log
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
