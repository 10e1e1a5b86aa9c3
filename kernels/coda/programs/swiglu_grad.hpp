// SPDX-License-Identifier: BSD-3-Clause
// The SwiGLU backward in the down projection's dgrad. (Device-side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/gated.hpp"
#include "coda/epilogue/packed_pair.hpp"
#include "coda/epilogue/partial_reduction.hpp"

namespace coda::epilogue {

// The SwiGLU gradient's DAG: nodes 0–7 compute dY = acc, (g, u) from the packed Z tile, ∂g, ∂u
// and store packed (∂g, ∂u) → dZ; `Extra` nodes follow (their edges in ExtraEdges, numbered from
// 8); the root is D = silu(g) · u. g and u feed three nodes each, and the side output needs the
// accumulator beside them, hence a DAG.
template <class Ctx, class ExtraEdges, class... Extra>
using SwiGluGradDag =
    Dag<typename JoinEdges<Edges<From<>, From<>, From<1>, From<1>, From<0, 2, 3>, From<0, 2, 3>,
                                 From<4, 5>, From<6>>,
                           ExtraEdges, Edges<From<2, 3>>>::type,
        Acc,                        // 0: dY
        PackedPairLoad<Ctx>,        // 1: Z pairs
        MapNode<FirstOfPairFn>,     // 2: g
        MapNode<SecondOfPairFn>,    // 3: u
        MapNode<SiluGateGradGate>,  // 4: ∂g
        MapNode<SiluGateGradUp>,    // 5: ∂u
        MapNode<PackPairFn>,        // 6: (∂g, ∂u)
        PackedPairStoreNode<Ctx>,   // 7: → dZ
        Extra...,
        MapNode<SiluGate>>;  // root: D = silu(g) · u

// dY = acc;  (g, u) = packed Z;  D = silu(g) · u;  dZ = packed (∂g, ∂u).
struct SwiGluPairsGrad {
  using Params = SwiGluPairsGradParams;
  // The Z tile is 32-bit: 2 load stages (32 KB) under Cooperative leave the mainloop 3 (gemm/kernel.hpp).
  static constexpr int kCooperativeEpilogueLoadStages = 2;
  // Under Pingpong, 64 x 16 subtiles: Z pairs, (g, u), their gradients and the packed dZ are live
  // per column (beside 128x192's 192 accumulators 32 columns spill 836 B), and the 32-bit Z and
  // dZ buffers of 64 x 32 subtiles left the 128x128 mainloop 5 stages of the plain GEMM's 6 (at
  // 16 columns it keeps 6: 4-5 % faster at 1B on an H100; the Cooperative subtile stays 32, where
  // 16 columns did not help). scripts/kernel_stages.py prints every kernel's stages.
  static constexpr int kPingpongEpilogueTileN = 16;
  template <class Ctx>
  using Callbacks = SwiGluGradDag<Ctx, Edges<>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    cute::get<1>(a) = {static_cast<const float*>(p.packed_z), 0.0f, row_major_stride(p.packed_z_stride)};
    cute::get<7>(a) = {static_cast<float*>(p.packed_dz), row_major_stride(p.packed_dz_stride)};
  }
};
CODA_COMPILE_EXAMPLE(SwiGluPairsGrad, kAkBk, bf16);

// The same with ⟨z, dz⟩ per row: Σ_j (g·∂g + u·∂u) → per-row partials. Compiled for the dgrad
// layout (dY = dOut · W_down).
struct SwiGluBwd {
  using Params = SwiGluBwdParams;
  // Its column (bias) / row (z·dz) sums are taken over values the framework rounds to bf16 first,
  // where the handoff rounds the accumulator instead (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  static constexpr int kCooperativeEpilogueLoadStages = SwiGluPairsGrad::kCooperativeEpilogueLoadStages;
  static constexpr int kPingpongEpilogueTileN = SwiGluPairsGrad::kPingpongEpilogueTileN;
  template <class Ctx>
  using Callbacks = SwiGluGradDag<Ctx, Edges<From<2, 3, 4, 5>, From<8>>,
                                  MapNode<PairDot>,                       // 8: g·∂g + u·∂u
                                  PerRowPartialNode<Ctx, cutlass::plus>>;  // 9: → zdz partials

  template <class Args>
  static void fill(Args& a, const Params& p) {
    SwiGluPairsGrad::fill(a, p);
    cute::get<9>(a) = {p.zdz_partials, 0.0f, {}};
  }
};
CODA_COMPILE_PROGRAM(SwiGluBwd, kAkBn, bf16);

}  // namespace coda::epilogue
