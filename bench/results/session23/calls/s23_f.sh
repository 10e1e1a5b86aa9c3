#!/usr/bin/env bash
# Twenty-third session, call 6 (.prebuilt/new3 + the working tree's Python): the 8B layer again,
# counting cudaMalloc calls in the timed iterations of each variant and row — does CODA's
# forward+backward row exceed its forward and backward rows' sum because it allocates?
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
site=$(cd /tmp && python3 -c "import coda, os; print(os.path.dirname(coda.__file__))")
rm -rf /tmp/ov && mkdir -p /tmp/ov && cp -r "$site" /tmp/ov/coda && cp -r "$repo"/python/coda/. /tmp/ov/coda/
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
export PYTHONPATH=/tmp/ov:/tmp/whl
python3 -c "import torch; torch.zeros(1, device='cuda'); print(sorted(k for k in torch.cuda.memory_stats() if 'num' in k))"
PYTHONUNBUFFERED=1 timeout 150 python3 -m coda.bench layer --out "$OUT/r/layer8B" --sizes 8B --rounds 7 --iters 3 > layer8B.log 2>&1
echo "layer 8B rc=$? at $((SECONDS - start)) s"; tail -8 layer8B.log
PYTHONUNBUFFERED=1 timeout 150 python3 -m coda.bench layer --out "$OUT/r/layer8B_pair" --sizes 8B --variants coda,hf_compile \
  --rounds 7 --iters 3 > layer8B_pair.log 2>&1
echo "layer 8B coda,hf_compile rc=$? at $((SECONDS - start)) s"; tail -8 layer8B_pair.log
tar czf "$OUT/0-all.tgz" . 2>/dev/null
