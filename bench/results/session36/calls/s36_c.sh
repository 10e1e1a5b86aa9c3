#!/usr/bin/env bash
# Session 36, call 3 (H100). Every-variant A/B of call 2's three H100 table rows (1B RoPE and
# RMSNorm-RoPE -> Pingpong 128 x 192; the QK-norm row at 16384 x 6144 x 4096 -> Pingpong along N
# swizzle 2), processes old new new old on one machine, in the benchmark of record's harness (the
# op, matmul, CODA's GEMM, eager, torch.compile in the same rounds; outputs checked), at the rows'
# M and at M = 10837 (a nearest-M lookup). Controls: 1B linear_rmsnorm and 8B linear_rope.
# old = .prebuilt/s36w (1ddf404's tables), new = .prebuilt/s36n (the rows merged).
set -u
repo=$PWD
mkdir -p "$OUT/r"; cd "$OUT/r"; t0=$SECONDS
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee gpu.txt
export PYTHONUNBUFFERED=1
for pass in old1 new1 new2 old2; do
  wheel=s36w; [ "${pass%[12]}" = new ] && wheel=s36n
  python3 -m pip install -q --no-deps --force-reinstall "$repo"/.prebuilt/$wheel/coda-*.whl > /dev/null 2>&1 || exit 1
  for spec in "1B linear_rope,linear_rmsnorm_rope,linear_rmsnorm" "8B linear_qknorm_rope,linear_rope" \
              "Qwen3-8B linear_qknorm_rope"; do
    read -r model ops <<< "$spec"
    CODA_COMMIT=1ddf404-$wheel timeout $((590 - SECONDS + t0)) python3 -m coda.bench ops --models "$model" \
      --ops "$ops" --tokens 16384,10837 --seed 3407 --rounds 5 --out "$OUT/r/${pass}_$model" \
      > "${pass}_$model.log" 2>&1
    grep "^| linear" "${pass}_$model.log" | cut -d"|" -f2-7,14,15 | sed "s/^/$pass /"
  done
  echo "== $pass done at $((SECONDS - t0)) s"
done
cd "$OUT" && tar -czf r.tgz r && rm -rf r
