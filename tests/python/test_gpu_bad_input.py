# SPDX-License-Identifier: BSD-3-Clause
"""Bad input through the Python API, on the GPU: for every op and every tensor argument, a CPU
tensor, another dtype, a dropped column, an extra dimension, a misaligned view and column-major
strides are each refused with an error naming the op — before anything runs: every input is bit
for bit unchanged and the device is healthy afterwards."""
import pytest
import torch

from test_gpu_ops import _samples

pytestmark = pytest.mark.hopper


def _other_dtype(t):
    return torch.float32 if t.dtype in (torch.bfloat16, torch.int32, torch.int64) else torch.bfloat16


def _misaligned(t):
    """The same values at an address 2 or 4 bytes past a 16-byte boundary."""
    flat = torch.empty(t.numel() + 8, dtype=t.dtype, device=t.device)[1:1 + t.numel()]
    return flat.view(t.shape).copy_(t)


MUTATIONS = {
    "on the CPU": lambda t: t.cpu(),
    "of another dtype": lambda t: t.to(_other_dtype(t)),
    "one column short": lambda t: t[..., :-1],
    "with an extra dimension": lambda t: t.unsqueeze(0),
    "misaligned": _misaligned,
    "column-major": lambda t: t.t().contiguous().t() if t.dim() == 2 else None,
}


# Mutations that leave a call valid: row_rstd reads h for its shape only and reads stats with torch
# (any alignment or strides); linear_rmsnorm_bwd copies residual_grad (argument 8) into a fresh dX.
# And one known limit, not a valid call: a stats tensor carries no width, only its length
# norm_stats_floats(M, D), so row_rstd cannot tell an h one column narrower than the stream the
# statistics describe (docs/design.md §4; every other consumer also checks h against its weight).
VALID_ANYWAY = {("row_rstd", None, "misaligned"), ("row_rstd", None, "column-major"),
                ("row_rstd", 0, "one column short"), ("linear_rmsnorm_bwd", 8, "misaligned")}


def _valid_anyway(op, index, what):
    return (op.name, None, what) in VALID_ANYWAY or (op.name, index, what) in VALID_ANYWAY


@pytest.fixture(scope="module")
def samples():
    return _samples()


def _cases():
    from coda import ops

    out = []
    for op_index, op in enumerate(ops.ALL_OPS):
        for what in MUTATIONS:
            out.append((op_index, what))
    return out


def _bits(t):
    return t.detach().view(torch.uint8) if t.dtype != torch.bool else t


@pytest.mark.parametrize("op_index,what", _cases())
def test_bad_argument_is_refused_before_anything_runs(samples, op_index, what):
    from coda import ops

    op = ops.ALL_OPS[op_index]
    args = samples[op]
    refused = 0
    for i, arg in enumerate(args):
        if not isinstance(arg, torch.Tensor):
            continue
        bad = MUTATIONS[what](arg)
        if bad is None or _valid_anyway(op, i, what):
            continue
        call = list(args)
        call[i] = bad
        before = [_bits(a).clone() for a in args if isinstance(a, torch.Tensor)]
        with pytest.raises((ValueError, TypeError)) as err:
            op(*call)
        assert "coda" in str(err.value), f"{op} argument {i} {what}: the message names no op: {err.value}"
        torch.cuda.synchronize()  # a launch with bad arguments would surface here
        after = [_bits(a) for a in args if isinstance(a, torch.Tensor)]
        assert all(torch.equal(x, y) for x, y in zip(before, after)), f"{op} argument {i} {what}: an input changed"
        refused += 1
    assert refused > 0 or all(_valid_anyway(op, i, what) for i in range(len(args)))


def test_the_suite_has_over_a_hundred_cases(samples):
    count = sum(1 for args in samples.values() for a in args for m in MUTATIONS.values()
                if isinstance(a, torch.Tensor) and m(a) is not None)
    assert count >= 100
