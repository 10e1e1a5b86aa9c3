#!/usr/bin/env bash
# Twenty-third session, call 4 (.prebuilt/new3): the 8B and 1B layer, then the README's main job.
set -u
repo=$PWD
start=$SECONDS
mkdir -p "$OUT/r"; cd "$OUT/r"
nvidia-smi --query-gpu=name --format=csv > gpu.txt 2>&1; cat gpu.txt
python3 -m pip install --no-deps --force-reinstall "$repo"/.prebuilt/new3/coda-*.whl > install.log 2>&1 || { tail install.log; exit 1; }
python3 -m pip install -q --no-index --no-deps --target /tmp/whl "$repo"/.whl/*.whl
for spec in "8B 3" "1B 5"; do
  set -- $spec
  PYTHONPATH=/tmp/whl PYTHONUNBUFFERED=1 timeout 120 python3 -m coda.bench layer --out "$OUT/r/layer$1" --sizes $1 --rounds 7 --iters $2 > layer$1.log 2>&1
  echo "layer $1 rc=$? at $((SECONDS - start)) s"; tail -4 layer$1.log
  tar czf "$OUT/0-all.tgz" . 2>/dev/null
done
cd "$repo"
(OUT="$OUT/r/train" CODA_WHEEL=$(ls "$repo"/.prebuilt/new3/coda-*.whl) timeout 330 scripts/device-run.sh train > "$OUT/r/train.log" 2>&1)
echo "train rc=$? at $((SECONDS - start)) s"; tail -9 "$OUT/r/train.log"
