// SPDX-License-Identifier: BSD-3-Clause
// Family 1 + 3, gated pair 2 → 1 with a half-width output:
//   GatedPairStore<Gate, X>   Y[m, j] = Gate(x[m, 2j], x[m, 2j+1]) stored to an M × N/2 bf16
//                             tensor; passes X on unchanged (so D can keep the pre-activation)
//   SiluGate                  silu(g) · u (SwiGLU over gate/up weights interleaved by column)
//   SiluGateGradGate/Up       its backward, as element-wise functors for Map (elementwise.hpp)
// The half-width tile leaves registers by plain global stores: lanes l and l ^ 1 hold the two
// neighbouring outputs of a row (node.hpp), so one shuffle turns two 2-byte stores into one
// 4-byte store. Rows and columns beyond (M, N/2) are not written; N must be even.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cutlass/array.h>
#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/fast_math.hpp"
#include "coda/epilogue/node.hpp"

namespace coda::epilogue {

struct SiluGate {
  CUTLASS_DEVICE float operator()(float g, float u) const { return fast_silu(g) * u; }
};

// Its backward, element-wise (for Map): with y = silu(g)·u and upstream dy,
//   ∂g = dy · u · σ(g) · (1 + g · (1 − σ(g))),   ∂u = dy · silu(g)
struct SiluGateGradGate {
  CUTLASS_DEVICE float operator()(float dy, float g, float u) const {
    float s = fast_sigmoid(g);
    return dy * u * s * (1.0f + g * (1.0f - s));
  }
};
struct SiluGateGradUp {
  CUTLASS_DEVICE float operator()(float dy, float g, float) const { return dy * fast_silu(g); }
};
// One pair's share of ⟨z, dz⟩: g·∂g + u·∂u.
struct PairDot {
  CUTLASS_DEVICE float operator()(float g, float u, float dg, float du) const {
    return g * dg + u * du;
  }
};

struct GatedPairStoreArguments {
  cutlass::bfloat16_t* out = nullptr;  // Y: [M, N/2], 4-byte aligned rows
  std::int64_t stride = 0;             // row stride of Y in elements (even)
};

template <class Gate>
struct GatedPairStoreNode : RegisterNode<GatedPairStoreArguments> {
  using RegisterNode::RegisterNode;
  // With no D (Z not stored), CUTLASS sizes the epilogue's D scratch from the root's ElementAux.
  using ElementAux = cutlass::bfloat16_t;

  template <class Coords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Params const& params)
        : coords(coords), params(params) {}
    Coords coords;
    Params const& params;

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<ElementIn, F> visit(cutlass::Array<ElementAcc, F> const&,
                                                      int epi_v, int epi_m, int epi_n,
                                                      cutlass::Array<ElementIn, F> const& x) {
      static_assert(F % 4 == 0, "GatedPairStore: the fragment must hold two rows of column pairs");
      const bool even_lane = (threadIdx.x & 1) == 0;
      const int half_n = coords.N / 2;
      // Pairs p and p + 1 of a fragment share columns and differ in row. The even lane stores
      // row(p) and takes its neighbour's value of that row; the odd lane stores row(p + 1).
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; i += 4) {
        float y0 = Gate{}(float(x[i]), float(x[i + 1]));
        float y1 = Gate{}(float(x[i + 2]), float(x[i + 3]));
        float theirs = shuffle_xor(even_lane ? y1 : y0, 1);
        auto [m, n] = coords.template at<F>(epi_v, epi_m, epi_n, even_lane ? i : i + 2);
        int j = n / 2 - (even_lane ? 0 : 1);  // first of the two outputs this lane stores
        cutlass::bfloat16_t lo(even_lane ? y0 : theirs), hi(even_lane ? theirs : y1);
        if (m < coords.M && j < half_n) {
          cutlass::bfloat16_t* row = params.out + std::int64_t(m) * params.stride;
          if (j + 1 < half_n) {
            cutlass::Array<cutlass::bfloat16_t, 2> both;
            both[0] = lo;
            both[1] = hi;
            *reinterpret_cast<cutlass::Array<cutlass::bfloat16_t, 2>*>(row + j) = both;
          } else {
            row[j] = lo;
          }
        }
      }
      return x;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto coords = fragment_coords(args);
    return ConsumerStoreCallbacks<decltype(coords)>(coords, params);
  }
};

template <class Gate, class X>
using GatedPairStore = cutlass::epilogue::fusion::Sm90EVT<GatedPairStoreNode<Gate>, X>;

}  // namespace coda::epilogue
