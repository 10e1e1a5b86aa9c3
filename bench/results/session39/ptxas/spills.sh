#!/bin/bash
# Session 39: ptxas spill counts of one QK-norm kernel compiled alone (no GPU):
#   spills.sh SRC_ROOT TILECFG PROGRAM, e.g. spills.sh /work/exp192 kPingpong192x128Cluster1x2 QkNormRope
# (SRC_ROOT a checkout of branch exp-pp192x128, optionally with qknorm_one_head_only.diff applied).
root=$1; cfg=$2; prog=$3
C=/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/cutlass_library/source
/usr/local/cuda/bin/nvcc -I$root/include -I$root/kernels -isystem=$C/include -isystem=$C/tools/util/include -O3 -DNDEBUG --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a -Xptxas=-v -std=c++17 -DTILECFG=$cfg -DPROGNAME=$prog -x cu -c "$(dirname "$0")"/one_kernel.cu -o /tmp/p_${cfg}_$prog.o 2>&1 | grep -E "spill" | sed "s|^|$prog $cfg: |"
