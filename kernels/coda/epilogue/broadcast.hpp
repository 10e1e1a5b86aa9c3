// SPDX-License-Identifier: BSD-3-Clause
// Family 2, broadcasts: values that are the same along a whole mode of the output tile.
//   Scalar           one fp32 value, from a device pointer (or an immediate)
//   PerRow<Ctx, E>   v[m], length M (one value per token: rstd, lse, a row scale)
//   PerCol<Ctx, E>   v[n], length N (one value per feature: a norm weight, a bias)
// CUTLASS names these the other way round (ColBroadcast is per-row); ours say what they index.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/epilogue/fusion/sm90_visitor_load_tma_warpspecialized.hpp>

namespace coda::epilogue {

using Scalar = cutlass::epilogue::fusion::Sm90ScalarBroadcast<
    float, cute::Stride<cute::_0, cute::_0, std::int64_t>>;

// Each thread loads its own rows straight from global memory once per tile (no smem).
template <class Ctx, class Element = float>
using PerRow = cutlass::epilogue::fusion::Sm90ColBroadcast<
    0, typename Ctx::TileShape, Element, float, cute::Stride<cute::_1, cute::_0, std::int64_t>>;

// The CTA's slice of the vector is staged in shared memory once per tile.
template <class Ctx, class Element = float>
using PerCol = cutlass::epilogue::fusion::Sm90RowBroadcast<
    0, typename Ctx::TileShape, Element, float, cute::Stride<cute::_0, cute::_1, std::int64_t>>;

// Arguments, in the order the nodes take them.
inline Scalar::Arguments scalar_args(const float* value) { return {{1.0f}, {value}, {}}; }

template <class Node, class Element>
typename Node::Arguments per_row_args(const Element* values) {
  return {values, Element(0), {}};
}
template <class Node, class Element>
typename Node::Arguments per_col_args(const Element* values) {
  return {values, Element(0), {}};
}

}  // namespace coda::epilogue
