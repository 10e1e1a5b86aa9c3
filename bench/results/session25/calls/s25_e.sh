#!/usr/bin/env bash
# Twenty-fifth session, call 5 (2 GPUs): every Python GPU test, DDP and FSDP2 (the whole model
# one unit, a unit per decoder layer) on both GPUs, the carried wheel (45ab8e0's kernels) under this tree's Python.
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
CODA_REQUIRE_GPU=1 CODA_REQUIRE_GPUS=2 timeout 480 python3 -m pytest -q -p no:cacheprovider -rA \
  "$repo/tests/python" > pytest_all.log 2>&1
echo "pytest rc=$?"; grep -E "^FAILED|^E  |distributed" pytest_all.log | head -30; tail -1 pytest_all.log
