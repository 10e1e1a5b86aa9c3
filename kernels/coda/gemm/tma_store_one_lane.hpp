// SPDX-License-Identifier: BSD-3-Clause
// TmaStoreOneLane<Op>: the D copy (smem → gmem) every CODA kernel uses, Op = cute::SM90_TMA_STORE
// or, for programs that accumulate into D (kernel.hpp, Program::kAccumulateIntoD),
// cute::SM90_TMA_REDUCE_ADD. Device-side (CuTe).
//
// Why: CUTLASS's epilogue issues the D copy from every lane of warp 0
// (`if (issue_tma_store) copy(...)`), i.e. 32 bulk copies of each subtile. For a store they write
// the same bytes 32 times; for a reduce-add each one adds, so D received 32 × the tile (measured
// on the GPU). This op issues the same TMA instruction from one elected lane; the other lanes'
// bulk groups are empty, so the collective's commit/wait sequence is unchanged.
#pragma once

#include <cute/arch/cluster_sm90.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>

namespace coda::gemm::detail {

template <class Op>
struct TmaStoreOneLane : Op {};

}  // namespace coda::gemm::detail

namespace cute {

// The interface make_tma_copy and the epilogue expect of a TMA store's traits: an aggregate
// {descriptor, aux params}, the descriptor and coordinate-tensor accessors, and copy_unpack.
template <class Op, class NumBitsPerTMA, class AuxParams_>
struct Copy_Traits<coda::gemm::detail::TmaStoreOneLane<Op>, NumBitsPerTMA, AuxParams_> {
  using ThrID = Layout<_1>;
  using SrcLayout = Layout<Shape<_1, NumBitsPerTMA>>;
  using DstLayout = Layout<Shape<_1, NumBitsPerTMA>>;
  using RefLayout = SrcLayout;

  TmaDescriptor tma_desc_;
  using AuxParams = AuxParams_;
  AuxParams aux_params_;

  CUTE_HOST_DEVICE constexpr TmaDescriptor const* get_tma_descriptor() const { return &tma_desc_; }

  template <class GShape>
  CUTE_HOST_DEVICE constexpr auto get_tma_tensor(GShape const& g_shape) const {
    return make_coord_tensor(make_layout(g_shape, aux_params_.g_stride_));
  }

  template <class Coord, int... Is>
  CUTE_HOST_DEVICE void issue(void const* smem, Coord const& gmem_coord, seq<Is...>) const {
#if defined(__CUDA_ARCH__)
    if (cute::elect_one_sync()) Op::copy(&tma_desc_, smem, get<Is>(gmem_coord)...);
#endif
  }

  template <class TS, class SLayout, class TD, class DLayout>
  CUTE_HOST_DEVICE friend constexpr void copy_unpack(Copy_Traits const& traits,
                                                     Tensor<TS, SLayout> const& src,
                                                     Tensor<TD, DLayout>& dst) {
    static_assert(is_smem<TS>::value, "TmaStoreOneLane: the source must be shared memory");
    traits.issue(raw_pointer_cast(src.data()), dst.data().coord_,
                 tuple_seq<decltype(dst.data().coord_)>{});
  }
};

}  // namespace cute
