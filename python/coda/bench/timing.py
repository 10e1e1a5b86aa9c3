# SPDX-License-Identifier: BSD-3-Clause
"""Timing for the Python benchmarks: a per-device stopwatch and interleaved rounds.

Why interleaved: clocks, temperature and neighbours drift during a run, so every variant is timed in
every round (round r starts at variant r mod n, the order rotated), each round keeps each variant's
median iteration, and the result is the median over rounds -- the method of bench/RESULTS.md.

On a GPU a region is timed by its own pair of CUDA events (GPU time between them, read after one
synchronize per block of iterations); on the CPU, where events do not exist, by time.perf_counter
around the region (synchronize is then a no-op).
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from coda.bench.clocks import BlockClock, GpuClocks


class Stopwatch:
    """Times code regions on one device; `collect_ms` returns and forgets the regions timed so far."""

    def __init__(self, device: torch.device):
        self.uses_cuda_events = device.type == "cuda"
        self._pending: list[tuple[object, object]] = []

    def synchronize(self) -> None:
        if self.uses_cuda_events:
            torch.cuda.synchronize()

    def busy(self) -> bool:
        """Whether work enqueued on the current stream is still running (never, on the CPU)."""
        return self.uses_cuda_events and not torch.cuda.current_stream().query()

    @contextmanager
    def region(self) -> Iterator[None]:
        if self.uses_cuda_events:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            yield
            end.record()
        else:
            start = time.perf_counter()
            yield
            end = time.perf_counter()
        self._pending.append((start, end))

    def collect_ms(self) -> list[float]:
        self.synchronize()
        if self.uses_cuda_events:
            times = [start.elapsed_time(end) for start, end in self._pending]
        else:
            times = [(end - start) * 1e3 for start, end in self._pending]
        self._pending.clear()
        return times


# One timed iteration: untimed setup, then the measured work inside `with watch.region():`.
Step = Callable[[Stopwatch], None]


@dataclass
class RoundsResult:
    """Per variant: the median iteration time of each round (ms), or why it stopped."""

    round_medians_ms: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    # Per variant, per round: the clock its block ran at (clocks.py), where the run samples clocks.
    round_clocks: dict[str, list[BlockClock | None]] = field(default_factory=dict)

    def clock_record(self) -> dict:
        """The row fields of the clocks (clocks.py): per variant, per round, the SM MHz its block ran
        at and the share of samples the power or thermal limit held it down; {} where none were sampled."""
        if not self.round_clocks:
            return {}

        def per_round(field: str) -> dict:
            return {v: [None if c is None else getattr(c, field) for c in cs] for v, cs in self.round_clocks.items()}
        return {"rounds_sm_mhz": per_round("sm_mhz"), "rounds_capped": per_round("capped")}

    def median_ms(self, name: str) -> float | None:
        rounds = self.round_medians_ms.get(name)
        return statistics.median(rounds) if rounds and name not in self.errors else None


class Heater:
    """Sustained GEMM load for `ms` milliseconds of GPU time (8192² bf16 matmuls), enqueued before
    each variant's block of timed iterations so that every variant is timed in the power-capped,
    clock-throttled state of a training step, not at the boost clock a briefly busy GPU reaches.

    Why: on an H100 (700 W) a GPU busy for milliseconds at a time runs GEMMs at ~1.97 GHz, one under
    sustained GEMM load at ~1.37 GHz (the power cap), and a fused op's cost over its GEMM is not
    the same at the two clocks (its epilogue's memory traffic does not scale with the clock);
    bench/RESULTS.md, thirteenth session."""

    def __init__(self, device: torch.device, ms: float):
        self.count = 0
        if ms <= 0 or device.type != "cuda":
            return
        self._a = torch.randn(8192, 8192, device=device).to(torch.bfloat16)
        self._b = torch.randn(8192, 8192, device=device).to(torch.bfloat16)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self._run(3)
        start.record()
        self._run(5)
        end.record()
        end.synchronize()
        self.count = max(1, round(ms / (start.elapsed_time(end) / 5)))

    def _run(self, n: int) -> None:
        for _ in range(n):
            torch.matmul(self._a, self._b)

    def __call__(self) -> None:
        self._run(self.count)


def describe_error(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".strip()


def interleaved_rounds(steps: Mapping[str, Step], watch: Stopwatch, *, rounds: int, iters: int,
                       warmup: int, heat: Callable[[], None] | None = None,
                       clocks: GpuClocks | None = None) -> RoundsResult:
    """Warm every step up, then run `rounds` rounds of `iters` timed iterations of every step
    (each block of iterations right after `heat`, when given: a Heater). With `clocks`, the SM
    clock is sampled while each block runs (after it is enqueued, until the stream is idle).

    A step that raises is recorded in `errors` and left out of the remaining rounds; the others go on.
    """
    result = RoundsResult()
    live = []
    for name, step in steps.items():
        try:
            for _ in range(warmup):
                step(watch)
            watch.collect_ms()
            live.append(name)
        except Exception as error:  # noqa: BLE001 - one failing variant must not stop the others
            result.errors[name] = describe_error(error)
            watch.collect_ms()
    for round_index in range(rounds):
        order = live[round_index % len(live):] + live[: round_index % len(live)] if live else []
        for name in order:
            if name in result.errors:
                continue
            try:
                watch.synchronize()
                if heat is not None:
                    heat()
                for _ in range(iters):
                    steps[name](watch)
                if clocks is not None:
                    result.round_clocks.setdefault(name, []).append(clocks.while_busy(watch.busy))
                times = watch.collect_ms()
                result.round_medians_ms.setdefault(name, []).append(statistics.median(times))
            except Exception as error:  # noqa: BLE001
                result.errors[name] = describe_error(error)
                watch.collect_ms()
    return result
