# SPDX-License-Identifier: BSD-3-Clause
"""The benchmarks' clock record (coda.bench.clocks), on the CPU with a stand-in for NVML: every
timed block gets one clock, sampled while it runs, and the op table prints it."""
import ctypes

import torch

from coda.bench.clocks import CAPPED_REASONS, BlockClock, GpuClocks
from coda.bench.ops import not_run_row, table
from coda.bench.timing import Stopwatch, interleaved_rounds


class FakeNvml:
    """NVML's two calls GpuClocks makes, replaying (MHz, reasons) readings; a negative MHz fails."""

    def __init__(self, readings):
        self.readings, self.calls = list(readings), 0

    def nvmlDeviceGetClockInfo(self, handle, clock, out):
        mhz, _ = self.readings[min(self.calls, len(self.readings) - 1)]
        if mhz < 0:
            return 999
        ctypes.cast(out, ctypes.POINTER(ctypes.c_uint))[0] = mhz
        return 0

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle, out):
        _, reasons = self.readings[min(self.calls, len(self.readings) - 1)]
        self.calls += 1
        ctypes.cast(out, ctypes.POINTER(ctypes.c_ulonglong))[0] = reasons
        return 0


def test_a_block_clock_is_the_median_of_its_samples_and_its_capped_share():
    nvml = FakeNvml([(1980, 0), (1500, 0x4), (1410, 0x4), (1500, 0x1)])
    busy = iter([True, True, True, False])
    clock = GpuClocks(nvml, None).while_busy(lambda: next(busy), interval_s=0)
    assert clock == BlockClock(sm_mhz=1500, capped=0.5, samples=4)


def test_a_block_is_sampled_at_least_once_and_failed_readings_are_left_out():
    assert GpuClocks(FakeNvml([(1755, 0)]), None).while_busy(lambda: False) == BlockClock(1755, 0.0, 1)
    assert GpuClocks(FakeNvml([(-1, 0)]), None).while_busy(lambda: False) is None


def test_capped_means_power_or_thermal_not_idle_or_the_application_clock():
    assert not 0x1 & CAPPED_REASONS and not 0x2 & CAPPED_REASONS  # GPU idle, application clock
    assert 0x4 & CAPPED_REASONS and 0x20 & CAPPED_REASONS  # software power cap, thermal


def test_no_gpu_no_clocks():
    assert GpuClocks.open(torch.device("cpu")) is None


def test_every_timed_block_gets_one_clock_and_the_warmup_none():
    sampled = []

    class Clocks:
        def while_busy(self, busy):
            assert busy() is False  # on the CPU the block is done when enqueued
            sampled.append(len(log))
            return BlockClock(1000 + len(sampled), 0.0, 1)

    log = []

    def step(name):
        def run(w):
            with w.region():
                log.append(name)
        return run

    result = interleaved_rounds({"a": step("a"), "b": step("b")}, Stopwatch(torch.device("cpu")), rounds=3,
                                iters=2, warmup=1, clocks=Clocks())
    assert sampled == [4, 6, 8, 10, 12, 14]  # after each block of 2, none after the warm-up (2 calls)
    assert [c.sm_mhz for c in result.round_clocks["a"]] == [1001, 1004, 1005]
    assert [c.sm_mhz for c in result.round_clocks["b"]] == [1002, 1003, 1006]
    row = dict(not_run_row("linear_rope", "1B", 16384, "x"), **result.clock_record())
    assert row["rounds_sm_mhz"] == {"a": [1001, 1004, 1005], "b": [1002, 1003, 1006]}
    assert row["rounds_capped"] == {"a": [0.0] * 3, "b": [0.0] * 3}


def test_the_table_prints_the_clocks_of_coda_matmul_and_codas_gemm():
    row = dict(not_run_row("linear_rope", "1B", 16384, "x"),
               rounds_sm_mhz={"coda": [1700, 1750, None], "torch_matmul": [1980, 1965, 1980]})
    assert table([row]).splitlines()[-1].endswith("| 1725 / 1980 / — |")
    assert table([not_run_row("linear_rope", "1B", 16384, "x")]).splitlines()[-1].endswith("| — / — / — |")
