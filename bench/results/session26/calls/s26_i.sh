#!/usr/bin/env bash
# Twenty-sixth session, call 9 (H100, warm after call 8: c370e80 installed): the Python GPU tests,
# then the benchmark of record for the backward ops at 1B (torch matmul, torch.compile in one process).
set -u
repo=$PWD
mkdir -p "$OUT/r"
cd "$OUT/r"
(cd / && python3 -c "import coda._C") || { echo "cold machine: no build here"; exit 1; }
CODA_REQUIRE_GPU=1 timeout 300 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$?"; tail -1 pytest.log; grep -E "^FAILED|^E " pytest.log | head -10
timeout 150 python3 -m coda.bench ops --models 1B --ops linear_swiglu_bwd,linear_rmsnorm_bwd,linear_bias_gelu_bwd --tokens 16384 --random-tokens --rounds 5 --out "$OUT/r/ops_bwd_1b" > ops_bwd_1b.log 2>&1
echo "ops rc=$?"; grep -E "linear_|random" ops_bwd_1b.log | head -12
