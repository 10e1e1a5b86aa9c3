#!/usr/bin/env bash
# Twenty-third session, call 1 (H100; .prebuilt/new2 = the device code of c895a4b; the Python from
# the working tree overlaid): GPU tests of the in-place residual gradient; the 8B layer's kernels
# (are the add, the fills gone?); the forward ops ranked inside the layer (layer-tune, 8B and 1B).
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new2/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
CODA_REQUIRE_GPU=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python/test_gpu_layer_parity.py" \
  "$repo/tests/python/test_gpu_ops.py" "$repo/tests/python/test_gpu_model.py" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -1 pytest.log; grep -E "^FAILED|Error" pytest.log | head
tar czf "$OUT/0-all.tgz" . 2>/dev/null
PYTHONUNBUFFERED=1 timeout 60 python3 -m coda.bench kernels --size 8B --variants coda --out "$OUT/r/kernels8B" > kernels8B.log 2>&1
echo "kernels rc=$? at $((SECONDS - start)) s"; grep -E "ms of kernels|Fill|add|Cat|Memcpy|wall" kernels8B.log
for size in 8B 1B; do
  PYTHONUNBUFFERED=1 timeout 120 python3 -m coda.bench layer-tune --size $size --ops linear_rmsnorm_swiglu,linear_rmsnorm_rope,linear_residual_rms \
    --rounds 7 --out "$OUT/r/lt$size" > lt$size.log 2>&1
  echo "layer-tune $size rc=$? at $((SECONDS - start)) s"; grep -E "^\| linear|written|Error|error" lt$size.log | head
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
