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

struct RopePairsNode : RegisterNode<RopePairsArguments> {
  using RegisterNode::RegisterNode;

  template <class Coords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Params const& params)
        : coords(coords), params(params) {}
    Coords coords;
    Params const& params;

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<float, F> visit(cutlass::Array<ElementAcc, F> const&, int epi_v,
                                                  int epi_m, int epi_n,
                                                  cutlass::Array<ElementIn, F> const& x) {
      static_assert(F % 2 == 0, "RopePairs: the fragment must hold whole column pairs");
      cutlass::Array<float, F> y;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; i += 2) {
        auto [m, n] = coords.template at<F>(epi_v, epi_m, epi_n, i);
        const RopeFrequency f =
            m < coords.M && n < coords.N ? params.frequencies[n / 2] : RopeFrequency{};
        float x0 = float(x[i]), x1 = float(x[i + 1]);
        y[i] = x0;  // V (f = 0) and elements outside (M, N): through
        y[i + 1] = x1;
        if (f.hi != 0.0f || f.lo != 0.0f) {
          float s, c;
          rope_sincos(params.positions[m], f, s, c);
          y[i] = x0 * c - x1 * s;
          y[i + 1] = x0 * s + x1 * c;
        }
      }
      return y;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto coords = fragment_coords(args);
    return ConsumerStoreCallbacks<decltype(coords)>(coords, params);
  }
};

template <class X>
using RopePairs = cutlass::epilogue::fusion::Sm90EVT<RopePairsNode, X>;

}  // namespace coda::epilogue
