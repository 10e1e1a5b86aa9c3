#!/usr/bin/env bash
# Twenty-fourth session, call 1 (H100; .prebuilt/s24 = fe6ce0e + ddafb80 re-applied, the Python
# from the working tree overlaid): the device suite on the RMSNorm backward without its 128x192
# kernels; the GPU model tests incl. fp32 master weights under autocast; the contract margin;
# the 8B layer with --sustained 20 (the rows' disagreement).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
timeout 240 "$repo"/.prebuilt/s24/coda_device_tests --gtest_brief=1 > device_tests.log 2>&1
echo "device tests rc=$? at $((SECONDS - start)) s"; tail -3 device_tests.log; grep -E "FAILED" device_tests.log | head
CODA_REQUIRE_GPU=1 timeout 200 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_model.py" \
  "$repo/tests/python/test_gpu_layer_parity.py" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -1 pytest.log; grep -E "^FAILED|Error|>" pytest.log | head -20
tar czf "$OUT/0-all.tgz" . 2>/dev/null
timeout 100 python3 "$repo"/.prebuilt/s24_margin.py "$repo/tests/python" > margin.log 2>&1
echo "margin rc=$? at $((SECONDS - start)) s"; cat margin.log | tail -6
tar czf "$OUT/0-all.tgz" . 2>/dev/null
PYTHONUNBUFFERED=1 timeout $((570 - (SECONDS - start))) python3 -m coda.bench layer --sizes 8B --variants hf_compile,floor,coda --rounds 5 --sustained 20 --out "$OUT/r/layer8b" > layer8b.log 2>&1
echo "layer rc=$? at $((SECONDS - start)) s"; grep -E "^\||fwd|bwd" layer8b.log | head -30
tar czf "$OUT/0-all.tgz" . 2>/dev/null
