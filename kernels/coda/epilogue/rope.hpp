// SPDX-License-Identifier: BSD-3-Clause
// Family 1, RoPE on adjacent column pairs, the angle computed in the epilogue:
//   RopePairs<X>   (y[2j], y[2j+1]) = R(θ) (x[2j], x[2j+1]),  θ = 2π · position[m] · f[j]
// with R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]] (the +θ convention of interleaved RoPE).
// Frequencies are in turns (cycles per position) as an fp32 hi/lo pair, f = hi + lo
// (rope_frequency() in rope_table.hpp makes them), and positions are int32 per row, so packed
// sequences with per-document positions work. A pair with f = 0 (V columns) passes through
// untouched, as in the standard model, which never rotates V (x0 · 1 − x1 · 0 would turn an Inf
// in x1 into a NaN in x0).
//
// Range reduction, exact up to |position| < 2^24: p = pos·hi rounded, e = fma(pos, hi, −p) its
// exact error, turns = (p − rint(p)) + (e + pos·lo). The fractional part of p is exact, e and
// pos·lo are tiny, so the angle error is ~2^-24 turns at any position (the plain fp32 product
// would lose log2(pos·f) bits). sin/cos then take |θ| ≤ π, where __sincosf is accurate to ~2^-21.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cutlass/array.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/node.hpp"
#include "coda/epilogue/rope_table.hpp"

namespace coda::epilogue {

struct RopePairsArguments {
  const std::int32_t* positions = nullptr;     // [M]
  const RopeFrequency* frequencies = nullptr;  // [N / 2], one per column pair
};

// The RoPE positions of the rows a thread holds (row registers, node.hpp), read once per tile
// (`load` from the node's begin()) instead of once per element. Rows past M read row M - 1's:
// their results are never stored.
template <class Rows, class RowCoords>
struct RowPositions {
  Rows rows;             // per row: its position, stride 0 along N
  RowCoords row_coords;  // relative coordinates of the unique rows

  CUTLASS_DEVICE void load(const std::int32_t* positions, int m0, int M) {
    auto unique = unique_rows(rows);
    CUTLASS_PRAGMA_UNROLL
    for (int k = 0; k < cute::size(unique); ++k) {
      int m = m0 + int(cute::get<0>(row_coords(k)));
      unique(k) = positions[m < M ? m : M - 1];
    }
  }
  // The position of fragment element `index` of subtile (epi_m, epi_n).
  CUTLASS_DEVICE int at(int epi_m, int epi_n, int index) {
    return rows(cute::_, cute::_, cute::_, epi_m, epi_n)(index);
  }
};

template <bool ReferenceSrc, class Args>
CUTLASS_DEVICE auto make_row_positions(Args const& args) {
  auto rows = make_row_registers<int, ReferenceSrc>(args);
  auto row_coords = unique_row_coords(rows, args);
  return RowPositions<decltype(rows), decltype(row_coords)>{rows, row_coords};
}

// The frequency of the pair at column n (even), read in bounds: a column past N (a ragged
// tile's edge) reads the last pair's, and its result is never stored.
CUTLASS_DEVICE RopeFrequency frequency_at(const RopeFrequency* frequencies, int n, int N) {
  return frequencies[(n < N ? n : N - 2) / 2];
}

// Branch-free (docs/epilogue.md, "Sharp edges"): every pair computes its rotation, and a V pair
// (f = 0) selects its input.
struct RopePairsNode : RegisterNode<RopePairsArguments> {
  using RegisterNode::RegisterNode;

  template <class Coords, class Positions>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Positions positions, Params const& params)
        : coords(coords), positions(positions), params(params) {}
    Coords coords;
    Positions positions;
    Params const& params;

    CUTLASS_DEVICE void begin() { positions.load(params.positions, coords.m0, coords.M); }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<float, F> visit(cutlass::Array<ElementAcc, F> const&, int epi_v,
                                                  int epi_m, int epi_n,
                                                  cutlass::Array<ElementIn, F> const& x) {
      static_assert(F % 2 == 0, "RopePairs: the fragment must hold whole column pairs");
      cutlass::Array<float, F> y;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; i += 2) {
        const int n = cute::get<1>(coords.template at<F>(epi_v, epi_m, epi_n, i));
        const RopeFrequency f = frequency_at(params.frequencies, n, coords.N);
        float x0 = float(x[i]), x1 = float(x[i + 1]);
        float s, c;
        rope_sincos(positions.at(epi_m, epi_n, epi_v * F + i), f, s, c);
        const bool rotate = f.hi != 0.0f || f.lo != 0.0f;  // V (f = 0): through
        y[i] = rotate ? x0 * c - x1 * s : x0;
        y[i + 1] = rotate ? x0 * s + x1 * c : x1;
      }
      return y;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto coords = fragment_coords(args);
    auto positions = make_row_positions<ReferenceSrc>(args);
    return ConsumerStoreCallbacks<decltype(coords), decltype(positions)>(coords, positions,
                                                                         params);
  }
};

template <class X>
using RopePairs = cutlass::epilogue::fusion::Sm90EVT<RopePairsNode, X>;

}  // namespace coda::epilogue
