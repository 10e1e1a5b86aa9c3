# SPDX-License-Identifier: BSD-3-Clause
"""scripts/sass_mix.py's spill report: the bytes ptxas -v says a unit's kernels spill, summed over
its kernels, and 0 / 0 for a log without spills (a kernel that fits its registers)."""
import importlib.util
import pathlib
import sys

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))  # sass_mix imports instances.py beside it
spec = importlib.util.spec_from_file_location("sass_mix", SCRIPTS / "sass_mix.py")
sass_mix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass_mix)

# The shape of nvcc -Xptxas=-v output (CUDA 13) for two kernels, one of them spilling.
LOG = """ptxas info    : Compiling entry function '_Z3onev' for 'sm_90a'
ptxas info    : Function properties for _Z3onev
    160 bytes stack frame, 172 bytes spill stores, 168 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers, 160 bytes cumulative stack size
ptxas info    : Compiling entry function '_Z3twov' for 'sm_90a'
ptxas info    : Function properties for _Z3twov
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers
"""


def test_spill_bytes_sums_every_kernel_of_the_unit():
    assert sass_mix.spill_bytes(LOG) == (180, 180)


def test_a_unit_without_spills_reads_zero():
    clean = LOG.replace("172 bytes spill stores, 168", "0 bytes spill stores, 0").replace(
        "8 bytes spill stores, 12", "0 bytes spill stores, 0")
    assert sass_mix.spill_bytes(clean) == (0, 0)
    assert sass_mix.spill_bytes("") == (0, 0)
