// SPDX-License-Identifier: BSD-3-Clause
// Converting standard Llama weights (Hugging Face / torchtitan layout) to the layouts the fused
// ops read, as row permutations of nn.Linear weights [out, in] (apply them with any tensor
// library: W_new[r] = W_old[rows[r]]), and the RoPE frequency table. Host-only.
//   gate_up_interleave_rows  [W_gate; W_up] (2F rows) → gate/up interleaved (linear_swiglu.hpp)
//   rope_interleave_rows     rotate-half head layout → adjacent pairs, per head (linear_rope.hpp)
//   rope_frequencies         the per-column (hi, lo) table for a fused QKV output
#pragma once

#include <cstdint>
#include <vector>

namespace coda::ops {

// Row r of the interleaved weight is row rows[r] of [W_gate; W_up]: 2j ← j, 2j + 1 ← F + j.
std::vector<std::int64_t> gate_up_interleave_rows(std::int64_t ffn_dim);

// For a projection of `heads` heads of `head_dim` rows each: row h·hd + 2i ← h·hd + i and
// h·hd + 2i + 1 ← h·hd + i + hd/2, so rotate-half RoPE (HF) becomes RoPE on adjacent pairs with
// the same result (in the permuted order). Apply to W_q and W_k, not W_v.
std::vector<std::int64_t> rope_interleave_rows(int heads, int head_dim);

// Llama 3.1-style frequency scaling ("rope_type": "llama3"); factor = 0 means none.
struct RopeScaling {
  double factor = 0.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_max_position = 8192.0;
};

// The inverse frequencies of one head, radians per position: θ^(−2i/hd), scaled; i < hd/2.
std::vector<double> rope_inverse_frequencies(int head_dim, double theta, RopeScaling scaling = {});

// The `frequencies` argument of linear_rope for a fused QKV output [Q heads | K heads | V heads]:
// 2 floats per column pair, (hi, lo) of inv_freq[i] / 2π in turns; 0 for the V columns.
std::vector<float> rope_frequencies(int q_heads, int kv_heads, int head_dim, double theta,
                                    RopeScaling scaling = {});

}  // namespace coda::ops
