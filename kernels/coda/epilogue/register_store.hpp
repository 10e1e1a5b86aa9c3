// SPDX-License-Identifier: BSD-3-Clause
// Family 3, an extra full-width output stored from registers (device-side, CUTLASS):
//   RegisterTileStore<X>   stores X to an M × N bf16 tensor by plain global stores and passes X
//                          on unchanged (the QK-norm's pre-norm input, beside D)
// TileStore (tile.hpp) does the same through a shared-memory buffer and TMA; this node has no
// buffer. The QK-norm's whole-head subtile makes that buffer 64 x 128 bf16 (16 KB): in the
// overlapped Cooperative kernel, whose handoff leaves the epilogue ~19 KB, it costs the mainloop
// a stage (5 of 24 KB instead of 6; that kernel ran 1.14 x its plain twin's cycles, 44th
// session), and in Pingpong each subtile's store waits on its round trip through shared memory.
// Measured on an H100 against the TMA store (46th session, Pingpong 128 x 128, the save-Pre
// programs): head_dim 128 (Qwen3, OLMo-2: every QK-norm model of theirs) 0.965-0.989 x, head_dim
// 64 (only the benchmark's 1B-width rows) 1.02-1.07 x. The stores bypass L1 (no_allocate): with
// six mainloop stages in shared memory little L1 is left, and allocating there they evicted the
// RoPE frequencies and γ that the head_dim-64 rewrite reads next (1.12-1.15 x before).
// Stores fill whole 32-byte sectors: a fragment holds two rows × 32 columns per 16 elements
// (node.hpp), quad lane c holding the 4-byte column pair 2c of each 8-column group g. Lanes c and
// c ^ 1 swap one word per pair of groups (one shuffle), so the even lane holds columns 2c … 2c + 3
// of the even group and the odd lane the same of the odd group: one 8-byte store a lane writes a
// row's two groups, 32 bytes. (The first version, a 4 × 4 transpose across the quad for 16-byte
// stores, took twice the shuffles and selects per value and measured the same: 45th session.) A
// tile wholly inside (M, N) with 8-byte rows stores unchecked; elsewhere nothing beyond (M, N) is
// written.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cuda_bf16.h>

#include <cutlass/array.h>
#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/node.hpp"

namespace coda::epilogue {

struct RegisterTileStoreArguments {
  cutlass::bfloat16_t* out = nullptr;  // [M, N], 2-byte aligned rows
  std::int64_t stride = 0;             // row stride in elements
};

namespace detail {

// An 8-byte global store that does not allocate in L1. With the mainloop's stages in shared
// memory the L1 left is small, and the Pre stores (16 KB a subtile) allocating there evicted the
// RoPE frequencies and γ the rewrite reads next (46th session: those loads' waits were 18 % of the
// head_dim-64 kernel's stall samples with the stores, 5 % without).
CUTLASS_DEVICE void store_no_l1_allocate(void* address, uint2 words) {
  asm volatile("st.global.L1::no_allocate.v2.b32 [%0], {%1, %2};" ::"l"(address), "r"(words.x),
               "r"(words.y)
               : "memory");
}

CUTLASS_DEVICE std::uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&p);
}

// Lane c's words of groups 2p (even) and 2p + 1 (odd) → the 8 bytes it stores: its own word and
// lane c ^ 1's of the even group (even lanes), or lane c ^ 1's and its own of the odd group.
CUTLASS_DEVICE uint2 pair_across_lanes(std::uint32_t even, std::uint32_t odd, bool odd_lane) {
  const std::uint32_t keep = odd_lane ? odd : even;
  const std::uint32_t got = shuffle_xor(odd_lane ? even : odd, 1);
  return odd_lane ? make_uint2(got, keep) : make_uint2(keep, got);
}

}  // namespace detail

struct RegisterTileStoreNode : RegisterNode<RegisterTileStoreArguments> {
  using RegisterNode::RegisterNode;
  using bf16 = cutlass::bfloat16_t;

  template <class Coords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Params const& params, bool tile_interior)
        : coords(coords),
          params(params),
          rows_8_byte_aligned(
              ((reinterpret_cast<std::uintptr_t>(params.out) | std::uintptr_t(params.stride) * 2) &
               7) == 0),
          // Uniform per CTA: every store of the tile a plain 8-byte one.
          unchecked(tile_interior && rows_8_byte_aligned) {}
    Coords coords;
    Params const& params;
    bool rows_8_byte_aligned;
    bool unchecked;

    // Columns n … n + 3 of row m (n even), as two words.
    CUTLASS_DEVICE void store_pair_checked(int m, int n, uint2 words) const {
      if (m >= coords.M || n >= coords.N) return;
      bf16* out = params.out + std::int64_t(m) * params.stride + n;
      if (n + 3 < coords.N && rows_8_byte_aligned) {
        detail::store_no_l1_allocate(out, words);
      } else {
        const bf16* v = reinterpret_cast<const bf16*>(&words);
        CUTLASS_PRAGMA_UNROLL
        for (int k = 0; k < 4; ++k) {
          if (n + k < coords.N) out[k] = v[k];
        }
      }
    }

    template <bool kUnchecked, int F, class ElementIn>
    CUTLASS_DEVICE void store_fragment(int epi_v, int epi_m, int epi_n,
                                       cutlass::Array<ElementIn, F> const& x) const {
      const bool odd_lane = threadIdx.x & 1;
      // Block b: element b + 4g + 2s + e is row slot s (rows r, r + 8), column 8g + 2c + e.
      CUTLASS_PRAGMA_UNROLL
      for (int b = 0; b < F; b += 16) {
        CUTLASS_PRAGMA_UNROLL
        for (int s = 0; s < 2; ++s) {
          // Element b + 2s sits at column n = (block's first) + 2c; this lane stores columns
          // n + 16p … n + 16p + 3 (even lane) or n + 16p + 6 … n + 16p + 9 (odd lane).
          auto [m, n] = coords.template at<F>(epi_v, epi_m, epi_n, b + 2 * s);
          CUTLASS_PRAGMA_UNROLL
          for (int p = 0; p < 2; ++p) {
            const int g = 2 * p;
            const uint2 words = detail::pair_across_lanes(
                detail::pack_bf16x2(float(x[b + 4 * g + 2 * s]), float(x[b + 4 * g + 2 * s + 1])),
                detail::pack_bf16x2(float(x[b + 4 * g + 4 + 2 * s]), float(x[b + 4 * g + 4 + 2 * s + 1])),
                odd_lane);
            const int column = n + 16 * p + (odd_lane ? 6 : 0);
            if constexpr (kUnchecked) {
              detail::store_no_l1_allocate(params.out + std::int64_t(m) * params.stride + column, words);
            } else {
              store_pair_checked(m, column, words);
            }
          }
        }
      }
    }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<ElementIn, F> visit(cutlass::Array<ElementAcc, F> const&,
                                                      int epi_v, int epi_m, int epi_n,
                                                      cutlass::Array<ElementIn, F> const& x) {
      static_assert(F % 16 == 0,
                    "RegisterTileStore: a fragment must hold whole blocks of two rows x 32 columns");
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

template <class X>
using RegisterTileStore = cutlass::epilogue::fusion::Sm90EVT<RegisterTileStoreNode, X>;

}  // namespace coda::epilogue
