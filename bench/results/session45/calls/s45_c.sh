#!/usr/bin/env bash
# Session 45, call 3 (H100): the 44th session's prepared benchmark of record, as run, on b3d0b5f
# (main's library), against the 43rd session's record.
WHEEL=.prebuilt/ab/s44f exec bash bench/results/session44/calls/s44_next_a.sh
