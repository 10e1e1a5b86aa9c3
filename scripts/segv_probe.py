import torch
from coda import ops
M, K = 264, 256
a = torch.randn(M, K, device="cuda").bfloat16(); r = torch.randn(M, K, device="cuda").bfloat16()
nw = torch.randn(K, device="cuda").bfloat16()
try:
    ops.linear_residual_rms(a, torch.randn(K, K + 8, device="cuda").bfloat16(), r, nw)
except Exception as e:
    print("raised", type(e).__name__, e)
from coda import _C
try:
    _C.norm_stats_floats(-1, "x")
except Exception as e:
    print("raised", type(e).__name__, e)
try:
    _C.linear_residual_rms_stats_layout(0, 1, 1)
except Exception as e:
    print("raised", type(e).__name__, e)
