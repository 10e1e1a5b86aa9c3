// SPDX-License-Identifier: BSD-3-Clause
// The *standard* Llama-3 forward pieces in float64 (what Hugging Face computes), independent of
// CODA's rewrites: the fused ops are tested against these, and the host tests check that the
// rewritten algebra (deferred norm, interleaved gate/up, adjacent-pair RoPE) equals them.
// `*_framework` variants round every intermediate to bf16 where a bf16 model stores it.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/epilogue.hpp"

namespace coda::ref {

// Y = X · Wᵀ in float64 (X: M × K, W: N × K).
Matrix linear(const Matrix& x, const Matrix& w);
// Rows of w reordered: out[r] = w[rows[r]]; columns of x reordered likewise.
Matrix permute_rows(const Matrix& w, const std::vector<std::int64_t>& rows);
Matrix permute_cols(const Matrix& x, const std::vector<std::int64_t>& cols);

// RMSNorm: x · rsqrt(mean(x²) + eps) · w.
Matrix rms_norm(const Matrix& x, const std::vector<double>& w, double eps);
// Hugging Face's bf16 LlamaRMSNorm: statistics of x in fp32, normalised x rounded to bf16, then
// times w rounded to bf16.
Matrix rms_norm_framework(const Matrix& x, const std::vector<double>& w, double eps);
// The backward of rms_norm(x, w, eps) for the output gradient dy, with u = x · r:
//   dx = r · (dy ⊙ w − u · mean(dy ⊙ w ⊙ u)),   dw = Σ_rows dy ⊙ u.
void rms_norm_backward(const Matrix& x, const std::vector<double>& w, double eps, const Matrix& dy,
                       Matrix* dx, std::vector<double>* dw);
// rsqrt(mean(x²) + eps) per row.
std::vector<double> rstd_of(const Matrix& x, double eps);

// QK-norm (Qwen3, OLMo-2): RMSNorm over each of the first q_heads heads (width head_dim) with
// gamma_q and over the next kv_heads heads with gamma_k; the remaining columns (V) pass through.
// framework: each head normalised as rms_norm_framework does.
Matrix qk_norm(const Matrix& x, int q_heads, int kv_heads, int head_dim,
               const std::vector<double>& gamma_q, const std::vector<double>& gamma_k, double eps,
               bool framework = false);

// The backward of qk_norm for the output gradient dy: rms_norm_backward on each Q / K head (V
// columns pass dy through); dgamma_q / dgamma_k summed over rows and heads.
void qk_norm_backward(const Matrix& x, int q_heads, int kv_heads, int head_dim,
                      const std::vector<double>& gamma_q, const std::vector<double>& gamma_k,
                      double eps, const Matrix& dy, Matrix* dx, std::vector<double>* dgamma_q,
                      std::vector<double>* dgamma_k);

// silu(gate) ⊙ up, and the plain element-wise product.
Matrix silu_mul(const Matrix& gate, const Matrix& up);
Matrix hadamard(const Matrix& a, const Matrix& b);
// The backward of silu(gate) ⊙ up for the upstream gradient dy:
//   ∂gate = dy · up · σ(g) · (1 + g · (1 − σ(g))),   ∂up = dy · silu(g).
// framework: as PyTorch's bf16 autograd does it (silu(g) a bf16 tensor, each product rounded).
void silu_mul_backward(const Matrix& gate, const Matrix& up, const Matrix& dy, Matrix* dgate,
                       Matrix* dup, bool framework = false);
// xᵀ.
Matrix transpose(const Matrix& x);

// Hugging Face rotate-half RoPE on the first `rotated_heads` heads of width hd of x (columns
// beyond pass through): for i < hd/2, with θ = positions[m] · inv_freq[i],
// (x_i, x_{i+hd/2}) → (x_i cos θ − x_{i+hd/2} sin θ, x_{i+hd/2} cos θ + x_i sin θ).
Matrix rope_rotate_half(const Matrix& x, const std::vector<std::int64_t>& positions,
                        const std::vector<double>& inv_freq, int rotated_heads, int head_dim);

// Llama 3.1 RoPE scaling (Hugging Face's rope_scaling with "rope_type": "llama3", same names);
// factor 0: none.
struct Llama3RopeScaling {
  double factor = 0.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_max_position_embeddings = 8192.0;
};

// Hugging Face's inverse frequencies of one head, radians per position, in float64 and written
// from its definition, not from CODA's table (coda::ops::rope_frequencies is what the kernels
// take; the references must not share its code): inv_freq[i] = 1 / base^(2i / head_dim), i <
// head_dim / 2 (_compute_default_rope_parameters), then, with a factor, Llama-3 scaling as
// _compute_llama3_parameters defines it.
std::vector<double> rope_inverse_frequencies(int head_dim, double base,
                                             const Llama3RopeScaling& scaling = {});

}  // namespace coda::ref
