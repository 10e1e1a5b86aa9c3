#!/usr/bin/env bash
# Session 46, call 2 (H200 with needs_h200; carry .prebuilt/ab/s44f = b3d0b5f, main's library).
# The H200 benchmark of record on the 44th session's library, as prepared in
# results/session44/calls/s44_next_a.sh.
WHEEL=.prebuilt/ab/s44f exec bash bench/results/session44/calls/s44_next_a.sh
