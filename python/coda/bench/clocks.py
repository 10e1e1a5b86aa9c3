# SPDX-License-Identifier: BSD-3-Clause
"""The GPU's SM clock and power-cap state while a block of timed work runs, read through NVML.

Why: a ratio of two kernels' times is a ratio of their work only where both ran at the same clock.
An H100 runs a GEMM at ~1.98 GHz when briefly busy and at ~1.4-1.7 GHz under the 700 W cap, and a
few ms of one kernel can move it between the two; the op benchmark's rounds are that short
(bench/RESULTS.md, thirty-sixth session). So every timed block records the clock it ran at.

NVML comes from the driver's libnvidia-ml.so.1 through ctypes (no Python package needed). Where it
is missing (a CPU machine, a container without it) `GpuClocks.open` returns None and the benchmarks
record no clocks. The device is found by its PCI bus id, so CUDA_VISIBLE_DEVICES cannot mismatch it.
"""
from __future__ import annotations

import ctypes
import statistics
import time
from dataclasses import dataclass

import torch

NVML_CLOCK_SM = 1
# nvmlClocksEventReasons that mean "held below the clock asked for by power or heat": software
# power cap, hardware slowdown, software and hardware thermal slowdown, power-brake slowdown.
CAPPED_REASONS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


@dataclass
class BlockClock:
    """What one timed block ran at: the median SM clock of its samples (MHz) and the share of its
    samples in which the power or thermal limits held the clock down."""
    sm_mhz: float
    capped: float
    samples: int


class GpuClocks:
    """Samples one GPU's SM clock and clock-event reasons (NVML) until a stream's work is done."""

    def __init__(self, lib, handle):
        self._lib, self._handle = lib, handle
        reasons = getattr(lib, "nvmlDeviceGetCurrentClocksEventReasons", None)
        self._reasons = reasons or lib.nvmlDeviceGetCurrentClocksThrottleReasons  # before driver 535

    @classmethod
    def open(cls, device: torch.device) -> GpuClocks | None:
        """The clocks of `device`, or None where NVML or the device's PCI id is not available."""
        if device.type != "cuda":
            return None
        props = torch.cuda.get_device_properties(device)
        if not hasattr(props, "pci_bus_id"):
            return None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return None
            bus_id = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByPciBusId_v2(bus_id.encode(), ctypes.byref(handle)) != 0:
                return None
        except OSError:
            return None
        return cls(lib, handle)

    def sample(self) -> tuple[int, bool] | None:
        """(SM clock in MHz, whether power or heat holds it down now), or None if NVML fails."""
        mhz, reasons = ctypes.c_uint(), ctypes.c_ulonglong()
        if self._lib.nvmlDeviceGetClockInfo(self._handle, NVML_CLOCK_SM, ctypes.byref(mhz)) != 0:
            return None
        if self._reasons(self._handle, ctypes.byref(reasons)) != 0:
            return None
        return mhz.value, bool(reasons.value & CAPPED_REASONS)

    def while_busy(self, busy, interval_s: float = 2e-4) -> BlockClock | None:
        """Samples until `busy()` turns False (Stopwatch.busy: the enqueued block is done), at
        least once."""
        samples = []
        while True:
            s = self.sample()
            if s is not None:
                samples.append(s)
            if not busy():
                break
            time.sleep(interval_s)
        if not samples:
            return None
        return BlockClock(statistics.median(m for m, _ in samples),
                          sum(c for _, c in samples) / len(samples), len(samples))
