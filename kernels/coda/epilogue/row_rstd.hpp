// SPDX-License-Identifier: BSD-3-Clause
// Family 2, the deferred RMSNorm statistic as a per-row broadcast leaf:
//   RowRstd   rstd[m] = 1 / sqrt(Σ_t partials[t, m] / width + eps)
// folded from the Σx² partials (partial_reduction.hpp layout) of the GEMM that produced x, in
// registers at the start of each tile: no merge launch, no rstd buffer. Each thread sums the
// partials of only the rows it holds (2 in Cooperative, 4 in Pingpong), in tile order, with the
// same arithmetic as merge.hpp's rstd_from_partials, so both give the same bits.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/array.h>

#include "coda/epilogue/node.hpp"
#include "coda/epilogue/partial_math.hpp"
#include "coda/epilogue/program_params.hpp"

namespace coda::epilogue {

// The kernel's form of RstdRowScaleParams (its Arguments): 1 / width divided once, on the host.
struct RowRstdParams {
  const float* partials = nullptr;  // Σx² partials: tiles × padded floats
  std::int64_t padded = 0;          // floats per tile slice (PartialLayout::padded)
  int tiles = 0;                    // PartialLayout::tiles
  float inv_width = 0.0f;           // 1 / (number of features normalised)
  float eps = 0.0f;

  RowRstdParams() = default;
  explicit RowRstdParams(const RstdRowScaleParams& a)
      : partials(a.sums.partials), padded(a.sums.layout.padded), tiles(a.sums.layout.tiles),
        inv_width(1.0f / float(a.sums.width)), eps(a.eps) {}
};

struct RowRstd : RegisterNode<RstdRowScaleParams, RowRstdParams> {
  using RegisterNode::RegisterNode;

  template <class Rows, class RowCoords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Rows rows, RowCoords row_coords, int m0, int M,
                                          Params const& params)
        : rows(rows), row_coords(row_coords), m0(m0), M(M), params(params) {}
    Rows rows;             // rstd per row, stride 0 along N
    RowCoords row_coords;  // relative coordinates of the unique rows
    int m0, M;
    Params const& params;

    CUTLASS_DEVICE void begin() {
      auto unique = unique_rows(rows);
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(unique); ++k) {
        int m = m0 + int(cute::get<0>(row_coords(k)));
        float sum = m < M ? sum_of_partials(params.partials, params.tiles, params.padded, m) : 0.0f;
        unique(k) = rstd_from_sum(sum, params.inv_width, params.eps);
      }
    }

    template <class ElementAcc, int F>
    CUTLASS_DEVICE cutlass::Array<float, F> visit(cutlass::Array<ElementAcc, F> const&, int epi_v,
                                                  int epi_m, int epi_n) {
      cutlass::Array<float, F> out;
      auto rows_mn = rows(cute::_, cute::_, cute::_, epi_m, epi_n);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; ++i) out[i] = rows_mn(epi_v * F + i);
      return out;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto rows = make_row_registers<float, ReferenceSrc>(args);
    auto row_coords = unique_row_coords(rows, args);
    auto coords = fragment_coords(args);
    return ConsumerStoreCallbacks<decltype(rows), decltype(row_coords)>(rows, row_coords, coords.m0,
                                                                        coords.M, params);
  }
};

}  // namespace coda::epilogue
