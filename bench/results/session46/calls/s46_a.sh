#!/usr/bin/env bash
# Session 46, call 1 (H100; carry .prebuilt/ab/s44f = b3d0b5f, main's library, and
# .prebuilt/ab/s45p = 9b2f1ac, branch register-pre-store). The 45th session's prepared
# results/session45/calls/s45_next_b.sh as it stands: the QK-norm pre-norm store from registers,
# second version (8-byte stores), its QK-norm device tests, then the op A/B at 1B and Qwen3-8B,
# processes old new new old, both clock states. Run as: bash bench/results/session45/calls/s45_next_b.sh
exec bash bench/results/session45/calls/s45_next_b.sh
