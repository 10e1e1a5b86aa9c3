# SPDX-License-Identifier: BSD-3-Clause
"""`python -m coda.bench kernels` names CODA's CUTLASS kernels by schedule, tile and epilogue nodes
(their mangled names differ only deep inside) and prints kernels in launch order; each run's SM
clock is kept and printed ("unknown" without NVML); on the CPU it refuses to run with a clear
message."""
import os
import subprocess
import sys
from pathlib import Path

from coda.bench import kernels  # no native module needed
from coda.bench.clocks import BlockClock

REPO = Path(__file__).resolve().parents[2]

# Shortened from a real Pingpong 128x192 RoPE kernel's name (ptxas log), the structure kept.
ROPE_PINGPONG = ("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10"
                 "collective13CollectiveMmaINS1_34MainloopSm90TmaGmmaWarpSpecializedILi5ENS1_32KernelTmaWarp"
                 "SpecializedPingpongEEENS4_4SM904GMMA28MMA_64x192x16_F32BF16BF16_SSILNSP_5MajorE0EEENS4_14"
                 "SM90_TMA_STOREEEENS1H_6fusion15Sm90TreeVisitorIN4coda8epilogue13RopePairsNodeEJNS1R_7"
                 "RowRstdENS1O_12Sm90AccFetchEEEEEvNT_6ParamsE")
RMS_BWD_COOP_ACCUMULATE = ("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalINS1_41KernelTmaWarp"
                           "SpecializedCooperativeEEENS4_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSEEENS1T_11"
                           "Sm90AuxLoadILi4EEENS2D_7RowRstdENS2C_16RmsNormInputGradEE2FnENS4_19SM90_TMA_REDUCE"
                           "_ADDEEEvNT_6ParamsE")


def test_cutlass_kernels_are_named_by_schedule_tile_and_nodes():
    assert kernels.label(ROPE_PINGPONG) == "CODA pingpong N192: RopePairsNode+RowRstd"
    assert kernels.label(RMS_BWD_COOP_ACCUMULATE) == \
        "CODA coop N256: AuxLoad+RowRstd+RmsNormInputGrad (D reduce-added)"


def test_other_kernels_keep_their_name_cut_to_120_characters():
    assert kernels.label("nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_NTN") == "nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_NTN"
    long = "void at::native::vectorized_elementwise_kernel<" + "x" * 200
    assert len(kernels.label(long)) == 120 and kernels.label(long).endswith("...")


def test_table_keeps_launch_order_and_sums_the_rest(capsys):
    timed = {"first": {"ms": 1.0, "calls": 1}, "small": {"ms": 0.01, "calls": 3},
             "last": {"ms": 2.0, "calls": 2}}
    kernels.print_table("coda", timed, top=2)
    out = capsys.readouterr().out
    assert "3.010 ms of kernels" in out
    assert out.index("first") < out.index("last")  # launch order, not time order
    assert "small" not in out and "0.010 ms        the other 1" in out


def test_refuses_without_a_gpu():
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "CUDA_VISIBLE_DEVICES": ""}
    completed = subprocess.run([sys.executable, "-m", "coda.bench", "kernels"], cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2 and "needs a CUDA GPU" in completed.stderr


def test_clocks_are_kept_and_printed_unknown_where_nvml_gave_none():
    record = {"wall": kernels.clock_record(BlockClock(1455.0, 1.0, 40)),
              "profiled": kernels.clock_record(None)}
    assert record == {"wall": {"sm_mhz": 1455.0, "capped": 1.0}, "profiled": None}
    assert kernels.clock_line(record) == \
        "  SM clock: 1455 MHz (100 % capped) without the profiler, unknown with it"
