// SPDX-License-Identifier: BSD-3-Clause
// Family 4, the per-column partial sum (∂b of a bias, ∂w of an RMSNorm weight):
//   ColumnPartialSumNode<Ctx>   partial[t, n] = Σ_{m in M-tile t} X[m, n]   (passes X on)
// in the layout of partial_reduction.hpp (float [ceil(M / tile_M)][round_up(N, tile_N)]).
//
// Why not CUTLASS's Sm90RowReduction: it keeps every column of the CTA tile a thread touches in
// registers until the tile's last subtile (32 floats a thread under Pingpong 128 × 128, 64 under
// Cooperative 128 × 256), and under Pingpong ptxas puts them in a 496–1088 B local-memory frame
// (docs/design.md §10). This node holds one subtile's columns (8 floats a thread at 32 columns):
// `visit` adds the thread's rows into them; `reduce`, after each subtile, sums them over the 8
// lanes that hold the same columns (a reduce-scatter: 7 shuffles, one column a lane) and adds the
// result into the lane's per-tile sums (one float per subtile column block: all indices static,
// no local memory); after the tile's last subtile the warps' sums meet in that subtile's store
// buffer (free until the subtile is copied into it, as CUTLASS's reductions use it), and the
// epilogue's threads add them in a fixed order and store the tile's row of partials. No shared
// memory of its own, so no mainloop stage lost. Deterministic: no atomics, a fixed order.
// Elements outside (M, N) count as 0.
// Its cost is the lane reduction after every subtile, where CUTLASS's reduces once a tile: hidden
// under Pingpong, where the other warp group's mainloop runs beside the epilogue, but not under
// Cooperative, where it made the ops 5-12 % slower — and where CUTLASS's registers need no local
// memory. So programs get it under Pingpong only (partial_reduction.hpp).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/array.h>

#include "coda/epilogue/node.hpp"

namespace coda::epilogue {

struct ColumnPartialsArguments {
  float* partials = nullptr;  // ceil(M / tile_M) × round_up(N, tile_N) floats
};

template <class Ctx>
struct ColumnPartialSumNode : RegisterNode<ColumnPartialsArguments> {
  static constexpr int kTileN = cute::size<1>(typename Ctx::TileShape{});
  static constexpr int kEpiN = cute::size<1>(typename Ctx::EpilogueTile{});
  static constexpr int kSubtilesN = kTileN / kEpiN;
  // The warps that share one tile's epilogue: two warp groups under Cooperative, one under
  // Pingpong.
  static constexpr int kWarps = Ctx::kCooperative ? 8 : 4;
  static_assert(kTileN % kEpiN == 0 && kEpiN % 4 == 0, "ColumnPartialSum: unexpected subtile");
  using RegisterNode::RegisterNode;

  template <class Coords, class Columns, class ColumnCoords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, Columns columns,
                                          ColumnCoords column_coords, int tile_m, int tile_n0,
                                          bool has_work, bool check_bounds, int warp,
                                          int thread_idx, Params const& params)
        : coords(coords), columns(columns), column_coords(column_coords), tile_m(tile_m),
          tile_n0(tile_n0), has_work(has_work), check_bounds(check_bounds), warp(warp),
          thread_idx(thread_idx), params(params) {}
    Coords coords;
    Columns columns;             // this subtile's column sums, stride 0 along M
    ColumnCoords column_coords;  // (EPI_M, EPI_N)-indexed coordinates of the thread's columns
    int tile_m, tile_n0;         // the tile's M index and first column
    bool has_work, check_bounds;
    int warp, thread_idx;
    Params const& params;

    // After the lane reduction a lane keeps kKept columns of each subtile column block; their
    // sums over the warp's rows of the whole tile, by (block, column).
    static constexpr int kColumns = decltype(cute::size(cute::filter_zeros(Columns{})))::value;
    static constexpr int kKept = kColumns >= 8 ? kColumns / 8 : 1;
    float kept[kSubtilesN][kKept];
    int slot = 0;         // which of a subtile's kColumns columns kept[.][0] sums
    bool writer = true;   // the one lane per column that stores it

    CUTLASS_DEVICE void begin() {
      cute::fill(columns, 0.0f);
      CUTLASS_PRAGMA_UNROLL
      for (int b = 0; b < kSubtilesN; ++b) {
        CUTLASS_PRAGMA_UNROLL
        for (int r = 0; r < kKept; ++r) kept[b][r] = 0.0f;
      }
    }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<ElementIn, F> visit(cutlass::Array<ElementAcc, F> const&,
                                                      int epi_v, int epi_m, int epi_n,
                                                      cutlass::Array<ElementIn, F> const& x) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; ++i) {
        const bool outside = check_bounds && !coords.template in_bounds<F>(epi_v, epi_m, epi_n, i);
        columns(epi_v * F + i) += outside ? 0.0f : float(x[i]);
      }
      return x;
    }

    template <class STensor, class SyncFn, class VTensor>
    CUTLASS_DEVICE void reduce(STensor&& smem_buffer, SyncFn const& sync_fn, int epi_m, int epi_n,
                               bool is_last_iteration, VTensor) {
      if (!has_work) return;  // uniform over the CTA
      auto unique = cute::filter_zeros(columns);
      constexpr int C = kColumns;
      static_assert((C & (C - 1)) == 0, "ColumnPartialSum: a power-of-two columns a thread");
      float a[C];
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < C; ++k) a[k] = unique(k);
      cute::fill(columns, 0.0f);

      // Lanes 4 apart hold the same columns of other rows (node.hpp). Each step halves the
      // columns a lane keeps: it sends the half its partner keeps and adds what it receives.
      // Once one is left, the remaining steps add without splitting.
      const int lane = cutlass::canonical_lane_idx();
      slot = 0;
      writer = true;
      CUTLASS_PRAGMA_UNROLL
      for (int step = 0; step < 3; ++step) {
        const int mask = 16 >> step;
        const bool upper = (lane & mask) != 0;
        const int half = C >> (step + 1);
        if (half >= 1) {
          CUTLASS_PRAGMA_UNROLL
          for (int k = 0; k < (C >> 1); ++k) {
            if (k < half) {
              const float send = upper ? a[k] : a[k + half];
              const float keep = upper ? a[k + half] : a[k];
              a[k] = keep + shuffle_xor(send, mask);
            }
          }
          slot += upper ? half : 0;
        } else {
          a[0] += shuffle_xor(a[0], mask);
          writer = writer && !upper;
        }
      }
      CUTLASS_PRAGMA_UNROLL
      for (int r = 0; r < kKept; ++r) kept[epi_n][r] += a[r];
      if (!is_last_iteration) return;

      // The warps' sums meet in the subtile's store buffer, free until this subtile is copied
      // into it (as CUTLASS's reductions use it): one row of tile columns a warp, or, where the
      // buffer holds fewer rows (a 64 x 16 bf16 subtile beside a 192-column tile), in rounds:
      // warp w adds into row w % kRows in round w / kRows (a fixed order).
      float* sums = reinterpret_cast<float*>(cute::raw_pointer_cast(smem_buffer.data()));
      constexpr int kBufferFloats =
          int(sizeof(typename cute::remove_cvref_t<STensor>::value_type) *
              decltype(cute::cosize(smem_buffer.layout()))::value / sizeof(float));
      constexpr int kRows = kBufferFloats / kTileN < kWarps ? kBufferFloats / kTileN : kWarps;
      static_assert(kRows >= 1 && kWarps % kRows == 0,
                    "ColumnPartialSum: the warps' sums do not fit the store buffer");
      sync_fn();  // the buffer's last TMA store has read it
      CUTLASS_PRAGMA_UNROLL
      for (int round = 0; round < kWarps / kRows; ++round) {
        if (writer && warp / kRows == round) {
          CUTLASS_PRAGMA_UNROLL
          for (int b = 0; b < kSubtilesN; ++b) {
            // Columns do not change with epi_m (stride 0 along M; that mode is size 1 here).
            auto coords_b = column_coords(cute::_, cute::_, cute::_, 0, b);
            CUTLASS_PRAGMA_UNROLL
            for (int r = 0; r < kKept; ++r) {
              const int n = coords.n0 + int(cute::get<1>(coords_b(slot + r))) - tile_n0;
              float& row = sums[(warp % kRows) * kTileN + n];
              row = round == 0 ? kept[b][r] : row + kept[b][r];
            }
          }
        }
        sync_fn();  // this round's sums are in
      }
      const std::int64_t padded = std::int64_t(coords.N + kTileN - 1) / kTileN * kTileN;
      for (int n = thread_idx; n < kTileN; n += kWarps * 32) {
        float total = 0.0f;
        CUTLASS_PRAGMA_UNROLL
        for (int w = 0; w < kRows; ++w) total += sums[w * kTileN + n];
        params.partials[tile_m * padded + tile_n0 + n] = total;
      }
      sync_fn();  // read before this subtile is copied into the buffer
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    using namespace cute;
    // Registers shaped like one subtile of the thread's partition, stride 0 along M: element i
    // of any fragment aliases its column's register.
    auto tCgColumns =
        partition_of_vector<float, ReferenceSrc>(args, make_stride(_0{}, _1{}, _0{}));
    Tensor columns = make_tensor_like<float>(tCgColumns(_, _, _, 0, 0));
    // The coordinates of the compact columns, per subtile (relative to the thread's first
    // element, like tCcD).
    auto column_coords = filter_zeros(args.tCcD, tCgColumns.stride());
    auto coords = fragment_coords(args);
    const int tile_m = int(get<0>(args.tile_coord_mnkl));
    const int tile_n0 = int(get<1>(args.tile_coord_mnkl)) * kTileN;
    return ConsumerStoreCallbacks<decltype(coords), decltype(columns), decltype(column_coords)>(
        coords, columns, column_coords, tile_m, tile_n0, tile_in_bounds(args),
        !tile_interior(args), args.thread_idx / 32, args.thread_idx, params);
  }
};

template <class Ctx, class Child>
using ColumnPartialSum = cutlass::epilogue::fusion::Sm90EVT<ColumnPartialSumNode<Ctx>, Child>;

}  // namespace coda::epilogue
