# How close to the contract's bound the patched model sits: max over tensors of
# |coda - ref64| / |framework - ref64| (the bound is 2), N fresh seeds per model: bf16 parameters
# against HF bf16; fp32 masters under bf16 autocast against HF bf16 (the test's framework) and
# against HF's own autocast run (its residual stream fp32). Helpers of tests/python/test_gpu_model.py.
import copy, sys, torch
sys.path.insert(0, sys.argv[1])
import test_gpu_model as t
n_seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
amp = lambda: torch.autocast("cuda", dtype=torch.bfloat16)

class AmpModel(torch.nn.Module):  # HF's fp32 model whose forward runs under autocast
    def __init__(self, m):
        super().__init__(); self.m = m
    def forward(self, **kw):
        with amp():
            return self.m(**kw)

def worst(ref, loss, g):
    ratios = {n: float((g[n] - gr).abs().max()) / max(float((ref.g_hf[n] - gr).abs().max()), 1e-12)
              for n, gr in ref.g_ref.items()}
    name, r = max(ratios.items(), key=lambda kv: kv[1])
    return round(r, 3), name.replace("model.layers.", "L"), round(abs(float(loss) - float(ref.loss_ref)) / ref.token_err_hf, 3)

for model_type in ("llama", "qwen3"):
    rows = {"bf16 vs hf_bf16": [], "amp vs hf_bf16": [], "amp vs hf_amp": []}
    for seed in range(n_seeds):
        for masters in (False, True):
            hf = t._model(model_type, torch.float32 if masters else torch.bfloat16)
            ids = torch.randint(0, hf.config.vocab_size, (2, 328), device="cuda")
            patched = t._patch(copy.deepcopy(hf), model_type)
            patched.zero_grad(set_to_none=True)
            with amp() if masters else torch.autocast("cuda", enabled=False):
                loss = patched(input_ids=ids, labels=ids).loss
            loss.backward()
            g = t._hf_grads(patched); loss = loss.detach()
            if not masters:
                rows["bf16 vs hf_bf16"].append(worst(t._Reference(hf, ids), loss, g))
                continue
            rows["amp vs hf_bf16"].append(worst(t._Reference(copy.deepcopy(hf).to(torch.bfloat16), ids, source=hf), loss, g))
            ref_amp = t._Reference(AmpModel(copy.deepcopy(hf)), ids, source=hf)
            ref_amp.g_hf = {k.removeprefix("m."): v for k, v in ref_amp.g_hf.items()}
            rows["amp vs hf_amp"].append(worst(ref_amp, loss, g))
    for k, v in rows.items():
        print(model_type, k, "max", max(r[0] for r in v), "per seed (grad ratio, tensor, loss ratio):", v, flush=True)
