#!/usr/bin/env bash
# Twenty-sixth session, call 2 (2 GPUs): the data-parallel tests with the new FSDP2
# MixedPrecisionPolicy case (fp32 master shards, bf16 compute, fp32 reduction), the sharding CPU
# tests and the model tests, on the carried wheel (45ab8e0's kernels) under this tree's Python.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/r/gpu.txt" 2>&1; cat "$OUT/r/gpu.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
python3 -m pip install --no-deps --force-reinstall .prebuilt/s24w/*.whl > "$OUT/r/install.log" 2>&1 || { tail -5 "$OUT/r/install.log"; exit 1; }
site=$(cd / && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r python/coda/. /tmp/ov/coda/
export PYTHONPATH=/tmp/ov
cd "$OUT/r"
CODA_REQUIRE_GPU=1 CODA_REQUIRE_GPUS=2 timeout 400 python3 -m pytest -q -p no:cacheprovider -rA \
  "$repo/tests/python/test_gpu_distributed.py" "$repo/tests/python/test_sharding_cpu.py" \
  "$repo/tests/python/test_gpu_model.py" > pytest_dist.log 2>&1
echo "pytest rc=$?"; grep -E "^(PASSED|FAILED|SKIPPED|ERROR)|^E  " pytest_dist.log | head -50; tail -1 pytest_dist.log
rm -f install.log
