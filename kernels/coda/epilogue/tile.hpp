// SPDX-License-Identifier: BSD-3-Clause
// Family 3, tiles: an extra M×N input or output aligned element by element with the accumulator,
// moved by TMA through shared memory in step with the epilogue's subtiles.
//   TileLoad<Ctx, E>            T[m, n] (a residual, a saved activation); row-major, 16-byte strides
//   TileStore<Ctx, E, X>        stores X to an extra M×N output and passes X on unchanged
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cute/arch/cluster_sm90.hpp>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/sm90_visitor_load_tma_warpspecialized.hpp>
#include <cutlass/epilogue/fusion/sm90_visitor_store_tma_warpspecialized.hpp>
#include <cutlass/layout/matrix.h>

namespace coda::epilogue {

using RowMajorStride = cute::Stride<std::int64_t, cute::_1, std::int64_t>;

template <class Ctx, class Element>
using TileLoadDescriptor = cutlass::epilogue::collective::detail::AuxLoadDescriptor<
    typename Ctx::Descriptor, cutlass::layout::RowMajor, Element>;
template <class Ctx, class Element>
using TileStoreDescriptor = cutlass::epilogue::collective::detail::AuxStoreDescriptor<
    typename Ctx::Descriptor, cutlass::layout::RowMajor, Element>;

template <class Ctx, class Element>
using TileLoad = cutlass::epilogue::fusion::Sm90AuxLoad<
    TileLoadDescriptor<Ctx, Element>::Stages, typename Ctx::EpilogueTile, Element, RowMajorStride,
    typename TileLoadDescriptor<Ctx, Element>::SmemLayoutAtom,
    typename TileLoadDescriptor<Ctx, Element>::CopyOpS2R>;

template <class Ctx, class Element>
using CutlassTileStore = cutlass::epilogue::fusion::Sm90AuxStore<
    TileStoreDescriptor<Ctx, Element>::Stages, typename Ctx::EpilogueTile, Element,
    cutlass::FloatRoundStyle::round_to_nearest, RowMajorStride,
    typename TileStoreDescriptor<Ctx, Element>::SmemLayoutAtom,
    typename TileStoreDescriptor<Ctx, Element>::CopyOpR2S>;

// The bare store node (for DAGs, composition.hpp); TileStore is it applied to a child.
// CUTLASS's collective calls every node's tma_store with issue_tma_store true on all 32 lanes of
// warp 0, and Sm90AuxStore issues its bulk copy from each lane that is told to: 32 copies of every
// subtile. This node passes the flag on to one elected lane, as gemm/tma_store_one_lane.hpp does
// for the D copy. The duplicates cost no time an H100 showed (bench/RESULTS.md, thirty-seventh
// session: L2 absorbs them), so this is for meaning what the program says: one copy. The
// collective's commits and waits stay on all of warp 0's lanes; the others' bulk groups are empty.
template <class Ctx, class Element>
struct TileStoreNode : CutlassTileStore<Ctx, Element> {
  using Base = CutlassTileStore<Ctx, Element>;
  using Base::Base;

  template <class Callbacks>
  struct OneLaneCallbacks : Callbacks {
    CUTLASS_DEVICE explicit OneLaneCallbacks(Callbacks&& callbacks)
        : Callbacks(cute::move(callbacks)) {}

    // Called by every thread of the epilogue warp group, converged (after the collective's
    // named-barrier sync), so the election is well defined.
    CUTLASS_DEVICE void tma_store(int epi_m, int epi_n, int store_iteration, bool issue_tma_store) {
      bool const elected = cute::elect_one_sync();
      Callbacks::tma_store(epi_m, epi_n, store_iteration, issue_tma_store && elected);
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::ConsumerStoreArgs<Args...> const& args) {
    auto callbacks = Base::template get_consumer_store_callbacks<ReferenceSrc>(args);
    return OneLaneCallbacks<decltype(callbacks)>(cute::move(callbacks));
  }
};

template <class Ctx, class Element, class Child>
using TileStore = cutlass::epilogue::fusion::Sm90EVT<TileStoreNode<Ctx, Element>, Child>;

inline RowMajorStride row_major_stride(std::int64_t row_stride) {
  return cute::make_stride(row_stride, cute::_1{}, std::int64_t(0));
}

}  // namespace coda::epilogue
