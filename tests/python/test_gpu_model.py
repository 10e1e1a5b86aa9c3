# SPDX-License-Identifier: BSD-3-Clause
"""A patched Hugging Face causal LM on the GPU: loss and every gradient against the float64
model under the numerics contract, torch.compile(fullgraph=True) with no graph break, CUDA-graph
capture of forward + backward, and the state_dict / unpatch round trip bit for bit."""
import copy

import pytest
import torch

from hf_layers import make_config

pytestmark = pytest.mark.hopper


def _model(model_type):
    from transformers import AutoModelForCausalLM

    config = make_config(model_type, "tiny")
    torch.manual_seed(torch.seed() % 2**31)
    return AutoModelForCausalLM.from_config(config).to("cuda", torch.bfloat16)


def _loss_and_grads(model, ids):
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return loss.detach().double(), {n: p.grad.double() for n, p in model.named_parameters()}


def _hf_grads(patched):
    """Gradients of a patched model under the HF names (the state_dict hook maps them)."""
    from coda.nn.layer import CodaDecoderLayer, to_hf

    out = {}
    for name, module in patched.named_modules():
        if isinstance(module, CodaDecoderLayer):
            for k, g in to_hf(module, {n: p.grad for n, p in module.named_parameters()}).items():
                out[f"{name}.{k}"] = g.double()
    for name, p in patched.named_parameters():
        if ".layers." not in name:
            out[name] = p.grad.double()
    return out


@pytest.mark.parametrize("model_type", ["llama", "qwen3"])
def test_patched_model_matches_hf(model_type):
    import coda

    hf = _model(model_type)
    ref = copy.deepcopy(hf).double()
    patched = copy.deepcopy(hf)
    (coda.patch_qwen3 if model_type == "qwen3" else coda.patch_llama)(patched)
    ids = torch.randint(0, hf.config.vocab_size, (2, 328), device="cuda")

    loss_ref, g_ref = _loss_and_grads(ref, ids)
    loss_hf, g_hf = _loss_and_grads(hf, ids)
    patched.zero_grad(set_to_none=True)
    loss = patched(input_ids=ids, labels=ids).loss
    loss.backward()
    assert abs(float(loss) - float(loss_ref)) <= 2 * abs(float(loss_hf) - float(loss_ref)) + 1e-6
    g_coda = _hf_grads(patched)
    assert set(g_coda) == set(g_ref)
    for name, gr in g_ref.items():
        err = (g_coda[name] - gr).abs().max()
        bound = 2 * (g_hf[name] - gr).abs().max() + 1e-6
        assert err <= bound, f"d {name}: {float(err):.3e} > {float(bound):.3e}"


def test_state_dict_and_unpatch_round_trip():
    import coda

    hf = _model("llama")
    before = {k: v.clone() for k, v in hf.state_dict().items()}
    coda.patch_llama(hf)
    after = hf.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        assert torch.equal(before[k], after[k]), k
    coda.unpatch(hf)
    for k, v in hf.state_dict().items():
        assert torch.equal(before[k], v), k


def test_compile_fullgraph_and_cuda_graph():
    import coda

    model = coda.patch_llama(_model("llama"))
    ids = torch.randint(0, model.config.vocab_size, (2, 256), device="cuda")
    eager_loss, _ = _loss_and_grads(model, ids)

    compiled = torch.compile(model, fullgraph=True)
    loss = compiled(input_ids=ids, labels=ids).loss
    loss.backward()
    torch.testing.assert_close(loss.detach().double(), eager_loss, rtol=1e-3, atol=1e-3)

    class Step(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, ids):
            return self.inner(input_ids=ids, labels=ids).loss

    model.zero_grad(set_to_none=True)
    graphed = torch.cuda.make_graphed_callables(Step(model), (ids,), allow_unused_input=True)
    g_loss = graphed(ids)
    g_loss.backward()
    torch.testing.assert_close(g_loss.detach().double(), eager_loss, rtol=1e-3, atol=1e-3)
