// SPDX-License-Identifier: BSD-3-Clause
// Family 3, tiles: an extra M×N input or output aligned element by element with the accumulator,
// moved by TMA through shared memory in step with the epilogue's subtiles.
//   TileLoad<Ctx, E>            T[m, n] (a residual, a saved activation); row-major, 16-byte strides
//   TileStore<Ctx, E, X>        stores X to an extra M×N output and passes X on unchanged
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

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

// The bare store node (for DAGs, composition.hpp); TileStore is it applied to a child.
template <class Ctx, class Element>
using TileStoreNode = cutlass::epilogue::fusion::Sm90AuxStore<
    TileStoreDescriptor<Ctx, Element>::Stages, typename Ctx::EpilogueTile, Element,
    cutlass::FloatRoundStyle::round_to_nearest, RowMajorStride,
    typename TileStoreDescriptor<Ctx, Element>::SmemLayoutAtom,
    typename TileStoreDescriptor<Ctx, Element>::CopyOpR2S>;

template <class Ctx, class Element, class Child>
using TileStore = cutlass::epilogue::fusion::Sm90EVT<TileStoreNode<Ctx, Element>, Child>;

inline RowMajorStride row_major_stride(std::int64_t row_stride) {
  return cute::make_stride(row_stride, cute::_1{}, std::int64_t(0));
}

}  // namespace coda::epilogue
