// SPDX-License-Identifier: BSD-3-Clause
// EpilogueContext: what an epilogue program may know about the kernel it runs in (device-side).
#pragma once

#include <cutlass/epilogue/collective/collective_builder.hpp>

namespace coda::epilogue {

// Handed by gemm::GemmKernel to Program::Callbacks<Ctx>. Primitives that own shared memory or TMA
// descriptors (tile loads and stores) take their stage counts and smem layouts from `Descriptor`,
// exactly as CUTLASS's own builder does for its fused epilogues.
template <class TileShape_, class EpilogueTile_, class ElementD_, class EpilogueSchedule_>
struct EpilogueContext {
  using TileShape = TileShape_;        // CTA tile (M, N, K)
  using EpilogueTile = EpilogueTile_;  // subtile visited per step (EPI_M, EPI_N)
  using ElementD = ElementD_;
  using Schedule = EpilogueSchedule_;
  using Descriptor = cutlass::epilogue::collective::detail::EpilogueDescriptor<
      TileShape, EpilogueTile, void, ElementD, Schedule>;
};

}  // namespace coda::epilogue
