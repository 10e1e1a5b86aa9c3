// SPDX-License-Identifier: BSD-3-Clause
// A QkvGrad (coda/ops/qkv_grad.hpp) checked and handed to a kernel: three (pointer, row stride)
// column blocks and where each ends, addressed by the column of the whole [M, N]. Internal; for
// the .cu files of the ops that read one (rope_bwd, qknorm_rope_bwd).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include <string>

#include "coda/ops/qkv_grad.hpp"
#include "coda/tensor.hpp"
#include "op_checks.hpp"

namespace coda::ops::detail {

struct QkvGradBlocks {
  const __nv_bfloat16* data[3];
  std::int64_t stride[3];
  int end_q, end_k;  // columns [0, end_q) in q, [end_q, end_k) in k, the rest in v

  // The element at (row, col) of the whole [M, N]: a load of up to 8 columns from col stays in
  // one block (blocks are multiples of 8 columns wide, and callers load aligned groups).
  // Selects with constant indices, not data[b]: a dynamic index into the kernel parameter puts
  // the struct in local memory (a 56-byte stack frame in rope_bwd's kernel).
  __device__ __forceinline__ const __nv_bfloat16* at(std::int64_t row, int col) const {
    const bool in_q = col < end_q, in_k = !in_q && col < end_k;
    const __nv_bfloat16* base = in_q ? data[0] : in_k ? data[1] : data[2];
    const std::int64_t ld = in_q ? stride[0] : in_k ? stride[1] : stride[2];
    const int first = in_q ? 0 : in_k ? end_q : end_k;
    return base + row * ld + (col - first);
  }
};

// `g` as an m × n gradient (named `name` in errors, its blocks name.q, name.k, name.v): one bf16
// matrix, or three whose widths are multiples of 8 and add up to n, each checked as
// require_bf16_matrix checks one.
inline QkvGradBlocks require_qkv_grad(const ArgCheck& check, const QkvGrad& g, const char* name,
                                      std::int64_t m, std::int64_t n, int device) {
  const std::string base(name);
  if (!g.split()) {
    require_bf16_matrix(check, g.q, name, m, n, device);
    const auto* q = static_cast<const __nv_bfloat16*>(g.q.data);
    return {{q, q, q}, {g.q.stride[0], g.q.stride[0], g.q.stride[0]}, int(n), int(n)};
  }
  const TensorView* blocks[3] = {&g.q, &g.k, &g.v};
  const std::string names[3] = {base + ".q", base + ".k", base + ".v"};
  std::int64_t width = 0;
  for (int b = 0; b < 3; ++b) {
    check.not_null(*blocks[b], names[b].c_str());
    check.rank_is(*blocks[b], names[b].c_str(), 2);
    const std::int64_t w = blocks[b]->shape[1];
    if (w % 8 != 0)
      check.fail(names[b] + ": a block of a split gradient must be a multiple of 8 columns wide; got " +
                 std::to_string(w));
    require_bf16_matrix(check, *blocks[b], names[b].c_str(), m, w, device);
    width += w;
  }
  if (width != n)
    check.fail(base + ": the blocks' widths add up to " + std::to_string(width) + ", not N = " +
               std::to_string(n));
  return {{static_cast<const __nv_bfloat16*>(g.q.data), static_cast<const __nv_bfloat16*>(g.k.data),
           static_cast<const __nv_bfloat16*>(g.v.data)},
          {g.q.stride[0], g.k.stride[0], g.v.stride[0]},
          int(g.q.shape[1]),
          int(g.q.shape[1] + g.k.shape[1])};
}

}  // namespace coda::ops::detail
