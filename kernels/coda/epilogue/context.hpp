// SPDX-License-Identifier: BSD-3-Clause
// EpilogueContext: what an epilogue program may know about the kernel it runs in (device-side).
#pragma once

#include <type_traits>

#include <cutlass/epilogue/collective/collective_builder.hpp>

namespace coda::epilogue {

// The builder's descriptor with the epilogue's stage counts replaced (0 keeps the builder's):
// StagesC, the load pipeline's depth, which CUTLASS's AuxLoadDescriptor reads for a tile load, and
// StagesD, the store buffers, which AuxStoreDescriptor reads for a tile store. gemm::GemmKernel
// gives the collective's dispatch policy the same counts (a tile node with fewer stages than the
// pipeline would have its buffers overwritten while still live).
template <class Base, int StagesC_, int StagesD_>
struct DescriptorWithStages : Base {
  static constexpr int StagesC = StagesC_ == 0 ? Base::StagesC : StagesC_;
  static constexpr int StagesD = StagesD_ == 0 ? Base::StagesD : StagesD_;
  using DispatchPolicy = cutlass::epilogue::Sm90TmaWarpSpecialized<
      StagesC, StagesD, Base::DispatchPolicy::FragmentSize, Base::DispatchPolicy::ReuseSmemC,
      Base::DispatchPolicy::DelayTmaStore>;
};

// Handed by gemm::GemmKernel to Program::Callbacks<Ctx>. Primitives that own shared memory or TMA
// descriptors (tile loads and stores) take their stage counts and smem layouts from `Descriptor`,
// exactly as CUTLASS's own builder does for its fused epilogues. LoadStages_ and StoreStages_
// override the builder's counts when > 0 (gemm/kernel.hpp chooses them).
template <class TileShape_, class EpilogueTile_, class ElementD_, class EpilogueSchedule_,
          int LoadStages_ = 0, int StoreStages_ = 0>
struct EpilogueContext {
  using TileShape = TileShape_;        // CTA tile (M, N, K)
  using EpilogueTile = EpilogueTile_;  // subtile visited per step (EPI_M, EPI_N)
  using ElementD = ElementD_;
  using Schedule = EpilogueSchedule_;
  using BuilderDescriptor = cutlass::epilogue::collective::detail::EpilogueDescriptor<
      TileShape, EpilogueTile, void, ElementD, Schedule>;
  using Descriptor = std::conditional_t<
      LoadStages_ == 0 && StoreStages_ == 0, BuilderDescriptor,
      DescriptorWithStages<BuilderDescriptor, LoadStages_, StoreStages_>>;
};

}  // namespace coda::epilogue
