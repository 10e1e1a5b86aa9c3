#!/usr/bin/env bash
# For the next session (not run in the twenty-eighth; ~2 min on an H100, carry a wheel as
# .prebuilt/coda-*.whl): DRAM bytes of the 1B SwiGLU backward's kernel under each raster and
# swizzle. If the operand re-reads fall with the band (swizzle 8 reading least), a scheduler with
# wider bands is worth building (docs/design.md §10.1); if they do not, the reading is wrong.
set -u
mkdir -p "$OUT/r"
python3 -m pip install -q --no-deps --force-reinstall .prebuilt/coda-*.whl > /dev/null 2>&1 || exit 1
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
"$ncu" --clock-control none --kernel-name-base demangled -k "regex:PairDot" \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
  python3 bench/results/session28/calls/dram_by_swizzle.py > "$OUT/r/ncu_dram.log" 2>&1
echo "ncu rc=$?"; grep -E "^launch|dram__bytes|lts__t_sector_hit|gpu__time" "$OUT/r/ncu_dram.log"
cd "$OUT" && tar -czf r.tgz r && rm -rf r
