#!/usr/bin/env bash
# Session 32, call 2 (H100). Every-variant A/B of the QKV RMSNorm-backward rows (benchmarks §5.1:
# a schedule flip is confirmed in the benchmark of record's own harness, every variant): old =
# f513c76 (.prebuilt/ab/old), new = 1f30b8b (.prebuilt/ab/new: Pingpong 128x128 along N rows).
# linear_rmsnorm_bwd_qkv changes at these M; linear_rmsnorm_bwd (the MLP's, long K) does not: the
# control. 1B and 8B widths (Qwen3-8B's QKV is 8B's shape), M = 10837, 16384, 23170, processes
# old new new old, outputs checked against the stock PyTorch backward.
set -u
repo=$PWD
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee "$OUT/r/gpu.txt"
export PYTHONUNBUFFERED=1
cd "$OUT/r"
t0=$SECONDS
install() { python3 -m pip install -q --no-deps --force-reinstall "$repo/.prebuilt/ab/$1/"coda-*.whl > /dev/null 2>&1 || exit 1; }
i=0
for w in old new new old; do
  i=$((i + 1)); left=$((585 - SECONDS + t0)); [ $left -lt 30 ] && break
  install $w
  timeout $((left < 150 ? left : 150)) python3 -m coda.bench ops --ops linear_rmsnorm_bwd_qkv,linear_rmsnorm_bwd --models 1B,8B \
    --tokens 10837,16384,23170 --seed 322$i --rounds 5 --out "$OUT/r/ab_${i}_$w" > "ab_${i}_$w.log" 2>&1
  echo "ab $i $w rc=$? at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
