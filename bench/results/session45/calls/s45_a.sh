#!/usr/bin/env bash
# Session 45, call 1 (H100): the 44th session's prepared run of the per-head_dim QK-norm programs,
# as run: OLD = b3d0b5f (main's library), NEW = d746cec (main + results/session44/qknorm_per_head_dim.diff).
OLD=.prebuilt/ab/s44f NEW=.prebuilt/ab/s45d exec bash bench/results/session44/calls/s44_next_b.sh
