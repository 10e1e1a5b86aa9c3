#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two wheels (scripts/build-wheel.sh; e.g. a table row or a kernel change and its baseline) timed
# against each other in one device call: processes old new new old, as the GPU comes and then
# under sustained GEMM load (--sustained 20), the op, PyTorch's matmul and CODA's plain GEMM in
# the same rounds, outputs checked (docs/benchmarks.md §5.1). Run on the GPU machine from the
# repository root, the two wheel folders carried (scripts/pack-ab-wheel.sh makes each, with its
# COMMIT and the device tests beside the wheel):
#   scripts/wheel-ab.sh OLD_DIR NEW_DIR "1B linear_cross_entropy,linear_swiglu_bwd" ["8B linear_rope" ...]
# One "MODEL op,op,..." argument per model; put a row the change does not touch among them as a
# control. Environment: AB_TOKENS (default 16384), AB_ROUNDS (default 5; more for kernels under
# ~100 µs, whose pairs' spread reached 0.2-1.2 at M = 4600 in the 41st session), AB_STATES (default "boost sustained"),
# AB_BUDGET_S (default 560: passes that would start later are skipped), AB_LABEL (the commit label
# the JSON records; default the wheel folders' names), AB_VARIANTS (default coda,torch_matmul,coda_gemm;
# a change that flips a kernel between Pingpong and Cooperative adds eager: what runs between
# launches can reverse that ranking, docs/benchmarks.md §5.1). Output: $OUT/ab (or ./ab), one
# STATE_PASS_MODEL folder per pass and model, and the verdict of scripts/ab_summary.py, printed and
# kept as ab/summary.md. It ends with the NEW wheel installed (the passes end on the old one), so
# tests run after it check the build under test.
set -uo pipefail
old=$1 new=$2; shift 2
repo=$PWD t0=$SECONDS
out=${OUT:-$PWD}/ab; mkdir -p "$out"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$out/gpu.txt"
for state in ${AB_STATES:-boost sustained}; do
  extra=(); [ "$state" = sustained ] && extra=(--sustained 20)
  for pass in o1 n1 n2 o2; do
    dir=$old; [ "${pass%[12]}" = n ] && dir=$new
    python3 -m pip install -q --no-deps --force-reinstall "$dir"/coda-*.whl > /dev/null 2>&1 \
      || { echo "cannot install $dir/coda-*.whl"; exit 1; }
    for spec in "$@"; do
      read -r model ops <<< "$spec"
      left=$(( ${AB_BUDGET_S:-560} - SECONDS + t0 ))
      [ "$left" -lt 15 ] && { echo "budget spent before $state $pass $model"; break 3; }
      CODA_COMMIT=${AB_LABEL:-$(basename "$old")-vs-$(basename "$new")}-$(basename "$dir") \
        timeout "$left" python3 -m coda.bench ops --models "$model" --ops "$ops" \
        --variants "${AB_VARIANTS:-coda,torch_matmul,coda_gemm}" --tokens "${AB_TOKENS:-16384}" --seed 3407 --rounds "${AB_ROUNDS:-5}" \
        "${extra[@]}" --out "$out/${state}_${pass}_$model" > "$out/${state}_${pass}_$model.log" 2>&1
    done
    echo "== $state $pass done at $((SECONDS - t0)) s"
  done
done
python3 "$repo/scripts/ab_summary.py" "$out" | tee "$out/summary.md"
# The last pass ran the old wheel; leave the new one installed for whatever runs next (the 40th
# session's call 1 ran its tests after this script on the old wheel without knowing).
python3 -m pip install -q --no-deps --force-reinstall "$new"/coda-*.whl > /dev/null 2>&1 \
  || echo "cannot reinstall $new/coda-*.whl: the old wheel stays installed"
