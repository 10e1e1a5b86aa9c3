// SPDX-License-Identifier: BSD-3-Clause
// Host twins of the epilogue primitives (kernels/coda/epilogue/): the same semantics in float64 on
// a dense matrix, so a program's expected outputs are the same composition of twins. The partial
// reductions produce CUTLASS's buffer layout (partial_reduction.hpp), padding included.
#pragma once

#include <cstdint>
#include <vector>

namespace coda::ref {

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> v;
  Matrix() = default;
  Matrix(int r, int c, double fill = 0.0) : rows(r), cols(c), v(std::size_t(r) * c, fill) {}
  double& operator()(int r, int c) { return v[std::size_t(r) * cols + c]; }
  double operator()(int r, int c) const { return v[std::size_t(r) * cols + c]; }
};

// Family 1: element-wise.
Matrix add(const Matrix& x, const Matrix& y);
Matrix scale(const Matrix& x, double alpha);
Matrix silu(const Matrix& x);
Matrix gelu(const Matrix& x);  // erf form: x · Φ(x)
// The tanh form (PyTorch's approximate="tanh"): 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))).
Matrix gelu_tanh(const Matrix& x);
// Its backward for the upstream gradient dy, written from the tanh form as PyTorch's
// GeluBackward writes it: dy · (0.5 · (1 + t) + 0.5 · x · (1 − t²) · √(2/π) · (1 + 3 · 0.044715 · x²)),
// t = tanh(√(2/π) · (x + 0.044715 · x³)).
Matrix gelu_tanh_backward(const Matrix& x, const Matrix& dy);
Matrix round_to_bf16(const Matrix& x);
// Family 1, column pairs (2j, 2j+1) of an M × N matrix, N even:
// RoPE, +θ convention: θ = 2π · positions[m] · turns[j]; (x0, x1) → (x0 cos θ − x1 sin θ, x0 sin θ + x1 cos θ).
Matrix rope_pairs(const Matrix& x, const std::vector<std::int64_t>& positions,
                  const std::vector<double>& turns);
// Gated pair 2 → 1: y[m, j] = silu(z[m, 2j]) · z[m, 2j+1]  (M × N/2).
Matrix silu_gate_pairs(const Matrix& z);
// Its backward: dz (M × 2F, interleaved like z) from dy (M × F) and z.
Matrix silu_gate_pairs_grad(const Matrix& dy, const Matrix& z);
// Family 2: broadcasts (v indexed by row m or by column n).
Matrix mul_per_row(const Matrix& x, const std::vector<double>& v);
Matrix mul_per_col(const Matrix& x, const std::vector<double>& v);
Matrix add_per_col(const Matrix& x, const std::vector<double>& v);

// Family 4: partial reductions in the kernel's layout: slice t of `padded` values per tile.
struct Partials {
  int tiles = 0;
  std::int64_t padded = 0;
  std::vector<double> v;  // tiles × padded, padding = 0
};
// partial[t][m] = Σ_{n in [t·tile_n, (t+1)·tile_n) ∩ [0, N)} f(x[m, n]), f = x or x².
Partials per_row_partials(const Matrix& x, int tile_m, int tile_n, bool square);
// partial[t][n] = Σ_{m in [t·tile_m, (t+1)·tile_m) ∩ [0, M)} x[m, n].
Partials per_col_partials(const Matrix& x, int tile_m, int tile_n);
// Merges: out[i] = Σ_t partial[t][i]; rstd[i] = 1 / sqrt(out[i] / width + eps).
std::vector<double> merge(const Partials& p, int count);
std::vector<double> rstd(const Partials& p, int count, int width, double eps);

// Family 5: partial[t][m] = log Σ_{n in N-tile t, n < N} exp(x[m, n]) (−inf for an empty sum), and
// its merge lse[m] = log Σ_t exp(partial[t][m]).
Partials per_row_lse_partials(const Matrix& x, int tile_m, int tile_n);
std::vector<double> merge_lse(const Partials& p, int count);

}  // namespace coda::ref
