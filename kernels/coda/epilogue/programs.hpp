// SPDX-License-Identifier: BSD-3-Clause
// Epilogue programs composed from the primitives, each reading like its math: what the ops
// (include/coda/ops/) run, the worked examples of docs/epilogue.md, the programs of
// tests/device/epilogue/ and of `coda-bench epilogue`. Device-side (CUTLASS).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/broadcast.hpp"
#include "coda/epilogue/composition.hpp"
#include "coda/epilogue/elementwise.hpp"
#include "coda/epilogue/program_params.hpp"
#include "coda/epilogue/gated.hpp"
#include "coda/epilogue/online_lse.hpp"
#include "coda/epilogue/packed_pair.hpp"
#include "coda/epilogue/partial_reduction.hpp"
#include "coda/epilogue/qk_norm_rope.hpp"
#include "coda/epilogue/rms_norm_grad.hpp"
#include "coda/epilogue/rope.hpp"
#include "coda/epilogue/row_rstd.hpp"
#include "coda/epilogue/tile.hpp"

namespace coda::epilogue {

using bf16 = cutlass::bfloat16_t;

// X = acc + R → D;  Σ X² → per-row partials;  X ⊙ w → H
struct ResidualRms {
  using Params = ResidualRmsParams;
  template <class Ctx>
  using Callbacks = Split<
      Add<Acc, TileLoad<Ctx, bf16>>,                        // X = acc + R
      PerRowPartialSumSquares<Ctx, Shared>,                 // D = X, partial Σ X²
      TileStore<Ctx, bf16, Mul<Shared, PerCol<Ctx, bf16>>>  // H = X ⊙ w
      >;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    // input tree: Add(Acc, TileLoad)
    a.op_0.op_1 = {static_cast<const bf16*>(p.residual), bf16(0), row_major_stride(p.residual_stride)};
    // side tree: TileStore(Mul(Shared, PerCol))
    a.op_1.op_0.op_1 = {static_cast<const bf16*>(p.norm_weight), bf16(0), {}};
    a.op_1.op_1 = {static_cast<bf16*>(p.normed), row_major_stride(p.normed_stride)};
    // output tree: PerRowPartialSumSquares(Shared)
    a.op_2.op_1 = {p.sumsq_partials, 0.0f, {}};
  }
};

// D = α · r[m] · acc
struct RowScale {
  using Params = RowScaleParams;
  template <class Ctx>
  using Callbacks = Mul<Scalar, Mul<PerRow<Ctx, float>, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0 = scalar_args(p.alpha);                   // α
    a.op_1.op_0 = {p.row_scale, 0.0f, {}};           // r[m]
  }
};

// Y = silu(acc + b[n]) → D;  Σ_m Y → per-col partials
struct BiasSiluColSum {
  using Params = BiasSiluColSumParams;
  template <class Ctx>
  using Callbacks = PerColPartialSum<Ctx, Silu<Add<Acc, PerCol<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};  // b[n]
    a.op_1 = {p.col_partials, 0.0f, {}};
  }
};

// D = silu(acc)
struct Activation {
  using Params = ActivationParams;
  template <class Ctx>
  using Callbacks = Silu<Acc>;

  template <class Args>
  static void fill(Args&, const Params&) {}
};

// D = acc + R
struct ResidualAdd {
  using Params = ResidualAddParams;
  template <class Ctx>
  using Callbacks = Add<Acc, TileLoad<Ctx, bf16>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {static_cast<const bf16*>(p.residual), bf16(0), row_major_stride(p.residual_stride)};
  }
};

// D = acc;  Σ acc² → per-row partials
struct RowSumSquares {
  using Params = RowSumSquaresParams;
  template <class Ctx>
  using Callbacks = PerRowPartialSumSquares<Ctx, Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {p.sumsq_partials, 0.0f, {}};
  }
};

// Y = GELU_tanh(acc + b[n]) → D   (linear_bias_gelu)
struct BiasGelu {
  using Params = BiasGeluParams;
  template <class Ctx>
  using Callbacks = GeluTanh<Add<Acc, PerCol<Ctx, bf16>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};  // b[n]
  }
};

// P = acc + b[n] → pre;  Y = GELU_tanh(P) → D (from fp32 P, not its bf16 copy)
struct BiasGeluSavePre {
  using Params = BiasGeluSavePreParams;
  template <class Ctx>
  using Callbacks = GeluTanh<TileStore<Ctx, bf16, Add<Acc, PerCol<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};          // b[n]
    a.op_0.op_1 = {static_cast<bf16*>(p.pre), row_major_stride(p.pre_stride)};  // → P
  }
};

// dY = acc (dgrad: dOut · W_down);  dP = dY ⊙ GELU_tanh'(P) → D;  Σ_m dP → per-col partials (∂b)
struct BiasGeluBwd {
  using Params = BiasGeluBwdParams;
  template <class Ctx>
  using Callbacks = PerColPartialSum<Ctx, Mul<Acc, GeluTanhGrad<TileLoad<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_1.op_0 = {static_cast<const bf16*>(p.pre), bf16(0), row_major_stride(p.pre_stride)};
    a.op_1 = {p.dbias_partials, 0.0f, {}};
  }
};

inline RowRstdArguments row_rstd_args(const RstdRowScaleParams& p) {
  return {p.sumsq_partials, p.partial_padded, p.partial_tiles, 1.0f / float(p.width), p.eps};
}

// D = Z = acc;  Y = silu(Z[:, 2j]) · Z[:, 2j+1] → half-width gated output
struct SwiGluPairs {
  using Params = SwiGluPairsParams;
  template <class Ctx>
  using Callbacks = GatedPairStore<SiluGate, Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {static_cast<bf16*>(p.gated), p.gated_stride};
  }
};

// D = RoPE(acc) with θ = 2π · position[m] · f[j] on the pair (2j, 2j+1)
struct RopeRotate {
  using Params = RopeRotateParams;
  template <class Ctx>
  using Callbacks = RopePairs<Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {p.positions, p.frequencies};
  }
};

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
  template <class Ctx>
  using Callbacks = SwiGluGradDag<Ctx, Edges<>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    cute::get<1>(a) = {static_cast<const float*>(p.packed_z), 0.0f, row_major_stride(p.packed_z_stride)};
    cute::get<7>(a) = {static_cast<float*>(p.packed_dz), row_major_stride(p.packed_dz_stride)};
  }
};

// The same with ⟨z, dz⟩ per row: Σ_j (g·∂g + u·∂u) → per-row partials. Compiled for the dgrad
// layout (dY = dOut · W_down).
struct SwiGluBwd {
  using Params = SwiGluBwdParams;
  static constexpr int kCooperativeEpilogueLoadStages = SwiGluPairsGrad::kCooperativeEpilogueLoadStages;
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

// The RMSNorm backward in the consuming linear's dgrad (docs/ops-math.md §2.7): dX → D, N → normed,
// ∂w partials. A DAG: G, u and w each feed several nodes.
struct RmsNormBwd {
  using Params = RmsNormBwdParams;
  template <class Ctx>
  using Callbacks =
      Dag<Edges<From<>, From<>, From<1, 0>, From<>, From<>, From<3, 4>, From<>, From<5, 6>,
                From<7>, From<2, 5>, From<9>, From<>, From<>, From<11, 12>,
                From<2, 6, 5, 13, 4>>,
          Acc,                             // 0: dZ · W
          Scalar,                          // 1: α
          MapNode<ProductFn>,              // 2: G = α · acc
          TileLoad<Ctx, bf16>,             // 3: X
          RowRstd,                         // 4: r
          MapNode<ProductFn>,              // 5: u = X · r
          PerCol<Ctx, bf16>,               // 6: w
          MapNode<ProductFn>,              // 7: N = u ⊙ w
          TileStoreNode<Ctx, bf16>,        // 8: → normed
          MapNode<ProductFn>,              // 9: G ⊙ u
          PerColPartialSumNode<Ctx>,       // 10: → ∂w partials
          PerRow<Ctx, float>,              // 11: zdz
          Scalar,                          // 12: 1 / D
          MapNode<ProductFn>,              // 13: c
          MapNode<RmsNormInputGrad>>;      // 14: D = dX

  template <class Args>
  static void fill(Args& a, const Params& p) {
    cute::get<1>(a) = scalar_args(p.alpha);
    cute::get<3>(a) = {static_cast<const bf16*>(p.x), bf16(0), row_major_stride(p.x_stride)};
    cute::get<4>(a) = row_rstd_args(p.rstd);
    cute::get<6>(a) = {static_cast<const bf16*>(p.norm_weight), bf16(0), {}};
    cute::get<8>(a) = {static_cast<bf16*>(p.normed), row_major_stride(p.normed_stride)};
    cute::get<10>(a) = {p.dw_partials, 0.0f, {}};
    cute::get<11>(a) = {p.zdz, 0.0f, {}};
    cute::get<12>(a) = {{1.0f / float(p.rstd.width)}, {nullptr}, {}};
  }
};
// The same, dX added into D by TMA reduce-add (the incoming residual-stream gradient).
struct RmsNormBwdAccumulate : RmsNormBwd {
  using Params = RmsNormBwdAccumulateParams;
  static constexpr bool kAccumulateIntoD = true;
};

// D = rstd[m] · acc, rstd folded in registers from the producing GEMM's Σx² partials
struct RstdRowScale {
  using Params = RstdRowScaleParams;
  template <class Ctx>
  using Callbacks = Mul<RowRstd, Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0 = row_rstd_args(p);
  }
};

// Z = rstd[m] · acc → D;  Y = silu(Z[:, 2j]) · Z[:, 2j+1] → half-width output (RMSNorm → SwiGLU)
struct RstdSwiGluPairs {
  using Params = RstdSwiGluPairsParams;
  template <class Ctx>
  using Callbacks = GatedPairStore<SiluGate, Mul<RowRstd, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0 = row_rstd_args(p.rstd);
    SwiGluPairs::fill(a, p.gated);
  }
};

// SwiGluPairs and RstdSwiGluPairs compiled with no D (scripts/instances.py): Y only, Z not stored.
struct SwiGluPairsNoD : SwiGluPairs {
  using Params = SwiGluPairsNoDParams;
};
struct RstdSwiGluPairsNoD : RstdSwiGluPairs {
  using Params = RstdSwiGluPairsNoDParams;
};

// D = RoPE(rstd[m] · acc) (RMSNorm → fused QKV projection → RoPE)
struct RstdRopeRotate {
  using Params = RstdRopeRotateParams;
  template <class Ctx>
  using Callbacks = RopePairs<Mul<RowRstd, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0 = row_rstd_args(p.rstd);
    RopeRotate::fill(a, p.rope);
  }
};

inline QkNormRopeArguments qk_norm_rope_args(const QkNormRopeParams& p) {
  return {{p.rope.positions, p.rope.frequencies},
          static_cast<const bf16*>(p.q_norm_weight),
          static_cast<const bf16*>(p.k_norm_weight),
          p.q_columns,
          p.qk_columns,
          p.head_dim,
          p.eps};
}

// D = RoPE(RMSNorm_head(acc) ⊙ γ) on the Q and K heads, V = acc (QK-norm, Qwen3 / OLMo-2)
struct QkNormRope {
  using Params = QkNormRopeParams;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;  // whole heads per subtile
  template <class Ctx>
  using Callbacks = QkNormRopePairs<Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = qk_norm_rope_args(p);
  }
};

// The same on rstd[m] · acc (the deferred input RMSNorm)
struct RstdQkNormRope {
  using Params = RstdQkNormRopeParams;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;
  template <class Ctx>
  using Callbacks = QkNormRopePairs<Mul<RowRstd, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0 = row_rstd_args(p.rstd);
    a.op_1 = qk_norm_rope_args(p.qk);
  }
};

// QkNormRope and RstdQkNormRope that also store their input (acc, rstd[m] · acc) → pre
struct QkNormRopeSavePre {
  using Params = QkNormRopeSavePreParams;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;
  template <class Ctx>
  using Callbacks = QkNormRopePairs<TileStore<Ctx, bf16, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_1 = {static_cast<bf16*>(p.pre), row_major_stride(p.pre_stride)};
    a.op_1 = qk_norm_rope_args(p.qk);
  }
};
struct RstdQkNormRopeSavePre {
  using Params = RstdQkNormRopeSavePreParams;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;
  template <class Ctx>
  using Callbacks = QkNormRopePairs<TileStore<Ctx, bf16, Mul<RowRstd, Acc>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_0 = row_rstd_args(p.rstd);
    a.op_0.op_1 = {static_cast<bf16*>(p.qk.pre), row_major_stride(p.qk.pre_stride)};
    a.op_1 = qk_norm_rope_args(p.qk.qk);
  }
};

// D += acc (TMA reduce-add into the existing D)
struct ResidualAccumulate {
  using Params = ResidualAccumulateParams;
  static constexpr bool kAccumulateIntoD = true;
  template <class Ctx>
  using Callbacks = Acc;

  template <class Args>
  static void fill(Args&, const Params&) {}
};

// ResidualAccumulate compiled for fp32 D in the wgrad layout (scripts/instances.py).
struct WeightGradAccumulate : ResidualAccumulate {
  using Params = WeightGradAccumulateParams;
};

// D = logits = acc;  per-tile log Σ exp and the target logit
struct CrossEntropyPartials {
  using Params = CrossEntropyPartialsParams;
  template <class Ctx>
  using Callbacks = OnlineLse<Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {p.lse_partials, p.lse_padded, p.targets, p.targets_int64, p.ignore_index,
              p.target_logits, p.softcap};
  }
};

// CrossEntropyPartials compiled with no D (GemmKernel<..., void, ...>; scripts/instances.py):
// only the per-tile log Σ exp and the target logits leave the kernel.
struct CrossEntropyLoss : CrossEntropyPartials {
  using Params = CrossEntropyLossParams;
};

}  // namespace coda::epilogue
