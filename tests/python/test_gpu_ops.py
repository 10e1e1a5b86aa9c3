# SPDX-License-Identifier: BSD-3-Clause
"""The custom ops on the GPU: torch.library.opcheck on every op (schema, fake kernel against the
real one, AOT dispatch with dynamic shapes), errors before any launch, NaN in → NaN out."""
import pytest
import torch

pytestmark = pytest.mark.hopper

M, K, HEADS, KV, HD, FFN, VOCAB = 264, 256, 4, 2, 64, 384, 1024
N_QKV = (HEADS + 2 * KV) * HD


def _bf16(*shape, scale=1.0):
    return (torch.randn(*shape, device="cuda") * scale).to(torch.bfloat16)


def _samples():
    """One valid argument tuple per op (fresh random data)."""
    from coda import ops
    from coda.nn import layout

    a, w, r, nw = _bf16(M, K), _bf16(K, K, scale=K**-0.5), _bf16(M, K), 1 + _bf16(K, scale=0.1)
    x, h, stats = ops.linear_residual_rms(a, w, r, nw)
    w_gu, w_qkv = _bf16(2 * FFN, K, scale=K**-0.5), _bf16(N_QKV, K, scale=K**-0.5)
    pos = torch.arange(M, device="cuda", dtype=torch.int32)
    freqs = layout.rope_frequencies(HEADS, KV, HD, 5e5, None, "cuda")
    gq, gk = 1 + _bf16(HD, scale=0.1), 1 + _bf16(HD, scale=0.1)
    qk = (gq, gk, HEADS, KV, 1e-6)
    targets = torch.randint(0, VOCAB, (M,), device="cuda")
    w_lm = _bf16(VOCAB, K, scale=K**-0.5)
    z, _ = ops.linear_swiglu(a, w_gu, True)
    w_up, b_up = _bf16(FFN, K, scale=K**-0.5), _bf16(FFN, scale=0.5)
    gelu_pre, _ = ops.linear_bias_gelu(a, w_up, b_up, True)
    pre = ops.linear_qknorm_rope(a, w_qkv, pos, freqs, *qk, True)[1]
    return {
        ops.linear: (a, w),
        ops.rms_norm_stats: (x, nw),
        ops.linear_residual_rms: (a, w, r, nw),
        ops.row_rstd: (h, stats, K, 1e-5),
        ops.linear_rmsnorm: (h, w, stats, K, 1e-5),
        ops.linear_swiglu: (a, w_gu, True),
        ops.linear_rmsnorm_swiglu: (h, w_gu, stats, K, 1e-5, True),
        ops.linear_rope: (a, w_qkv, pos, freqs),
        ops.linear_rmsnorm_rope: (h, w_qkv, stats, K, 1e-5, pos, freqs),
        ops.linear_qknorm_rope: (a, w_qkv, pos, freqs, *qk, True),
        ops.linear_rmsnorm_qknorm_rope: (h, w_qkv, stats, K, 1e-5, pos, freqs, *qk, True),
        ops.linear_cross_entropy: (x, w_lm, targets, -100, 2, 0.0, 0.0),
        ops.linear_cross_entropy_fwd_bwd: (x, w_lm, targets, -100, 2, 0.0, 0.0),
        ops.linear_swiglu_bwd: (_bf16(M, K), _bf16(K, FFN, scale=FFN**-0.5), z),
        ops.linear_rmsnorm_bwd: (_bf16(M, K), w, x, stats, K, nw, 1e-5,
                                 torch.randn(M, device="cuda"), _bf16(M, K)),
        ops.linear_rmsnorm_bwd_add_: (_bf16(M, K), _bf16(M, K), w, x, stats, K, nw, 1e-5,
                                      torch.randn(M, device="cuda")),
        ops.rope_bwd: (_bf16(M, N_QKV), _bf16(M, N_QKV), pos, freqs),
        ops.qknorm_rope_bwd: (pre, _bf16(M, N_QKV), pos, freqs, *qk),
        ops.linear_bias_gelu: (a, w_up, b_up, True),
        ops.linear_bias_gelu_bwd: (_bf16(M, K), _bf16(K, FFN, scale=FFN**-0.5), gelu_pre),
    }


def test_every_op_has_a_sample():
    from coda import ops

    assert set(_samples()) == set(ops.ALL_OPS)


@pytest.mark.parametrize("index", range(20))
def test_opcheck(index):
    from coda import ops

    op = ops.ALL_OPS[index]
    torch.library.opcheck(op.custom_op, _samples()[op])


def test_bad_input_raises_before_launch():
    from coda import ops

    a, w = _bf16(M, K), _bf16(K, K)
    r, nw = _bf16(M, K), _bf16(K)
    with pytest.raises(ValueError, match="CUDA tensor"):
        ops.linear_residual_rms(a.cpu(), w, r, nw)
    with pytest.raises(ValueError, match="W"):  # the C++ message, naming the argument
        ops.linear_residual_rms(a, _bf16(K, K + 8), r, nw)
    with pytest.raises(ValueError):
        ops.linear_residual_rms(a.float(), w, r, nw)
    with pytest.raises(TypeError):
        ops.linear_residual_rms(a.double(), w, r, nw)
    misaligned = torch.empty(M * K + 1, device="cuda", dtype=torch.bfloat16)[1:].view(M, K)
    with pytest.raises(ValueError, match="align"):
        ops.linear_residual_rms(misaligned, w, r, nw)


def test_nan_in_nan_out():
    from coda import ops

    a, w, r, nw = _bf16(M, K), _bf16(K, K, scale=K**-0.5), _bf16(M, K), 1 + _bf16(K, scale=0.1)
    a[7, 3] = float("nan")
    x, h, stats = ops.linear_residual_rms(a, w, r, nw)
    assert torch.isnan(x[7]).all() and not torch.isnan(x[8]).any()
    d = ops.linear_rmsnorm(h, w, stats, K, 1e-5)
    assert torch.isnan(d[7]).all() and not torch.isnan(d[8]).any()


def _same_nonfinite(got, want):
    """Element by element: NaN where `want` is NaN, the same ±Inf where it is infinite, finite
    elsewhere."""
    got, want = got.float(), want.float()
    return all(torch.equal(f(got), f(want)) for f in (torch.isnan, torch.isposinf, torch.isneginf))


def test_nan_in_nan_out_cross_entropy():
    """The cross-entropy ops give NaN and Inf where PyTorch's F.cross_entropy and torch.logsumexp
    (and their autograd) give them on the same inputs in fp32, and finite values elsewhere: NaN in
    one row of x and +Inf in another (lse NaN and +Inf, both rows' loss NaN, the sum and mean NaN,
    both rows of dx and all of dW NaN), then NaN in one element of W (every row). Loss only,
    fwd+bwd, and coda.nn.LinearCrossEntropy on both its paths."""
    import torch.nn.functional as F

    from coda import ops
    from coda.nn import LinearCrossEntropy

    targets = torch.randint(0, VOCAB, (M,), device="cuda")
    x, w = _bf16(M, K), _bf16(VOCAB, K, scale=K**-0.5)
    x[7, 3], x[9, 5] = float("nan"), float("inf")
    w_nan = w.clone()
    w_nan[11, 5] = float("nan")
    for xi, wi, bad_rows in ((x, w, [7, 9]), (_bf16(M, K), w_nan, list(range(M)))):
        xr, wr = xi.float().requires_grad_(True), wi.float().requires_grad_(True)
        logits = xr @ wr.t()
        ref = {r: F.cross_entropy(logits, targets, reduction=r) for r in ("none", "sum", "mean")}
        ref["mean"].backward()
        ref_lse = torch.logsumexp(logits.detach(), -1)
        for r in ("none", "sum", "mean"):
            loss, lse = ops.linear_cross_entropy(xi, wi, targets, -100, ops.REDUCTIONS[r], 0.0, 0.0)
            assert _same_nonfinite(loss.view(ref[r].shape), ref[r].detach()), f"loss ({r})"
            assert _same_nonfinite(lse, ref_lse), f"lse ({r})"

        loss, lse, dx, dw, zdz = ops.linear_cross_entropy_fwd_bwd(
            xi, wi, targets, -100, ops.REDUCTIONS["mean"], 0.0, 0.0)
        assert _same_nonfinite(loss.view(()), ref["mean"].detach()), "fwd+bwd loss"
        assert _same_nonfinite(lse, ref_lse), "fwd+bwd lse"
        assert _same_nonfinite(dx, xr.grad), "dx"
        assert _same_nonfinite(dw, wr.grad), "dW"
        bad = torch.zeros(M, dtype=torch.bool, device="cuda")
        bad[bad_rows] = True
        assert torch.equal(torch.isnan(zdz), bad), "zdz"

        head = LinearCrossEntropy(K, VOCAB, device="cuda")
        with torch.no_grad():
            head.weight.copy_(wi)
            assert _same_nonfinite(head(xi, targets), ref["mean"].detach()), "module, loss only"
        xg = xi.clone().requires_grad_(True)
        out = head(xg, targets)
        out.backward()
        assert _same_nonfinite(out, ref["mean"].detach()), "module loss"
        assert _same_nonfinite(xg.grad, xr.grad) and _same_nonfinite(head.weight.grad, wr.grad)


@pytest.mark.parametrize("masters", [False, True], ids=["bf16", "fp32_weight_autocast"])
def test_linear_cross_entropy_module_matches_float64(masters):
    """coda.nn.LinearCrossEntropy: loss, ∂x and ∂W against float64 under the contract (per row for
    the gradients), with ignored targets; the framework is PyTorch's bf16 logits + F.cross_entropy.
    With an fp32 weight (mixed precision) under bf16 autocast: the same against the weight's bf16
    rounding as the framework, ∂W in fp32; outside autocast it refuses."""
    import torch.nn.functional as F

    from coda.nn import LinearCrossEntropy, UnsupportedModel

    m, hidden, vocab = 1000, 512, 4000
    head = LinearCrossEntropy(hidden, vocab, device="cuda", dtype=torch.float32 if masters else torch.bfloat16)
    x = _bf16(m, hidden)
    targets = torch.randint(0, vocab, (m,), device="cuda")
    targets[::7] = -100

    def run(fn, x, w):
        x = x.detach().clone().requires_grad_(True)
        w = w.detach().clone().requires_grad_(True)
        loss = fn(x, w)
        loss.backward()
        return loss.detach().double(), x.grad.double(), w.grad.double()

    ref = run(lambda x, w: F.cross_entropy(x @ w.t(), targets, ignore_index=-100), x.double(), head.weight.double())
    fw = run(lambda x, w: F.cross_entropy((x @ w.t()).float(), targets, ignore_index=-100), x,
             head.weight.to(torch.bfloat16))

    xg = x.detach().clone().requires_grad_(True)
    if masters:
        with pytest.raises(UnsupportedModel, match="weight is float32 outside autocast"):
            head(xg, targets)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=masters):
        loss = head(xg, targets)
    loss.backward()
    assert head.weight.grad.dtype == head.weight.dtype
    got = (loss.detach().double(), xg.grad.double(), head.weight.grad.double())
    for name, g, f, r in zip(("loss", "dx", "dW"), got, fw, ref):
        err = (g - r).abs().reshape(g.shape[0] if g.dim() else 1, -1).amax(1)
        bound = 2 * (f - r).abs().reshape(err.shape[0], -1).amax(1) + 1e-6
        assert (err <= bound).all(), f"{name}: {int((err > bound).sum())} rows over the contract"


def test_linear_matches_float64():
    """coda.ops.linear, the plain GEMM the benchmarks measure the fused ops against: D = A·Wᵀ
    against float64 under the contract per row (rows of scale 1e-3 … 1e3), the framework being
    PyTorch's bf16 matmul; ragged M and K, every shape through the GPU's own kernel choice."""
    from coda import ops

    for m, n, k in ((1000, 776, 520), (4099, 4096, 1032), (1, 8, 8)):
        scales = 10.0 ** torch.randint(-3, 4, (m, 1), device="cuda")
        a, w = (_bf16(m, k) * scales).to(torch.bfloat16), _bf16(n, k, scale=k**-0.5)
        ref = a.double() @ w.double().t()
        err = (ops.linear(a, w).double() - ref).abs().amax(1)
        bound = 2 * ((a @ w.t()).double() - ref).abs().amax(1)
        assert (err <= bound).all(), f"{m}x{n}x{k}: {int((err > bound).sum())} rows over the contract"


def test_linear_rmsnorm_bwd_add_in_place_equals_the_copying_op():
    """The in-place op runs the same kernel as linear_rmsnorm_bwd with residual_grad: the same bits
    in dx, N and ∂w (ragged M; the layer parity test checks both against float64), and the copying
    op leaves its residual_grad untouched."""
    from coda import ops

    m = 1000
    a, w, r, nw = _bf16(m, K), _bf16(K, K, scale=K**-0.5), _bf16(m, K), 1 + _bf16(K, scale=0.1)
    x, _h, stats = ops.linear_residual_rms(a, w, r, nw)
    dz, zdz, residual = _bf16(m, K), torch.randn(m, device="cuda"), _bf16(m, K)
    kept = residual.clone()
    dx, n, dw = ops.linear_rmsnorm_bwd(dz, w, x, stats, K, nw, 1e-5, zdz, residual)
    assert torch.equal(residual, kept), "linear_rmsnorm_bwd changed its residual_grad"
    n2, dw2 = ops.linear_rmsnorm_bwd_add_(residual, dz, w, x, stats, K, nw, 1e-5, zdz)
    assert not torch.equal(residual, kept), "linear_rmsnorm_bwd_add_ left dx as it was"
    assert torch.equal(residual, dx) and torch.equal(n2, n) and torch.equal(dw2, dw)


def test_rope_backward_reads_split_heads_as_the_whole_gradient():
    """rope_bwd and qknorm_rope_bwd given attention's dQ | dK | dV as three strided blocks (the
    layout SDPA's backward returns, viewed as rows) give the bits they give on the concatenated
    [M, N] gradient; opcheck on the split call (schema, fake shapes); a block whose width is not a
    multiple of 8 or widths that miss N are refused, naming the block."""
    from coda import ops
    from coda.nn import layout

    m = 392
    pos = torch.arange(m, device="cuda", dtype=torch.int32)
    freqs = layout.rope_frequencies(HEADS, KV, HD, 5e5, None, "cuda")
    gq, gk = 1 + _bf16(HD, scale=0.1), 1 + _bf16(HD, scale=0.1)
    grads = [_bf16(2, m // 2, h, HD) for h in (HEADS, KV, KV)]  # [B, S, heads, hd]
    blocks = [g.reshape(m, -1) for g in grads]
    assert all(b.data_ptr() == g.data_ptr() for b, g in zip(blocks, grads))
    whole = torch.cat(blocks, dim=1)
    qkv, pre = _bf16(m, N_QKV), _bf16(m, N_QKV)
    for op, args, extra in ((ops.rope_bwd, (qkv,), (pos, freqs)),
                            (ops.qknorm_rope_bwd, (pre,), (pos, freqs, gq, gk, HEADS, KV, 1e-6))):
        expected = op(*args, whole, *extra)
        got = op(*args, blocks[0], *extra, blocks[1], blocks[2])
        assert all(torch.equal(a, b) for a, b in zip(got, expected)), f"{op}: split differs from whole"
        torch.library.opcheck(op.custom_op, (*args, blocks[0], *extra, blocks[1], blocks[2]))
        with pytest.raises(ValueError, match=r"dQKV\.k.*multiple of 8"):
            op(*args, blocks[0], *extra, blocks[1][:, :-4], blocks[2])
        with pytest.raises(ValueError, match="add up to"):
            op(*args, blocks[0][:, :HD], *extra, blocks[1], blocks[2])


def _meets_contract_per_row(got, fw, ref, what):
    """max |got − ref64| ≤ 2 · max |framework − ref64| + 1e-6 in each row (a vector: one row)."""
    err = (got.double() - ref).abs().reshape(got.shape[0] if got.dim() > 1 else 1, -1).amax(1)
    bound = 2 * (fw.double() - ref).abs().reshape(err.shape[0], -1).amax(1) + 1e-6
    assert (err <= bound).all(), f"{what}: {int((err > bound).sum())} of {err.shape[0]} rows over the contract"


@pytest.mark.parametrize("save_pre", [True, False])
def test_linear_bias_gelu_matches_float64(save_pre):
    """linear_bias_gelu against F.gelu(F.linear(x, w, b), approximate="tanh") in float64 under the
    contract per row, the framework being the same call in bf16 (Pre against F.linear); ragged
    M and N, rows of x of scale 1 and 30 (GELU saturated); then linear_bias_gelu_bwd on the saved Pre
    against float64 autograd of F.linear(F.gelu(pre, approximate="tanh"), w_down) (∂pre, and ∂b =
    Σ_rows ∂pre), the framework being bf16 autograd (∂b summed from its bf16 ∂pre)."""
    import torch.nn.functional as F

    from coda import ops

    m, k, n, d = 1000, 520, 776, 264
    x = _bf16(m, k)
    x[1::2] = (x[1::2].float() * 30).to(torch.bfloat16)
    w, b = _bf16(n, k, scale=k**-0.5), _bf16(n, scale=0.5)
    pre, y = ops.linear_bias_gelu(x, w, b, save_pre)
    ref_pre = F.linear(x.double(), w.double(), b.double())
    fw_pre = F.linear(x, w, b)
    _meets_contract_per_row(y, F.gelu(fw_pre, approximate="tanh"), F.gelu(ref_pre, approximate="tanh"), "Y")
    if not save_pre:
        assert pre.numel() == 0
        return
    _meets_contract_per_row(pre, fw_pre, ref_pre, "Pre")
    assert torch.equal(y, ops.linear_bias_gelu(x, w, b, False)[1]), "Y without Pre: other bits"

    d_out, w_down = _bf16(m, d), _bf16(d, n, scale=n**-0.5)
    d_pre, d_bias = ops.linear_bias_gelu_bwd(d_out, w_down, pre)
    assert d_bias.dtype == torch.float32

    def autograd(p, wd, dout):
        p = p.detach().clone().requires_grad_(True)
        F.linear(F.gelu(p, approximate="tanh"), wd).backward(dout)
        return p.grad

    ref = autograd(pre.double(), w_down.double(), d_out.double())
    fw = autograd(pre, w_down, d_out)
    _meets_contract_per_row(d_pre, fw, ref, "dPre")
    _meets_contract_per_row(d_bias, fw.double().sum(0), ref.sum(0), "dbias")


def test_linear_bias_gelu_nan_in_nan_out():
    """NaN in one row of x: that row of Pre, Y and dPre is NaN, the others finite; every column of
    ∂b is NaN (each sums that row)."""
    from coda import ops

    x, w, b = _bf16(M, K), _bf16(FFN, K, scale=K**-0.5), _bf16(FFN, scale=0.5)
    x[7, 3] = float("nan")
    pre, y = ops.linear_bias_gelu(x, w, b, True)
    for t in (pre, y):
        assert torch.isnan(t[7]).all() and torch.isfinite(t[8]).all()
    d_pre, d_bias = ops.linear_bias_gelu_bwd(_bf16(M, K), _bf16(K, FFN, scale=FFN**-0.5), pre)
    assert torch.isnan(d_pre[7]).all() and torch.isfinite(d_pre[8]).all()
    assert torch.isnan(d_bias).all()
