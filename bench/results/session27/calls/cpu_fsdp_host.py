"""Twenty-seventh session, on this 2-core CPU machine (no GPU): the host time a training step of an
8-layer Hugging Face Llama at tiny widths (hidden 64, 16 tokens: compute negligible) takes plain,
under FSDP2 with a unit per layer, and with MixedPrecisionPolicy(bf16, fp32) too; one gloo rank,
one thread; median of 25 steps per phase. Usage: python3 cpu_fsdp_host.py"""
import os, time, statistics, torch, torch.distributed as dist
from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
from transformers import LlamaConfig, LlamaForCausalLM
torch.set_num_threads(1)
os.environ.setdefault("MASTER_ADDR","127.0.0.1"); os.environ.setdefault("MASTER_PORT","29533")
dist.init_process_group("gloo", rank=0, world_size=1)
from torch.distributed.device_mesh import init_device_mesh
mesh = init_device_mesh("cpu", (1,))
def model():
    torch.manual_seed(0)
    c = LlamaConfig(hidden_size=64, num_hidden_layers=8, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                    intermediate_size=224, vocab_size=256, max_position_embeddings=64, tie_word_embeddings=False, attn_implementation="sdpa")
    return LlamaForCausalLM(c).float()
def run(mode):
    m = model()
    if mode != "plain":
        pol = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if mode == "fsdp_mp" else MixedPrecisionPolicy()
        for l in m.model.layers: fully_shard(l, mesh=mesh, mp_policy=pol)
        fully_shard(m, mesh=mesh, mp_policy=pol)
    params = [p for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-3, foreach=True)
    ids = torch.randint(0, 256, (1, 16))
    ts = {"fwd":[], "bwd":[], "clip":[], "opt":[]}
    for i in range(30):
        t0 = time.perf_counter(); loss = m(input_ids=ids, labels=ids).loss
        t1 = time.perf_counter(); loss.backward()
        t2 = time.perf_counter(); torch.nn.utils.clip_grad_norm_(params, 1.0)
        t3 = time.perf_counter(); opt.step(); opt.zero_grad(set_to_none=True)
        t4 = time.perf_counter()
        if i >= 5:
            for k, a, b in (("fwd", t0, t1), ("bwd", t1, t2), ("clip", t2, t3), ("opt", t3, t4)): ts[k].append((b - a) * 1e3)
    print(mode, {k: round(statistics.median(v), 2) for k, v in ts.items()}, "total", round(sum(statistics.median(v) for v in ts.values()), 2), "ms")
for mode in ("plain", "fsdp", "fsdp_mp"): run(mode)
dist.destroy_process_group()
