"""Session 30: the kernels of one linear_cross_entropy_fwd_bwd call, in launch order, with their
GPU times (torch.profiler), at 8B and 1B LM-head widths and M = 16384 and 13350."""
import torch
from torch.profiler import ProfilerActivity, profile

from coda import ops

for h, v in ((4096, 128256), (2048, 128256)):
    for m in (16384, 13350):
        x = torch.randn(m, h, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(v, h, device="cuda", dtype=torch.bfloat16) * 0.02
        t = torch.randint(0, v, (m,), device="cuda")
        for _ in range(3):
            ops.linear_cross_entropy_fwd_bwd(x, w, t, -100, 2, 0.0, 0.0)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            ops.linear_cross_entropy_fwd_bwd(x, w, t, -100, 2, 0.0, 0.0)
            torch.cuda.synchronize()
        ev = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        total = sum(e.device_time for e in ev)
        print(f"== H {h} V {v} M {m}: {len(ev)} kernels, {total / 1e3:.3f} ms")
        for e in ev:
            print(f"{e.device_time / 1e3:8.3f} ms  {e.name[:150]}")
        del x, w, t
        torch.cuda.empty_cache()
