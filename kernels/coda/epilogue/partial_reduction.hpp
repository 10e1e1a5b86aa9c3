// SPDX-License-Identifier: BSD-3-Clause
// Family 4, partial reductions: per (row, N-tile) or per (column, M-tile) sums written to fp32
// partial buffers and merged later (merge.hpp). Deterministic: no atomics, a fixed order.
//   PerRowPartialSum<Ctx, X>         partial[t, m] = Σ_{n in N-tile t} X[m, n]   (passes X on)
//   PerRowPartialSumSquares<Ctx, X>  partial[t, m] = Σ_{n in N-tile t} X[m, n]²  (passes X on)
//   PerColPartialSum<Ctx, X>         partial[t, n] = Σ_{m in M-tile t} X[m, n]   (passes X on)
// Buffer layouts (CUTLASS's, kept so the node writes them directly):
//   per-row: float [ceil(N / tile_N)][round_up(M, tile_M)], element (t, m) at t·Mpad + m
//   per-col: float [ceil(M / tile_M)][round_up(N, tile_N)], element (t, n) at t·Npad + n
// Out-of-bounds elements of ragged tiles are skipped; padding rows/columns hold 0.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/epilogue/fusion/sm90_visitor_store_tma_warpspecialized.hpp>
#include <cutlass/functional.h>

#include "coda/epilogue/column_partial_sum.hpp"

namespace coda::epilogue {

namespace detail {
constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;
}

// The bare per-row node (for DAGs, composition.hpp); PerRowPartial is it applied to a child.
template <class Ctx, template <class> class RegReduce>
using PerRowPartialNode = cutlass::epilogue::fusion::Sm90ColReduction<
    RegReduce, cutlass::plus, cutlass::plus, 0, typename Ctx::TileShape, float, float,
    detail::kRound, cute::Stride<cute::_1, cute::_0, std::int64_t>, 4, true,
    /*FinalReduction=*/false, /*VisitCheckOOB=*/true>;

template <class Ctx, template <class> class RegReduce, class Child>
using PerRowPartial = cutlass::epilogue::fusion::Sm90EVT<PerRowPartialNode<Ctx, RegReduce>, Child>;

template <class Ctx, class Child>
using PerRowPartialSum = PerRowPartial<Ctx, cutlass::plus, Child>;
template <class Ctx, class Child>
using PerRowPartialSumSquares = PerRowPartial<Ctx, cutlass::square_and_plus, Child>;

// The per-column node: CUTLASS's under Cooperative, CODA's own under Pingpong, where CUTLASS's
// keeps the tile's columns in local memory (column_partial_sum.hpp says why and what each costs).
// Both take Arguments {partials}.
template <class Ctx>
using CutlassColumnPartialSumNode = cutlass::epilogue::fusion::Sm90RowReduction<
    cutlass::plus, cutlass::plus, cutlass::plus, 0, typename Ctx::TileShape, float, float,
    detail::kRound, cute::Stride<cute::_0, cute::_1, std::int64_t>, 4, true,
    /*FinalReduction=*/false, /*VisitCheckOOB=*/true>;

template <class Ctx>
using PerColPartialSumNode = std::conditional_t<Ctx::kCooperative, CutlassColumnPartialSumNode<Ctx>,
                                                ColumnPartialSumNode<Ctx>>;
template <class Ctx, class Child>
using PerColPartialSum = cutlass::epilogue::fusion::Sm90EVT<PerColPartialSumNode<Ctx>, Child>;

}  // namespace coda::epilogue
