# SPDX-License-Identifier: BSD-3-Clause
"""The layer benchmark end to end on the CPU at the hidden `tiny` size (hidden 128, 4/2 heads,
ffn 256, M 128): `python -m coda.bench layer` runs, writes layer.json in the schema of
bench/results/*.json, runs the output and causality checks, and reports variants it cannot run
here (liger: no GPU for Triton; coda: no native module) without stopping the others."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VARIANTS = ["hf_eager", "floor", "liger", "coda"]
ROWS = ["layer_fwd", "layer_bwd", "layer_fwd_bwd"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-out")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]),
           "CUDA_VISIBLE_DEVICES": ""}
    importable = subprocess.run([sys.executable, "-c", "import coda.bench"], cwd=REPO, env=env,
                                capture_output=True, text=True, timeout=120)
    assert importable.returncode == 0, importable.stderr[-2000:]  # coda.bench needs no native module
    command = [sys.executable, "-m", "coda.bench", "layer", "--device", "cpu", "--sizes", "tiny",
               "--variants", ",".join(VARIANTS), "--rounds", "3", "--iters", "2", "--warmup", "1",
               "--sustained", "1", "--out", str(out)]
    completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return out, completed.stdout, json.loads((out / "layer.json").read_text())


def test_top_level_schema(run):
    _, _, result = run
    for key in ("commit", "date", "gpu", "command", "torch", "rows"):
        assert key in result
    assert result["command"].startswith("python -m coda.bench layer")
    assert result["method"]["sustained_ms"] == 1.0  # the heater: a no-op without CUDA, recorded all the same
    assert [row["name"] for row in result["rows"]] == ROWS


def test_rows(run):
    _, _, result = run
    for row in result["rows"]:
        assert row["shape"] == "tiny" and row["M"] == 128
        assert row["dims"] == {"hidden": 128, "heads": 4, "kv_heads": 2, "head_dim": 32, "ffn": 256,
                               "batch": 4, "seq": 32}
        assert set(row["baseline"]) == {"hf_eager", "floor", "liger"}
        assert "coda_ms" in row and "headroom_captured" in row
        for name in ("hf_eager", "floor"):
            assert row["status"][name] == "ok"
            assert row["baseline"][name] > 0
            assert len(row["rounds_ms"][name]) == 3
        assert row["ratio_over_floor"]["floor"] == pytest.approx(1.0)
        for name in ("liger", "coda"):  # not runnable on a CPU: reported, not fatal
            status = row["status"][name]
            assert status == "ok" or status.startswith(("unavailable: ", "error: "))
        assert ("peak_extra_gib" in row) == (row["name"] == "layer_fwd_bwd")


def test_checks_ran(run):
    _, stdout, result = run
    for row in result["rows"]:
        check = row["checks"]["hf_eager"]
        assert check["pass"] is True and check["causal"] is True
        assert 0 < check["max_abs_err"] <= check["bound"]
        assert check["causal_leak"] == 0 and check["causal_response"] > 0
        assert row["checks"]["floor"]["pass"] is None
    assert "check hf_eager: pass" in stdout


def test_chart_and_table(run):
    out, stdout, _ = run
    assert (out / "layer.png").stat().st_size > 0
    table = stdout[stdout.index("row "):]
    assert all(name in table for name in ROWS + ["hf_eager", "floor", "headroom"])
