# SPDX-License-Identifier: BSD-3-Clause
"""`coda-bench choose` from Python: the kernel the current build would run on a GPU, per query line
("fwd|dgrad|wgrad M N K" for the plain GEMM, "op NAME M N K" for a fused op), on any machine.
Shared by gemm_rule_replay.py, op_choice_replay.py and rule_coverage.py."""
import subprocess

# The two first program configs as the tuners' logs and JSON name them ("coop", "pingpong", as
# since the first runs); later configs keep their name. The package's tuner holds the same map
# (python/coda/bench/tune.py: SHORT_CONFIG_NAMES), the scripts read this one.
SHORT_CONFIG_NAMES = {"coop_128x256_2x1": "coop", "pingpong_128x128_2x1": "pingpong"}


def choose(coda_bench, gpu, queries):
    """One choice per query, in `coda-bench choose`'s spelling ("pingpong_128x128_2x1 along_n s2")."""
    out = subprocess.run([coda_bench, "choose", "--gpu", gpu], input="".join(q + "\n" for q in queries),
                         capture_output=True, text=True, check=True).stdout
    return [line.split("  ", 1)[1] for line in out.strip().split("\n")]
