# SPDX-License-Identifier: BSD-3-Clause
"""`python -m coda.bench layer-tune` times an op's own calls inside the layer's forward: every call
of coda.ops.<op> made through the module is a region, an op called twice per forward is summed to
one time per iteration, and the op is restored afterwards; on the CPU it refuses to run."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from coda import ops
from coda.bench import layer_tune
from coda.bench.timing import Stopwatch

REPO = Path(__file__).resolve().parents[2]


def test_each_call_of_the_op_is_a_region_and_the_op_is_restored(monkeypatch):
    calls = []
    monkeypatch.setattr(ops, "linear_residual_rms", lambda *args: calls.append(args) or "out")
    original = ops.linear_residual_rms
    watch, ran = Stopwatch(torch.device("cpu")), []
    with layer_tune.timed_op("linear_residual_rms", watch, "linear_residual_rms", None, ran):
        assert ops.linear_residual_rms is not original
        assert [ops.linear_residual_rms(i) for i in range(3)] == ["out"] * 3
    assert ops.linear_residual_rms is original and calls == [(0,), (1,), (2,)]
    assert len(watch.collect_ms()) == 3 and len(ran) == 3


def test_every_layer_call_names_an_op_and_a_table_key():
    from coda._native import C

    for name, call in layer_tune.LAYER_CALLS.items():
        assert callable(getattr(ops, name)), name
        assert C.op_table_row(call.key, 16, 16, 16, 0).startswith("{OpKey::k"), call.key


def test_regions_of_one_iteration_are_summed():
    watch = Stopwatch(torch.device("cpu"))
    summed = layer_tune.SummedRegions(watch, calls=2)
    for _ in range(4):
        with summed.region():
            pass
    times = summed.collect_ms()
    assert len(times) == 2 and all(t >= 0 for t in times)


def test_refuses_to_run_without_a_gpu():
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "coda.bench", "layer-tune", "--size", "tiny"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 2 and "needs a CUDA GPU" in done.stderr


def test_an_m_the_layer_cannot_build_is_refused_when_parsed(capsys):
    # M = batch 4 x sequence: 10837 fails at parse time, naming the constraint, before any GPU work.
    with pytest.raises(SystemExit):
        layer_tune.parse_args(["--m", "10837"])
    assert "M = 10837: must be a positive multiple of the batch 4" in capsys.readouterr().err
    assert layer_tune.parse_args(["--m", "10840"]).m == 10840
