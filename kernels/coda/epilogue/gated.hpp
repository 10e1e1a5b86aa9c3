// SPDX-License-Identifier: BSD-3-Clause
// Family 1 + 3, gated pair 2 → 1 with a half-width output:
//   GatedPairStore<Gate, X>   Y[m, j] = Gate(x[m, 2j], x[m, 2j+1]) stored to an M × N/2 bf16
//                             tensor; passes X on unchanged (so D can keep the pre-activation)
//   SiluGate                  silu(g) · u (SwiGLU over gate/up weights interleaved by column)
//   SiluGateGradGate/Up       its backward, as element-wise functors for Map (elementwise.hpp)
// The half-width tile leaves registers by plain global stores, whole 32-byte sectors at a time.
// A fragment holds two rows × 32 columns (node.hpp), i.e. 16 outputs per row, of which quad lane
// c computes outputs c, 4 + c, 8 + c, 12 + c. A 4 × 4 transpose across the quad (three shuffles)
// gives lane c outputs 4c … 4c + 3, so the quad stores its row's 32 bytes with one 8-byte store
// per lane. (Storing each lane's outputs where they fall used a quarter of every sector written:
// ncu counted 75 % excess sectors on the 8B SwiGLU.) Rows and columns beyond (M, N/2) are not
// written; N must be even.
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

namespace detail {

// v[i] for a lane-dependent i, as selects (an indexed register array would go to local memory).
CUTLASS_DEVICE float pick(const float (&v)[4], int i) {
  return i == 0 ? v[0] : i == 1 ? v[1] : i == 2 ? v[2] : v[3];
}

// A 4 × 4 transpose across the quad: quad lane c holds v[g] = T[g][c] and gets w[k] = T[c][k].
// In round t lanes c and c ^ t swap what the other needs: c sends T[c ^ t][c] and receives
// T[c][c ^ t] (r[t]). All 32 lanes take part.
CUTLASS_DEVICE void transpose_quad(const float (&v)[4], float (&w)[4], int c) {
  float r[4];
  r[0] = pick(v, c);
  CUTLASS_PRAGMA_UNROLL
  for (int t = 1; t < 4; ++t) r[t] = shuffle_xor(pick(v, c ^ t), t);
  CUTLASS_PRAGMA_UNROLL
  for (int k = 0; k < 4; ++k) w[k] = pick(r, k ^ c);
}

}  // namespace detail

template <class Gate>
struct GatedPairStoreNode : RegisterNode<GatedPairStoreArguments> {
  using RegisterNode::RegisterNode;
  // With no D (Z not stored), CUTLASS sizes the epilogue's D scratch from the root's ElementAux.
  using ElementAux = cutlass::bfloat16_t;
  using bf16 = cutlass::bfloat16_t;

  template <class Coords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Params const& params)
        : coords(coords),
          params(params),
          // 8-byte stores need every row 8-byte aligned; else each lane stores two 4-byte halves
          // (the contract: 4-byte aligned rows), the same sectors either way.
          rows_8_byte_aligned(
              ((reinterpret_cast<std::uintptr_t>(params.out) | std::uintptr_t(params.stride) * 2) &
               7) == 0) {}
    Coords coords;
    Params const& params;
    bool rows_8_byte_aligned;

    // Outputs j … j + 3 of row m (j a multiple of 4).
    CUTLASS_DEVICE void store_four(int m, int j, const float (&w)[4]) const {
      const int half_n = coords.N / 2;
      if (m >= coords.M || j >= half_n) return;
      bf16* out = params.out + std::int64_t(m) * params.stride + j;
      if (j + 3 < half_n) {
        cutlass::AlignedArray<bf16, 4, 8> q;
        CUTLASS_PRAGMA_UNROLL
        for (int k = 0; k < 4; ++k) q[k] = bf16(w[k]);
        if (rows_8_byte_aligned) {
          *reinterpret_cast<cutlass::AlignedArray<bf16, 4, 8>*>(out) = q;
        } else {
          auto* halves = reinterpret_cast<cutlass::AlignedArray<bf16, 2, 4>*>(out);
          CUTLASS_PRAGMA_UNROLL
          for (int h = 0; h < 2; ++h) {
            cutlass::AlignedArray<bf16, 2, 4> pair;
            pair[0] = q[2 * h];
            pair[1] = q[2 * h + 1];
            halves[h] = pair;
          }
        }
      } else {
        CUTLASS_PRAGMA_UNROLL
        for (int k = 0; k < 4; ++k) {
          if (j + k < half_n) out[k] = bf16(w[k]);
        }
      }
    }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<ElementIn, F> visit(cutlass::Array<ElementAcc, F> const&,
                                                      int epi_v, int epi_m, int epi_n,
                                                      cutlass::Array<ElementIn, F> const& x) {
      static_assert(F % 16 == 0,
                    "GatedPairStore: a fragment must hold whole blocks of two rows x 32 columns");
      const int c = threadIdx.x & 3;  // quad lane: its column pair in each 8-column group
      // Block b: element b + 4g + 2s + e is row slot s (rows r, r + 8), column 8g + 2c + e.
      CUTLASS_PRAGMA_UNROLL
      for (int b = 0; b < F; b += 16) {
        CUTLASS_PRAGMA_UNROLL
        for (int s = 0; s < 2; ++s) {
          float v[4];  // v[g]: output 4g + c of the block's 16 outputs in this row
          CUTLASS_PRAGMA_UNROLL
          for (int g = 0; g < 4; ++g) {
            v[g] = Gate{}(float(x[b + 4 * g + 2 * s]), float(x[b + 4 * g + 2 * s + 1]));
          }
          float w[4];  // w[k]: output 4c + k
          detail::transpose_quad(v, w, c);
          // Element b + 2s sits at column n = (block's first column) + 2c, so this lane's first
          // output is (n - 2c) / 2 + 4c.
          auto [m, n] = coords.template at<F>(epi_v, epi_m, epi_n, b + 2 * s);
          store_four(m, n / 2 + 3 * c, w);
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
