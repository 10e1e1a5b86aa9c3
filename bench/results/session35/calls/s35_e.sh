#!/usr/bin/env bash
# Session 35, call 5 (H100). The Python GPU suite on call 3's wheel (main 915e018's tree: ovcoop's
# mainloop at K-block 32, the cross-entropy's at 64).
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1 CODA_COMMIT=915e018
python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/s35/coda-*.whl > /dev/null 2>&1 || exit 1
python3 -m pip install -q --no-index --no-deps --target /tmp/coda-whl "$repo"/.whl/*.whl > /dev/null 2>&1 \
  && export PYTHONPATH=/tmp/coda-whl
cd "$OUT/r"; t0=$SECONDS
CODA_REQUIRE_GPU=1 timeout 400 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - t0)) s"; tail -1 pytest.log; grep -E "^FAILED|^ERROR" pytest.log | head
cd "$OUT" && tar -czf r.tgz r && rm -rf r
