#!/usr/bin/env bash
# Twenty-fourth session, call 4 (H100; .prebuilt/s24 + the working tree's Python): every GPU test of
# the Python package (the fp32-master test now against HF bf16); the contract margin, 10 seeds.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/s24/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
CODA_REQUIRE_GPU=1 timeout 300 python3 -m pytest -q -p no:cacheprovider "$repo/tests/python" > pytest.log 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -1 pytest.log; grep -E "^FAILED" pytest.log | head
tar czf "$OUT/0-all.tgz" . 2>/dev/null
timeout 240 python3 "$repo"/.prebuilt/s24_margin.py "$repo/tests/python" 10 > margin10.log 2>&1
echo "margin rc=$? at $((SECONDS - start)) s"; grep -E "max" margin10.log | cut -c1-60; grep -E "Error" margin10.log | tail -3
tar czf "$OUT/0-all.tgz" . 2>/dev/null
