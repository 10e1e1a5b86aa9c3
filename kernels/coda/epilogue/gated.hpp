// SPDX-License-Identifier: BSD-3-Clause
// Family 1 + 3, gated pair 2 → 1 with a half-width output:
//   GatedPairStore<Gate, X>   Y[m, j] = Gate(x[m, 2j], x[m, 2j+1]) stored to an M × N/2 bf16
//                             tensor; passes X on unchanged (so D can keep the pre-activation)
//   SiluGate                  silu(g) · u (SwiGLU over gate/up weights interleaved by column)
//   SiluGateGradGate/Up       its backward, as element-wise functors for Map (elementwise.hpp)
// The half-width tile leaves registers by plain global stores, whole 32-byte sectors at a time.
// A fragment holds two rows × 32 columns (node.hpp), i.e. 16 outputs per row, of which quad lane
// c computes outputs c, 4 + c, 8 + c, 12 + c. A 4 × 4 transpose across the quad (two shuffles of
// packed bf16 words) gives lane c outputs 4c … 4c + 3, so the quad stores its row's 32 bytes with
// one 8-byte store per lane. (Storing each lane's outputs where they fall used a quarter of every
// sector written: ncu counted 75 % excess sectors on the 8B SwiGLU.) A tile wholly inside (M, N)
// stores without per-store checks; elsewhere rows and columns beyond (M, N/2) are not written. N
// must be even.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cuda_bf16.h>

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

// A 4 × 4 transpose of bf16 values across the quad, on packed words. Quad lane c holds outputs
// T[c][g] = output 4g + c (g = 0..3) as v[g]; it returns the words (lo, hi) of outputs 4c … 4c + 3
// (T[0][c], T[1][c], T[2][c], T[3][c]), ready for one 8-byte store. Two shuffles of one 32-bit
// word each: lanes c and c ^ 2 swap the pair of g their partner needs, then lanes c and c ^ 1 swap
// one half of each pair they hold; byte permutes (prmt) with lane-dependent selectors do the rest.
// (The float form, three shuffles and lane-indexed selects, cost ~24 selects a row slot: ncu.)
CUTLASS_DEVICE uint2 transpose_quad_bf16(const float (&v)[4], int c) {
  constexpr std::uint32_t kLows = 0x5410, kHighs = 0x7632;  // prmt: (x.lo, y.lo), (x.hi, y.hi)
  auto pack = [](float lo, float hi) {
    __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&p);
  };
  const std::uint32_t a = pack(v[0], v[1]), b = pack(v[2], v[3]);
  const bool bit0 = c & 1, bit1 = c & 2;
  // Round 1 (lane c ^ 2): lanes 0, 1 keep g = 0, 1 and get them from lanes 2, 3; lanes 2, 3 the
  // same for g = 2, 3. Each now holds g ∈ {c & 2, (c & 2) + 1} of lanes c (keep) and c ^ 2 (got).
  const std::uint32_t keep = bit1 ? b : a;
  const std::uint32_t got = shuffle_xor(bit1 ? a : b, 2);
  // Round 2 (lane c ^ 1): lane c needs g = c, the half c & 1 of each pair; it gives the other half.
  const std::uint32_t mine = __byte_perm(keep, got, bit0 ? kHighs : kLows);  // T[c][c], T[c^2][c]
  const std::uint32_t theirs =
      shuffle_xor(__byte_perm(keep, got, bit0 ? kLows : kHighs), 1);      // T[c^1][c], T[c^3][c]
  // Order by source lane k = 0..3: k = c, c ^ 1, c ^ 2, c ^ 3 sit at mine.lo, theirs.lo, mine.hi,
  // theirs.hi; lane bit 0 swaps neighbours, bit 1 swaps the two words.
  const std::uint32_t x = bit0 ? theirs : mine, y = bit0 ? mine : theirs;
  const std::uint32_t lo = __byte_perm(x, y, bit1 ? kHighs : kLows);
  const std::uint32_t hi = __byte_perm(x, y, bit1 ? kLows : kHighs);
  return make_uint2(lo, hi);
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
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Params const& params, bool tile_interior)
        : coords(coords),
          params(params),
          // 8-byte stores need every row 8-byte aligned; else each lane stores two 4-byte halves
          // (the contract: 4-byte aligned rows), the same sectors either way.
          rows_8_byte_aligned(
              ((reinterpret_cast<std::uintptr_t>(params.out) | std::uintptr_t(params.stride) * 2) &
               7) == 0),
          // Uniform per CTA: the whole tile inside (M, N) with 8-byte rows, so every store is a
          // plain 8-byte one (ncu: the per-store checks and their branches were half of this
          // epilogue's cost over the plain GEMM's in the Cooperative schedule).
          unchecked(tile_interior && rows_8_byte_aligned) {}
    Coords coords;
    Params const& params;
    bool rows_8_byte_aligned;
    bool unchecked;

    // Outputs j … j + 3 of row m (j a multiple of 4), packed as two words of two bf16 each.
    CUTLASS_DEVICE void store_four_checked(int m, int j, uint2 q) const {
      const int half_n = coords.N / 2;
      if (m >= coords.M || j >= half_n) return;
      bf16* out = params.out + std::int64_t(m) * params.stride + j;
      if (j + 3 < half_n) {
        if (rows_8_byte_aligned) {
          *reinterpret_cast<uint2*>(out) = q;
        } else {
          reinterpret_cast<std::uint32_t*>(out)[0] = q.x;
          reinterpret_cast<std::uint32_t*>(out)[1] = q.y;
        }
      } else {
        const bf16* w = reinterpret_cast<const bf16*>(&q);
        CUTLASS_PRAGMA_UNROLL
        for (int k = 0; k < 4; ++k) {
          if (j + k < half_n) out[k] = w[k];
        }
      }
    }

    template <bool kUnchecked, int F, class ElementIn>
    CUTLASS_DEVICE void store_fragment(int epi_v, int epi_m, int epi_n,
                                       cutlass::Array<ElementIn, F> const& x) const {
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
          const uint2 q = detail::transpose_quad_bf16(v, c);  // outputs 4c … 4c + 3
          // Element b + 2s sits at column n = (block's first column) + 2c, so this lane's first
          // output is (n - 2c) / 2 + 4c.
          auto [m, n] = coords.template at<F>(epi_v, epi_m, epi_n, b + 2 * s);
          const int j = n / 2 + 3 * c;
          if constexpr (kUnchecked) {
            *reinterpret_cast<uint2*>(params.out + std::int64_t(m) * params.stride + j) = q;
          } else {
            store_four_checked(m, j, q);
          }
        }
      }
    }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<ElementIn, F> visit(cutlass::Array<ElementAcc, F> const&,
                                                      int epi_v, int epi_m, int epi_n,
                                                      cutlass::Array<ElementIn, F> const& x) {
      static_assert(F % 16 == 0,
                    "GatedPairStore: a fragment must hold whole blocks of two rows x 32 columns");
      if (unchecked)
        store_fragment<true>(epi_v, epi_m, epi_n, x);
      else
        store_fragment<false>(epi_v, epi_m, epi_n, x);
      return x;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto coords = fragment_coords(args);
    return ConsumerStoreCallbacks<decltype(coords)>(coords, params, tile_interior(args));
  }
};

template <class Gate, class X>
using GatedPairStore = cutlass::epilogue::fusion::Sm90EVT<GatedPairStoreNode<Gate>, X>;

}  // namespace coda::epilogue
