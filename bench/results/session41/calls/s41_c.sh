#!/usr/bin/env bash
# Session 41, call 3 (H200). The op tuner at the M buckets the H200 table lacks
# (scripts/table_buckets.py: mostly 4096, 8192, 32768): 4096 and 8192 here, 8B / Qwen3-8B / 1B
# widths, every op, as the GPU comes then sustained on the shortlist, rows best over both states.
# Wheel .prebuilt/s39a (1cf0d79 = main's kernels). Same steps as session 40's call 3.
TUNE_TOKENS=${TUNE_TOKENS:-4096,8192} exec bash bench/results/session40/calls/s40_b.sh
