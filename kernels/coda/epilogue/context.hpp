// SPDX-License-Identifier: BSD-3-Clause
// EpilogueContext: what an epilogue program may know about the kernel it runs in (device-side).
#pragma once

#include <type_traits>

#include <cutlass/epilogue/collective/collective_builder.hpp>

namespace coda::epilogue {

// The builder's descriptor with the epilogue's load-pipeline depth (StagesC) and store-buffer
// count (StagesD) replaced: what CUTLASS's AuxLoadDescriptor and AuxStoreDescriptor read for a
// tile load's and a tile store's stage counts. gemm::GemmKernel gives the collective's dispatch
// policy the same counts (a load node with fewer stages than the pipeline would have its buffers
// overwritten while still live).
template <class Base, int StagesC_, int StagesD_>
struct DescriptorWithStages : Base {
  static constexpr int StagesC = StagesC_;
  static constexpr int StagesD = StagesD_;
  using DispatchPolicy = cutlass::epilogue::Sm90TmaWarpSpecialized<
      StagesC_, StagesD_, Base::DispatchPolicy::FragmentSize, Base::DispatchPolicy::ReuseSmemC,
      Base::DispatchPolicy::DelayTmaStore>;
};

// Handed by gemm::GemmKernel to Program::Callbacks<Ctx>. Primitives that own shared memory or TMA
// descriptors (tile loads and stores) take their stage counts and smem layouts from `Descriptor`,
// exactly as CUTLASS's own builder does for its fused epilogues. LoadStages_ > 0 and
// StoreStages_ > 0 override the load and store stages (gemm/kernel.hpp says when).
template <class TileShape_, class EpilogueTile_, class ElementD_, class EpilogueSchedule_,
          int LoadStages_ = 0, int StoreStages_ = 0>
struct EpilogueContext {
  using TileShape = TileShape_;        // CTA tile (M, N, K)
  using EpilogueTile = EpilogueTile_;  // subtile visited per step (EPI_M, EPI_N)
  using ElementD = ElementD_;
  using Schedule = EpilogueSchedule_;
  // Two warp groups share each tile's epilogue (Cooperative), or one warp group owns a tile and the
  // two take turns (Pingpong; their epilogues run one after the other).
  static constexpr bool kCooperative =
      std::is_base_of_v<cutlass::epilogue::TmaWarpSpecializedCooperative, Schedule>;
  using BuilderDescriptor = cutlass::epilogue::collective::detail::EpilogueDescriptor<
      TileShape, EpilogueTile, void, ElementD, Schedule>;
  using Descriptor = std::conditional_t<
      LoadStages_ == 0 && StoreStages_ == 0, BuilderDescriptor,
      DescriptorWithStages<BuilderDescriptor,
                           LoadStages_ == 0 ? BuilderDescriptor::StagesC : LoadStages_,
                           StoreStages_ == 0 ? BuilderDescriptor::StagesD : StoreStages_>>;
};

}  // namespace coda::epilogue
