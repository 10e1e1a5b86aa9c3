# SPDX-License-Identifier: BSD-3-Clause
"""The package's CPU side (runs in CI): fake kernels and shapes, validation errors, the weight
re-layout and its exact inverse, the Hugging Face state_dict round trip, patch refusals. The
references here are written independently of the code they check (RoPE in float64 both ways)."""
import math
import warnings

import pytest
import torch

from hf_layers import make_config


def test_fake_kernels_give_shapes_and_dtypes_on_meta_tensors():
    from coda import ops

    m, k, n, f, v = 300, 256, 512, 384, 1000
    meta = dict(device="meta")
    a, w = torch.empty(m, k, dtype=torch.bfloat16, **meta), torch.empty(n, k, dtype=torch.bfloat16, **meta)
    stats = torch.empty(ops.norm_stats_floats(m, k), **meta)
    x, h, st = ops.linear_residual_rms(a, torch.empty(k, k, dtype=torch.bfloat16, **meta), a, a[0])
    assert x.shape == h.shape == (m, k) and st.shape == (ops.norm_stats_floats(m, k),)
    assert st.dtype == torch.float32
    assert ops.linear_rmsnorm(h, w, stats, k, 1e-5).shape == (m, n)
    z, y = ops.linear_rmsnorm_swiglu(h, torch.empty(2 * f, k, dtype=torch.bfloat16, **meta), stats, k, 1e-5, False)
    assert z.shape == (0,) and y.shape == (m, f)
    loss, lse = ops.linear_cross_entropy(h, torch.empty(v, k, dtype=torch.bfloat16, **meta),
                                         torch.empty(m, dtype=torch.long, **meta), -100, 0, 0.0, 0.0)
    assert loss.shape == (m,) and lse.shape == (m,)
    dz, yy, zdz = ops.linear_swiglu_bwd(a, torch.empty(k, f, dtype=torch.bfloat16, **meta),
                                        torch.empty(m, 2 * f, dtype=torch.bfloat16, **meta))
    assert dz.shape == (m, 2 * f) and yy.shape == (m, f) and zdz.dtype == torch.float32


def test_norm_stats_floats_matches_the_library():
    from coda import _C, ops

    for m, n in [(1, 8), (255, 2048), (16384, 4096), (16383, 8192), (300, 136)]:
        assert ops.norm_stats_floats(m, n) == _C.norm_stats_floats(m, n)


def test_cpu_tensors_and_bad_dtypes_are_refused_with_the_argument_named():
    from coda import ops

    a = torch.randn(64, 64).bfloat16()
    with pytest.raises(ValueError, match="argument 'a' must be a CUDA tensor"):
        ops.linear_residual_rms(a, a, a, a[0])
    with pytest.raises(ValueError, match="argument 'x' must be a CUDA tensor"):
        ops.linear_cross_entropy(a, a, torch.zeros(64, dtype=torch.long), -100, 2, 0.0, 0.0)


def test_library_errors_become_value_errors():
    from coda import _C

    with pytest.raises(ValueError, match="must be positive"):
        _C.linear_residual_rms_stats_layout(0, 128, 128)


def _rope_half(x, pos, inv):
    """HF rotate-half RoPE of one head [T, hd] in float64."""
    ang = pos[:, None] * inv[None]
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    x1, x2 = x.chunk(2, -1)
    return x * cos + torch.cat([-x2, x1], -1) * sin


def _rope_pairs(x, pos, inv):
    """Adjacent-pair RoPE (what the epilogue computes) of one head [T, hd] in float64."""
    ang = pos[:, None] * inv[None]
    a, b = x[:, 0::2], x[:, 1::2]
    out = torch.empty_like(x)
    out[:, 0::2], out[:, 1::2] = a * ang.cos() - b * ang.sin(), a * ang.sin() + b * ang.cos()
    return out


@pytest.mark.parametrize("head_dim", [64, 128])
def test_rope_relayout_preserves_attention_scores(head_dim):
    from coda.nn import layout

    heads, kv, hidden, t = 4, 2, 256, 33
    w_q = torch.randn(heads * head_dim, hidden, dtype=torch.float64)
    w_k = torch.randn(kv * head_dim, hidden, dtype=torch.float64)
    w_v = torch.randn(kv * head_dim, hidden, dtype=torch.float64)
    x = torch.randn(t, hidden, dtype=torch.float64)
    pos = torch.arange(t, dtype=torch.float64) * 7
    inv = 1.0 / (5e5 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    fused = layout.fuse_qkv(w_q, w_k, w_v, heads, kv, head_dim)
    q_p, k_p, v_p = (x @ fused.t()).split([heads * head_dim, kv * head_dim, kv * head_dim], -1)
    assert torch.equal(v_p, x @ w_v.t())
    q_h, k_h = x @ w_q.t(), x @ w_k.t()
    for h in range(heads):
        g = h // (heads // kv)
        hs, gs = slice(h * head_dim, (h + 1) * head_dim), slice(g * head_dim, (g + 1) * head_dim)
        ref = _rope_half(q_h[:, hs], pos, inv) @ _rope_half(k_h[:, gs], pos, inv).t()
        got = _rope_pairs(q_p[:, hs], pos, inv) @ _rope_pairs(k_p[:, gs], pos, inv).t()
        torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-9)


def test_relayouts_are_exact_inverses():
    from coda.nn import layout

    w_q, w_k, w_v = torch.randn(512, 64), torch.randn(256, 64), torch.randn(256, 64)
    back = layout.split_qkv(layout.fuse_qkv(w_q, w_k, w_v, 4, 2, 128), 4, 2, 128)
    assert all(torch.equal(a, b) for a, b in zip(back, (w_q, w_k, w_v)))
    gate, up = torch.randn(96, 32), torch.randn(96, 32)
    fused = layout.fuse_gate_up(gate, up)
    assert torch.equal(fused[0::2], gate) and torch.equal(fused[1::2], up)
    assert all(torch.equal(a, b) for a, b in zip(layout.split_gate_up(fused), (gate, up)))
    g = torch.randn(128)
    assert torch.equal(layout.half_order(layout.pair_order(g, 128), 128), g)


def test_rope_frequency_table_matches_an_independent_computation():
    from coda.nn import layout

    heads, kv, hd, theta = 4, 2, 64, 5e5
    table = layout.rope_frequencies(heads, kv, hd, theta, None, "cpu").double()
    turns = (table[0::2] + table[1::2]).view(-1)  # (hi, lo) pairs, one per column pair
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)) / (2 * math.pi)
    expect = torch.cat([inv.repeat(heads + kv), torch.zeros(kv * hd // 2, dtype=torch.float64)])
    torch.testing.assert_close(turns, expect, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("model_type", ["llama", "qwen3"])
def test_layer_state_dict_is_the_hugging_face_one_bit_for_bit(model_type):
    from coda.nn import CodaDecoderLayer
    from hf_layers import make_layer

    config = make_config(model_type, "tiny")
    hf = make_layer(config, device="cpu")
    coda_layer = CodaDecoderLayer.from_hf(hf, config)
    ours, theirs = coda_layer.state_dict(), hf.state_dict()
    assert ours.keys() == theirs.keys()
    for k in theirs:
        assert torch.equal(ours[k], theirs[k]), k
    again = CodaDecoderLayer.from_hf(hf, config)
    again.load_state_dict(ours)
    for (n, p), (_, q) in zip(again.named_parameters(), coda_layer.named_parameters()):
        assert torch.equal(p, q), n


def _tiny_model(model_type="llama", **overrides):
    from transformers import AutoModelForCausalLM

    config = make_config(model_type, "tiny")
    for k, v in overrides.items():
        setattr(config, k, v)
    return AutoModelForCausalLM.from_config(config).to(torch.bfloat16)


def test_patch_refuses_without_a_hopper_gpu_or_leaves_the_model_untouched():
    import coda

    model = _tiny_model()
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the refusal path is for machines without one")
    with pytest.raises(coda.UnsupportedModel, match="no CUDA device"):
        coda.patch_llama(model)
    before = type(model.model.layers[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert coda.patch_llama(model, strict=False) is model
    assert any("left unpatched" in str(w.message) for w in caught)
    assert type(model.model.layers[0]) is before and "forward" not in vars(model)


@pytest.mark.parametrize("field, value, message", [
    ("attention_bias", True, "attention_bias"),
    ("mlp_bias", True, "mlp_bias"),
    ("hidden_act", "gelu", "hidden_act"),
    ("head_dim", 96, "head_dim"),
])
def test_unsupported_configs_are_named(field, value, message):
    import coda
    from coda.nn import check_config

    config = make_config("llama", "tiny")
    setattr(config, field, value)
    with pytest.raises(coda.UnsupportedModel, match=message):
        check_config(config)


def test_patch_and_unpatch_keep_the_checkpoint_bit_for_bit(monkeypatch):
    """The conversion itself (the GPU check bypassed): state_dict unchanged, unpatch exact."""
    import coda
    import coda.hf

    monkeypatch.setattr(coda.hf, "_check_device", lambda model: None)
    model = _tiny_model("qwen3")
    hf_class = type(model.model.layers[0])
    before = {k: v.clone() for k, v in model.state_dict().items()}
    coda.patch_qwen3(model)
    assert type(model.model.layers[0]).__name__ == "CodaDecoderLayer"
    after = model.state_dict()
    assert after.keys() == before.keys() and all(torch.equal(after[k], before[k]) for k in before)
    coda.unpatch(model)
    assert type(model.model.layers[0]) is hf_class
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def test_a_patched_model_cast_to_bf16_keeps_its_rope_table_in_fp32(monkeypatch):
    """model.to(torch.bfloat16) after patching (an fp32 mixed-precision model cast for bf16 training
    or evaluation): the weights follow, the RoPE frequency table stays fp32, bit for bit."""
    import coda
    import coda.hf

    monkeypatch.setattr(coda.hf, "_check_device", lambda model: None)
    model = coda.patch_llama(_tiny_model().float())
    table = model.model.layers[0].frequencies.clone()
    assert table.dtype == torch.float32
    model.to(torch.bfloat16)
    layer = model.model.layers[0]
    assert layer.qkv_weight.dtype == torch.bfloat16
    assert layer.frequencies.dtype == torch.float32 and torch.equal(layer.frequencies, table)
    model.half().float()
    assert torch.equal(model.model.layers[1].frequencies, table)


@pytest.mark.parametrize("kwargs, message", [
    ({"output_hidden_states": True}, "output_hidden_states=True"),
    ({"output_attentions": True}, "output_attentions=True"),
    ({"logits_to_keep": 1}, "logits_to_keep"),
    ({"use_cache": True}, "no KV cache"),
])
def test_patched_forward_refuses_what_it_would_silently_drop(monkeypatch, kwargs, message):
    """Hugging Face forward arguments the fused model cannot honour raise, naming the argument,
    before anything runs — not a None in the output that fails somewhere else."""
    import coda
    import coda.hf

    monkeypatch.setattr(coda.hf, "_check_device", lambda model: None)
    model = coda.patch_llama(_tiny_model())
    ids = torch.zeros(1, 8, dtype=torch.long)
    with pytest.raises(ValueError, match=message):
        model(input_ids=ids, labels=ids, **kwargs)


def test_autotune_switch_reaches_the_library():
    """coda.ops.set_autotune turns the C++ autotuner on and off (it defaults to CODA_TUNE); without
    a GPU no device is identified, so there is no cache file to name."""
    from coda import _C, ops

    before = _C.autotune_enabled()
    try:
        ops.set_autotune(True)
        assert _C.autotune_enabled()
        ops.set_autotune(False)
        assert not _C.autotune_enabled()
    finally:
        _C.set_autotune(before)
    if not torch.cuda.is_available():
        assert _C.autotune_cache_file() == ""


def test_tuning_from_python_names_its_candidates_rows_and_errors():
    """What `python -m coda.bench tune` stands on: the kernel candidates, a kernel forced on one op
    (the producer's stats layout follows it), and the table row scripts/merge_table.py reads."""
    import re

    from coda import _C, ops

    candidates = _C.program_candidates()
    assert len(candidates) == 32 and len(set(candidates)) == 32
    assert {c[0] for c in candidates} == {"coop_128x256_2x1", "pingpong_128x128_2x1", "pingpong_128x192_2x1",
                                          "ovcoop_128x256_2x1"}
    # QK-norm's epilogue subtile holds whole 128-column heads: its program has no 192-column tile.
    assert _C.op_candidates("linear_swiglu") == list(range(32))
    assert [candidates[i][0] for i in _C.op_candidates("linear_qknorm_rope")].count("pingpong_128x192_2x1") == 0
    assert len(_C.op_candidates("linear_qknorm_rope")) == 24
    # The RMSNorm backward's program has the 192-column tile too, in 16-column subtiles.
    assert _C.op_candidates("linear_rmsnorm_bwd") == list(range(32))
    pingpong = candidates.index(("pingpong_128x128_2x1", "along_m", 8))
    coop = candidates.index(("coop_128x256_2x1", "along_n", 1))
    row = _C.op_table_row("linear_swiglu", 16384, 28672, 4096, pingpong)
    assert re.match(r"\{OpKey::kLinearSwiglu, 16384, 28672, 4096, \{TileConfig::kPingpong128x128Cluster2x1, "
                    r"RasterOrder::kAlongM, 8, Decomposition::kHeuristic\}\},$", row), row
    with pytest.raises(ValueError, match="op: 'linear_swiglu_no_z' is not an op"):
        _C.op_table_row("linear_swiglu_no_z", 16384, 28672, 4096, 0)
    with pytest.raises(ValueError, match=r"candidate: must be in \[0, 32\); got 32"):
        _C.force_op_choice("linear_swiglu", 32)
    pingpong_192 = candidates.index(("pingpong_128x192_2x1", "along_n", 2))
    tiles = {}
    for name, index in (("pingpong", pingpong), ("coop", coop), ("pingpong_192", pingpong_192)):
        with ops.forced_kernel("linear_residual_rms", index):
            tiles[name] = _C.linear_residual_rms_stats_layout(1000, 2048, 2048)[0]
    assert tiles == {"pingpong": 2048 // 128, "coop": 2048 // 256, "pingpong_192": -(-2048 // 192)}, tiles
    # The kernel an op last ran on this thread names the tuner's "today"; nothing ran here.
    assert _C.last_op_choice("linear_bias_gelu_bwd") is None
    with pytest.raises(ValueError, match="op: 'linear_swiglu_no_z' is not an op"):
        _C.last_op_choice("linear_swiglu_no_z")
    from coda.bench.tune import _describe
    assert _describe(("coop_128x256_2x1", "heuristic", 1)) == "coop heuristic swizzle 1"
    assert _describe(candidates[pingpong]) == "pingpong along m swizzle 8"
    assert _describe(candidates[pingpong_192]) == "pingpong_128x192 along n swizzle 2"


def test_an_installed_package_names_the_commit_it_was_built_from(monkeypatch, tmp_path):
    import os
    import re
    import subprocess
    from pathlib import Path

    from coda import _build_commit, provenance

    built = _build_commit.COMMIT  # None only for a build outside a git checkout
    assert built is None or re.fullmatch(r"[0-9a-f]{7,40}(-dirty)?", built), built
    monkeypatch.delenv("CODA_COMMIT", raising=False)
    monkeypatch.setattr(provenance, "REPO_ROOT", tmp_path)  # no .git here: a wheel installed elsewhere
    assert provenance.git_commit() == built
    monkeypatch.setenv("CODA_COMMIT", "abc1234")
    assert provenance.git_commit() == "abc1234"
    # The test command (scripts/test.sh) builds the package from this checkout, so at its HEAD. A
    # wheel built elsewhere and installed here (the GPU machine's carried .prebuilt) need not be.
    if os.environ.get("CODA_TEST_BUILT_FROM_CHECKOUT") == "1":
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                              capture_output=True, text=True, check=True)
        assert built is not None and built.split("-")[0] == head.stdout.strip()


@pytest.mark.parametrize("grad_dtype,dtype", [(torch.float32, torch.bfloat16), (torch.float32, torch.float32),
                                              (torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32)])
def test_scaled_grad_has_the_bits_of_scale_then_cast(grad_dtype, dtype):
    """The cross-entropy Functions return ∂W_lm · g (fp32 in the op) in the weight's dtype in one
    pass; it must equal the two-step (grad * g).to(dtype) bit for bit, at every scale."""
    from coda.nn.precision import scaled_grad
    torch.manual_seed(0)
    grad = (torch.randn(64, 33) * torch.logspace(-20, 20, 64)[:, None]).to(grad_dtype)
    grad[3, 5], grad[7, 1] = float("nan"), float("inf")
    for g in (torch.tensor(1.0), torch.tensor(0.37), torch.tensor(1e-3, dtype=torch.bfloat16)):
        out = scaled_grad(grad, g, dtype)
        assert out.dtype == dtype and out.shape == grad.shape
        assert torch.equal(out.view(torch.int16 if dtype == torch.bfloat16 else torch.int32),
                           (grad * g).to(dtype).view(torch.int16 if dtype == torch.bfloat16 else torch.int32))


def test_final_rmsnorm_backward_meets_the_contract_at_every_row_scale():
    """coda.nn.functions.rmsnorm_backward (the LM head's final norm, after the fused cross-entropy)
    against float64 autograd of x · rsqrt(mean(x²) + ε) ⊙ w, per row for ∂x (rows of RMS 1e-3 …
    1e3), against the same autograd in fp32 from the bf16 operands, ∂x rounded to bf16 (the framework)."""
    from coda.nn.functions import rmsnorm_backward
    torch.manual_seed(1)
    m, hidden, eps = 48, 96, 1e-6
    x = (torch.randn(m, hidden) * torch.logspace(-3, 3, m)[:, None]).bfloat16()
    w = (1 + 0.1 * torch.randn(hidden)).bfloat16()
    d_normed = torch.randn(m, hidden).bfloat16()
    g = torch.tensor(0.25)

    def autograd(dtype):
        xx = x.to(dtype).requires_grad_()
        ww = w.to(dtype).requires_grad_()
        normed = xx * torch.rsqrt(xx.pow(2).mean(1, keepdim=True) + eps) * ww
        (normed * d_normed.to(dtype)).sum().mul(g.to(dtype)).backward()
        return xx.grad, ww.grad

    dx64, dw64 = autograd(torch.float64)
    dx_fw, dw_fw = autograd(torch.float32)
    dx_fw = dx_fw.bfloat16().double()
    rstd = torch.rsqrt(x.float().pow(2).mean(1) + eps)
    dx, dw = rmsnorm_backward(d_normed, x, rstd, w, g)
    assert dx.dtype == torch.bfloat16 and dw.dtype == torch.float32
    err = (dx.double() - dx64).abs().amax(1)
    bound = 2 * (dx_fw - dx64).abs().amax(1)
    assert bool((err <= bound).all()), (err / bound).max()
    assert (dw.double() - dw64).abs().max() <= 2 * (dw_fw.double() - dw64).abs().max()
    # NaN in, NaN out: a NaN in one row of x reaches that row of ∂x and every column of ∂w.
    x[5, 7] = float("nan")
    rstd = torch.rsqrt(x.float().pow(2).mean(1) + eps)
    dx, dw = rmsnorm_backward(d_normed, x, rstd, w, g)
    assert bool(dx[5].isnan().all()) and bool(dw.isnan().all()) and not bool(dx[4].isnan().any())
