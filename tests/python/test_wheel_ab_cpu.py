# SPDX-License-Identifier: BSD-3-Clause
"""scripts/wheel-ab.sh and scripts/ab_summary.py without a GPU: the script runs with stand-ins for
nvidia-smi, pip and the op benchmark (the benchmark's stand-in writes an ops.json whose time
depends on the wheel installed), and the summary reads the passes back: new ÷ old time, the
pairs' spread, × matmul and the kernels, per clock state and row; a row whose check failed on
either side gets no verdict; rows whose kernel did not change are the controls the others are
divided by."""
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import ab_summary  # noqa: E402

# python3 as the script calls it: pip installs record the wheel; `-m coda.bench ops` writes one
# row, 0.9 ms under the new wheel and 1.0 ms under the old; anything else is the real python.
STAND_IN = f"""#!/usr/bin/env bash
state=$(dirname "$0")/installed
if [ "$1 $2" = "-m pip" ]; then for a in "$@"; do case $a in *.whl) echo "$a" > "$state";; esac; done; exit 0; fi
if [ "$1 $2" = "-m coda.bench" ]; then
  while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; [ "$1" = --rounds ] && echo "$2" > "$(dirname "$0")/rounds"
    [ "$1" = --variants ] && echo "$2" > "$(dirname "$0")/variants"; shift; done
  ms=1.0; kernel=old_kernel; grep -q /new/ "$state" && {{ ms=0.9; kernel=new_kernel; }}
  mkdir -p "$out"
  echo "{{\\"rows\\": [{{\\"name\\": \\"linear_rope\\", \\"shape\\": \\"8B\\", \\"M\\": 16384, \\"coda_ms\\": $ms, \\"kernel\\": \\"$kernel\\", \\"check_passed\\": true, \\"ratios\\": {{\\"coda/torch_matmul\\": $ms}}}}]}}" > "$out/ops.json"
  exit 0
fi
exec {sys.executable} "$@"
"""


def test_wheel_ab_runs_old_new_new_old_in_both_states_summarises_and_leaves_the_new_wheel(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(STAND_IN)
    (bin_dir / "nvidia-smi").write_text("#!/usr/bin/env bash\necho 'NVIDIA H100 80GB HBM3, 700.00 W, 580'\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "coda-0.1.0-cp312-cp312-linux_x86_64.whl").write_text("")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OUT=str(tmp_path / "out"))
    run = subprocess.run(["bash", str(REPO / "scripts" / "wheel-ab.sh"), str(tmp_path / "old"),
                          str(tmp_path / "new"), "8B linear_rope"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    passes = sorted(p.name for p in (tmp_path / "out" / "ab").iterdir() if p.is_dir())
    assert passes == sorted(f"{s}_{p}_8B" for s in ("boost", "sustained") for p in ("o1", "n1", "n2", "o2"))
    summary = (tmp_path / "out" / "ab" / "summary.md").read_text()
    for state in ("boost", "sustained"):
        assert (f"| {state} | linear_rope | 8B | 16384 | 0.900 | 0.000 | — | 1.000 → 0.900 "
                "| old_kernel → new_kernel |") in summary
    # Tests run after the script check the build under test: the new wheel is left installed.
    assert "/new/" in (bin_dir / "installed").read_text()
    assert (bin_dir / "rounds").read_text().strip() == "5"  # AB_ROUNDS' default
    assert (bin_dir / "variants").read_text().strip() == "coda,torch_matmul,coda_gemm"  # AB_VARIANTS' default
    run = subprocess.run(["bash", str(REPO / "scripts" / "wheel-ab.sh"), str(tmp_path / "old"),
                          str(tmp_path / "new"), "8B linear_rope"], cwd=REPO,
                         env=dict(env, AB_ROUNDS="9", AB_STATES="boost", AB_VARIANTS="coda,eager"),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert (bin_dir / "rounds").read_text().strip() == "9"
    assert (bin_dir / "variants").read_text().strip() == "coda,eager"


def row(ms, passed=True, kernel="k"):
    return {"name": "linear_rope", "shape": "1B", "M": 5958, "coda_ms": ms, "kernel": kernel,
            "check_passed": passed, "ratios": {"coda/torch_matmul": ms / 2}}


def test_verdict_is_the_mean_time_ratio_with_the_larger_pair_spread():
    v = ab_summary.verdict([row(1.0), row(1.1)], [row(0.95), row(0.96)])
    assert abs(v["ratio"] - 0.955 / 1.05) < 1e-12
    assert abs(v["spread"] - 0.1) < 1e-12
    assert abs(v["old_x"] - 0.525) < 1e-12 and abs(v["new_x"] - 0.4775) < 1e-12


def test_no_verdict_when_a_side_is_missing_or_failed_its_check():
    assert ab_summary.verdict([], [row(1.0)]) is None
    assert ab_summary.verdict([row(1.0), row(1.0)], [row(0.9, passed=False), row(0.9)]) is None


def test_folders_are_read_by_state_and_side_and_others_ignored(tmp_path):
    for name, ms in (("boost_o1_1B", 1.0), ("boost_n1_1B", 0.9), ("sustained_o2", 1.2), ("notes", 5.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ops.json").write_text(json.dumps({"rows": [row(ms)]}))
    table = ab_summary.rows_by_pass(tmp_path)
    assert set(table) == {("boost", "linear_rope", "1B", 5958), ("sustained", "linear_rope", "1B", 5958)}
    assert [r["coda_ms"] for r in table[("boost", "linear_rope", "1B", 5958)]["n"]] == [0.9]
    assert table[("sustained", "linear_rope", "1B", 5958)]["n"] == []


def test_changed_rows_are_divided_by_the_unchanged_rows_of_their_state_and_model(tmp_path, capsys):
    def ops(name, shape, ms, kernel):
        return {"name": name, "shape": shape, "M": 10700, "coda_ms": ms, "kernel": kernel,
                "check_passed": True, "ratios": {"coda/torch_matmul": 1.0}}
    passes = {  # the 8B control ran 0.9 x as fast under the new wheel: the GPU drifted
        "boost_o1_8B": [ops("linear_rope", "8B", 1.0, "a"), ops("linear_swiglu_bwd", "8B", 2.0, "a")],
        "boost_n1_8B": [ops("linear_rope", "8B", 0.9, "a"), ops("linear_swiglu_bwd", "8B", 1.8, "b")],
        "boost_o1_1B": [ops("linear_swiglu_bwd", "1B", 1.0, "a")],
        "boost_n1_1B": [ops("linear_swiglu_bwd", "1B", 0.8, "b")],
    }
    for name, rows in passes.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "ops.json").write_text(json.dumps({"rows": rows}))
    assert ab_summary.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| boost | linear_rope | 8B | 10700 | 0.900 | 0.000 | control |" in out
    assert "| boost | linear_swiglu_bwd | 8B | 10700 | 0.900 | 0.000 | 1.000 |" in out  # all drift
    assert "| boost | linear_swiglu_bwd | 1B | 10700 | 0.800 | 0.000 | — |" in out  # no 1B control


def test_pack_ab_wheel_makes_the_carried_folder_and_rejects_what_it_cannot_pack(tmp_path):
    """scripts/pack-ab-wheel.sh: COMMIT, the one wheel and the device tests xz-packed, under
    ab/NAME of the prebuilt folder; a bad NAME, a missing binary or two wheels fail naming why."""
    import tarfile

    prebuilt = tmp_path / "prebuilt"
    prebuilt.mkdir()
    (prebuilt / "COMMIT").write_text("abc1234\n")
    (prebuilt / "coda-0.1.0-cp312-cp312-linux_x86_64.whl").write_bytes(b"wheel")
    (prebuilt / "coda_device_tests").write_bytes(b"\x7fELF tests")
    env = dict(os.environ, CODA_PREBUILT=str(prebuilt))

    def pack(*args):
        return subprocess.run(["bash", str(REPO / "scripts" / "pack-ab-wheel.sh"), *args], env=env,
                              capture_output=True, text=True, timeout=60)

    run = pack("s99")
    assert run.returncode == 0, run.stderr
    out = prebuilt / "ab" / "s99"
    assert sorted(p.name for p in out.iterdir()) == ["COMMIT", "coda-0.1.0-cp312-cp312-linux_x86_64.whl",
                                                     "tests.tar.xz"]
    assert (out / "COMMIT").read_text() == "abc1234\n"
    with tarfile.open(out / "tests.tar.xz") as tar:
        assert tar.getnames() == ["coda_device_tests"]
        assert tar.extractfile("coda_device_tests").read() == b"\x7fELF tests"
    for bad in ("", "a/b", ".."):
        run = pack(bad)
        assert run.returncode == 2 and "NAME must be a plain folder name" in run.stderr
    (prebuilt / "coda-0.2.0-cp312-cp312-linux_x86_64.whl").write_bytes(b"another")
    run = pack("s99")
    assert run.returncode == 2 and "expected one" in run.stderr and "found 2" in run.stderr
    (prebuilt / "coda-0.2.0-cp312-cp312-linux_x86_64.whl").unlink()
    (prebuilt / "coda_device_tests").unlink()
    run = pack("s99")
    assert run.returncode == 2 and "coda_device_tests is missing" in run.stderr
