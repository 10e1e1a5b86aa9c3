#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A change to a table measured on one machine in one call: the package is built with the table
# in the tree (new), rebuilt with OLD (one file recompiles), then with new again, and the op
# benchmark runs the given rows after each build (variants coda, torch_matmul and coda_gemm: the
# last is the plain GEMM, which reads the GEMM table). OLD's rows say which table it replaces:
# `{OpKey::` rows src/ops/op_table_<gpu>.inc, `{OperandLayout::` rows
# src/gemm/kernel_table_<gpu>.inc. Read CODA's absolute ms across the three passes beside the
# ratios: the matmul baseline itself drifts a few % between passes (docs/benchmarks.md §5.1).
# Run on the GPU machine from the repository root:
#   scripts/table-aba.sh h100 OLD_TABLE.inc TOKENS "8B linear_swiglu_bwd,linear_rmsnorm" ["70B linear_rope" ...]
# (one "MODEL op,op,..." argument per model; put a row the change does not touch among them as a
# control). Output under $OUT/ab (or ./ab): one ops-py folder and log per pass and model.
set -euo pipefail
gpu=$1 old=$2 tokens=$3; shift 3
if grep -q "^{OperandLayout::" "$old"; then table=src/gemm/kernel_table_$gpu.inc; else table=src/ops/op_table_$gpu.inc; fi
out=${OUT:-$PWD}/ab; mkdir -p "$out"
cp "$table" "$out/new.inc"; cp "$old" "$out/old.inc"
for pass in new1 old new2; do
  cp "$out/${pass%[12]}.inc" "$table"
  python3 -m pip install --no-build-isolation --no-deps -Cbuild-dir="${BUILD_DIR:-/tmp/cw}" . \
    > "$out/install_$pass.log" 2>&1 || { tail -30 "$out/install_$pass.log"; exit 1; }
  for spec in "$@"; do
    read -r model ops <<< "$spec"
    python3 -m coda.bench ops --out "$out/${pass}_$model" --models "$model" --ops "$ops" \
      --tokens "$tokens" --variants coda,torch_matmul,coda_gemm > "$out/${pass}_$model.log" 2>&1
    grep "^| linear" "$out/${pass}_$model.log" | cut -d"|" -f2-5 | sed "s/^/$pass /"
  done
done
cp "$out/new.inc" "$table"
