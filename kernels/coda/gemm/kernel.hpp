// SPDX-License-Identifier: BSD-3-Clause
// GemmKernel: the one way CODA assembles a CUTLASS SM90 TMA warp-specialized persistent GEMM
// around an epilogue program. Device-side header (CUTLASS); included only by instance TUs.
//
// Design in one paragraph. The mainloop is CUTLASS's, untouched: TMA loads A and B into swizzled
// shared memory, wgmma accumulates in fp32 registers, Cooperative (two consumer warpgroups split one
// tile along M) or Pingpong (each consumer warpgroup owns a tile, so one's epilogue overlaps the
// other's mainloop). What varies is (1) the operand layout, (2) the TileConfig from the menu in
// config.hpp, (3) the D element type and (4) the epilogue Program. A Program is a type with
//     template <class Ctx> using Callbacks = ...;
// naming a CUTLASS FusionOperation or an EVT callbacks tree (the builder passes the latter through
// unchanged), where Ctx is the epilogue::EpilogueContext of this kernel (tile shapes, D type,
// schedule) that the primitives of kernels/coda/epilogue/ are parameterised by. A Program that
// declares `static constexpr bool kAccumulateIntoD = true;` gets D += program(acc): the same
// collective, with D written by TMA reduce-add instead of TMA store. Either way one lane issues
// the D copy (tma_store_one_lane.hpp). A Program may widen the epilogue subtile with
// `static constexpr int kEpilogueTileN = ...;` and cap the epilogue's load stages under the
// Cooperative schedule with `static constexpr int kCooperativeEpilogueLoadStages = ...;`. The
// epilogue is built first, and the mainloop gets the shared memory it leaves.
#pragma once

#include <numeric>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>

#include "coda/epilogue/context.hpp"
#include "coda/gemm/config.hpp"
#include "coda/gemm/tma_store_one_lane.hpp"

namespace coda::gemm {

namespace detail {

// The schedules of config.hpp's list. EpilogueTile<TileShape>: the epilogue's subtile.
struct Cooperative {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  template <class TileShape>
  using EpilogueTile = cute::Shape<cute::_128, cute::_32>;  // what EpilogueTileAuto picks
  static constexpr bool kSplitN = false;
};
struct Pingpong {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  template <class TileShape>
  using EpilogueTile = cute::Shape<cute::_64, cute::_32>;
  static constexpr bool kSplitN = false;
};
// Cooperative with the two consumer warp groups side by side along N, each computing a
// TileM × TileN/2 half (cuBLASLt's "coop" kernels that split the other mode). CUTLASS's builder
// only splits along M, so GemmKernel swaps the builder's TiledMma (WithSplitN). CUTLASS's epilogue
// hands every subtile to all 256 threads, so the subtile spans both halves: 64 rows × TileN.
struct CooperativeSplitN {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  template <class TileShape>
  using EpilogueTile =
      cute::Shape<cute::_64, cute::remove_cvref_t<decltype(cute::get<1>(TileShape{}))>>;
  static constexpr bool kSplitN = true;
};

template <int TileM, int TileN, int ClusterM, int ClusterN, class Schedule_, class Scheduler_>
struct TileConfigTypes {
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::_64>;
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;
  using Schedule = Schedule_;
  using TileScheduler = Scheduler_;
};

using Persistent = cutlass::gemm::PersistentScheduler;
using StreamK = cutlass::gemm::StreamKScheduler;

// Elements per 16 bytes (TMA); void D (no D store) takes bf16's.
template <class E>
constexpr int kTmaAlignment = 16 / sizeof(E);
template <>
constexpr int kTmaAlignment<void> = 8;

// Program::kAccumulateIntoD, false when the program does not declare it.
template <class Program, class = void>
struct AccumulatesIntoD : std::false_type {};
template <class Program>
struct AccumulatesIntoD<Program, std::void_t<decltype(Program::kAccumulateIntoD)>>
    : std::bool_constant<Program::kAccumulateIntoD> {};

// The builder's collective with its D copy (smem -> gmem) replaced by `StoreOp` and, unless
// `SmemAtom` is void, the swizzle atom of C's and D's shared memory by `SmemAtom`.
template <class Collective, class StoreOp, class SmemAtom>
struct WithParts;
template <class Policy, class CtaTile, class EpiTile, class EC, class SC, class ED, class SD,
          class Fusion, class G2S, class AtomC, class S2R, class S2G, class AtomD, class R2S,
          class CopyAtomC, class R2R, class StoreOp, class SmemAtom>
struct WithParts<cutlass::epilogue::collective::CollectiveEpilogue<
                     Policy, CtaTile, EpiTile, EC, SC, ED, SD, Fusion, G2S, AtomC, S2R, S2G, AtomD,
                     R2S, CopyAtomC, R2R>,
                 StoreOp, SmemAtom> {
  template <class Builders>
  using Atom = std::conditional_t<std::is_void_v<SmemAtom>, Builders, SmemAtom>;
  using type = cutlass::epilogue::collective::CollectiveEpilogue<
      Policy, CtaTile, EpiTile, EC, SC, ED, SD, Fusion, G2S, Atom<AtomC>, S2R, StoreOp,
      Atom<AtomD>, R2S, CopyAtomC, R2R>;
};

// The builder's mainloop, with its TiledMma split along N when SplitN: two warp groups side by
// side, each an m64 wgmma of half the tile's width, repeated down the tile's M. The second warp
// group's B starts TileN/2 into B's shared memory, so an N-major B takes a swizzle atom that
// divides the half (a 192-wide tile: 32 columns, not the builder's 64).
template <class Collective, class LayoutA, class LayoutB, bool SplitN>
struct WithSplitN {
  using type = Collective;
};
template <class Policy, class TileShape, class EA, class SA, class EB, class SB, class TiledMma,
          class CopyA, class AtomA, class S2RA, class TransformA, class CopyB, class AtomB,
          class S2RB, class TransformB, class LayoutA, class LayoutB>
struct WithSplitN<cutlass::gemm::collective::CollectiveMma<Policy, TileShape, EA, SA, EB, SB,
                                                           TiledMma, CopyA, AtomA, S2RA, TransformA,
                                                           CopyB, AtomB, S2RB, TransformB>,
                  LayoutA, LayoutB, true> {
  using HalfN = cute::Int<cute::size<1>(TileShape{}) / 2>;
  using BlockK = cute::remove_cvref_t<decltype(cute::get<2>(TileShape{}))>;
  static constexpr cute::GMMA::Major kMajorA =
      cutlass::gemm::collective::detail::gmma_ss_tag_to_major_A<EA, LayoutA>();
  static constexpr cute::GMMA::Major kMajorB =
      cutlass::gemm::collective::detail::gmma_ss_tag_to_major_B<EB, LayoutB>();
  using SplitMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<EA, EB, float, cute::Shape<cute::_64, HalfN, BlockK>, kMajorA,
                                 kMajorB>(),
      cute::Layout<cute::Shape<cute::_1, cute::_2, cute::_1>>{}));
  using HalfAtomB = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                             kMajorB, EB, HalfN, BlockK>());
  using type = cutlass::gemm::collective::CollectiveMma<Policy, TileShape, EA, SA, EB, SB,
                                                        SplitMma, CopyA, AtomA, S2RA, TransformA,
                                                        CopyB, HalfAtomB, S2RB, TransformB>;
};

// The epilogue's load stages for Program under Schedule: Program::kCooperativeEpilogueLoadStages
// under the Cooperative schedule when declared (its 128-row subtile doubles the bytes per load
// stage: a 32-bit tile's default 4 stages take 64 KB and leave the mainloop 2 stages); else 0,
// the builder's count.
template <class Program, class Schedule, class = void>
struct EpilogueLoadStagesOf : std::integral_constant<int, 0> {};
template <class Program>
struct EpilogueLoadStagesOf<Program, Cooperative,
                            std::void_t<decltype(Program::kCooperativeEpilogueLoadStages)>>
    : std::integral_constant<int, Program::kCooperativeEpilogueLoadStages> {};

// The collective with its load-pipeline depth (the dispatch policy's StagesC) set to StagesC; 0
// keeps the builder's. C is void here, so the policy never reuses C's shared memory for D.
template <class Collective, int StagesC>
struct WithLoadStages {
  using type = Collective;
};
template <int SC, int SD, int F, bool Reuse, bool Delay, class... Rest, int StagesC>
struct WithLoadStages<cutlass::epilogue::collective::CollectiveEpilogue<
                          cutlass::epilogue::Sm90TmaWarpSpecialized<SC, SD, F, Reuse, Delay>, Rest...>,
                      StagesC> {
  static_assert(StagesC == 0 || !Reuse, "the load-stage override needs ReuseSmemC off");
  using type = cutlass::epilogue::collective::CollectiveEpilogue<
      cutlass::epilogue::Sm90TmaWarpSpecialized<(StagesC == 0 ? SC : StagesC), SD, F, Reuse, Delay>,
      Rest...>;
};

// The schedule's epilogue subtile, N widened to Program::kEpilogueTileN when the program declares
// it (a node that reduces across a head of columns needs the whole head in one subtile).
template <class Program, class Default, class = void>
struct EpilogueTileOf {
  using type = Default;
};
template <class Program, class Default>
struct EpilogueTileOf<Program, Default, std::void_t<decltype(Program::kEpilogueTileN)>> {
  using type = cute::Shape<cute::remove_cvref_t<decltype(cute::get<0>(Default{}))>,
                           cute::Int<Program::kEpilogueTileN>>;
};

// The epilogue collective: CUTLASS's builder's, and the swizzle atom its shared memory needs (void:
// the builder's). Under the split-N schedule the builder refuses a 64-row subtile for 256 threads,
// so its implementation is built directly, with the dispatch policy the builder gives the
// Cooperative schedule (a fragment of subtile ÷ 256 values a thread).
template <class Schedule, class TileShape, class ClusterShape, class EpilogueTile, class ElementD,
          class LayoutD, int AlignmentD, class Callbacks>
struct EpilogueBuilder {
  using type = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape, EpilogueTile,
      float, float, void, LayoutD, AlignmentD, ElementD, LayoutD, AlignmentD,
      typename Schedule::Epilogue, Callbacks>::CollectiveOp;
  using SmemAtom = void;
};
template <class TileShape, class ClusterShape, class EpilogueTile, class ElementD, class LayoutD,
          int AlignmentD, class Callbacks>
struct EpilogueBuilder<CooperativeSplitN, TileShape, ClusterShape, EpilogueTile, ElementD, LayoutD,
                       AlignmentD, Callbacks> {
  using BuilderPolicy = decltype(cutlass::epilogue::collective::detail::sm90_get_tma_dispatch_policy<
                                 TileShape, EpilogueTile, void, ElementD,
                                 cutlass::epilogue::TmaWarpSpecializedCooperative>());
  // One D stage: a 64 × TileN subtile is 24–32 KB of bf16, and a second one would cost the
  // mainloop its fourth stage (cuBLASLt runs these tiles with four).
  using Policy = cutlass::epilogue::Sm90TmaWarpSpecialized<
      BuilderPolicy::StagesC, 1, BuilderPolicy::FragmentSize, BuilderPolicy::ReuseSmemC,
      BuilderPolicy::DelayTmaStore>;
  using type = typename cutlass::epilogue::collective::detail::Sm90TmaBuilderImpl<
      TileShape, EpilogueTile, float, float, void, LayoutD, AlignmentD, ElementD, LayoutD,
      AlignmentD, Callbacks, Policy>::CollectiveOp;
  // The second warp group's columns start TileN/2 into the subtile; the swizzle atom of the
  // epilogue's shared memory must divide that (a 192-wide tile: 32 columns, not the builder's 64).
  static constexpr int kAtomN = std::gcd(cute::size<1>(TileShape{}) / 2, 64);
  using SmemAtom = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                            cute::GMMA::Major::K, ElementD, cute::_64, cute::Int<kAtomN>>());
};

// Whether the epilogue's load pipeline and its load nodes (which read the stage count from the
// context's descriptor) agree. Split-N kernels run the plain GEMM only (no load nodes), and
// CUTLASS's descriptor refuses their subtile.
template <class Collective, class Context, bool SplitN>
constexpr bool load_stages_agree() {
  if constexpr (SplitN)
    return true;
  else
    return Collective::DispatchPolicy::StagesC == Context::Descriptor::StagesC;
}

// Whether Program has `template <class Ctx> using Callbacks = ...;` for this Ctx.
template <class Program, class Ctx, class = void>
struct HasCallbacks : std::false_type {};
template <class Program, class Ctx>
struct HasCallbacks<Program, Ctx, std::void_t<typename Program::template Callbacks<Ctx>>>
    : std::true_type {};

}  // namespace detail

template <TileConfig> struct TileConfigTraits;
#define CODA_TILE_CONFIG_TRAITS(id, name, tm, tn, cm, cn, schedule, scheduler)          \
  template <>                                                                            \
  struct TileConfigTraits<TileConfig::id>                                                \
      : detail::TileConfigTypes<tm, tn, cm, cn, detail::schedule, detail::scheduler> {};
CODA_TILE_CONFIGS(CODA_TILE_CONFIG_TRAITS)
#undef CODA_TILE_CONFIG_TRAITS

// CUTLASS layout tags: A is M×K (RowMajor = K-major); B is read as K×N (ColumnMajor = K-major).
template <OperandLayout> struct OperandLayoutTraits;
template <> struct OperandLayoutTraits<OperandLayout::kAkBk> {
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = cutlass::layout::ColumnMajor;
};
template <> struct OperandLayoutTraits<OperandLayout::kAkBn> {
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = cutlass::layout::RowMajor;
};
template <> struct OperandLayoutTraits<OperandLayout::kAmBn> {
  using LayoutA = cutlass::layout::ColumnMajor;
  using LayoutB = cutlass::layout::RowMajor;
};

template <OperandLayout Layout, class ElementD_, TileConfig Config, class Program>
struct GemmKernel {
  using ElementA = cutlass::bfloat16_t;
  using ElementB = cutlass::bfloat16_t;
  using ElementD = ElementD_;
  using ElementAccumulator = float;
  using LayoutA = typename OperandLayoutTraits<Layout>::LayoutA;
  using LayoutB = typename OperandLayoutTraits<Layout>::LayoutB;
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignmentAB = 16 / sizeof(ElementA);  // TMA: 16-byte strides
  // void D: the program's outputs are all its own (OnlineLse's partials); nothing is stored as D.
  static constexpr int kAlignmentD = detail::kTmaAlignment<ElementD>;

  using Tile = TileConfigTraits<Config>;
  using TileShape = typename Tile::TileShape;
  using ClusterShape = typename Tile::ClusterShape;
  using Schedule = typename Tile::Schedule;
  using EpilogueTile = typename detail::EpilogueTileOf<
      Program, typename Schedule::template EpilogueTile<TileShape>>::type;
  static constexpr bool kStreamK = std::is_same_v<typename Tile::TileScheduler, detail::StreamK>;

  static constexpr int kEpilogueLoadStages =
      detail::EpilogueLoadStagesOf<Program, Schedule>::value;
  using EpilogueContext = epilogue::EpilogueContext<TileShape, EpilogueTile, ElementD,
                                                    typename Schedule::Epilogue,
                                                    kEpilogueLoadStages>;
  static_assert(detail::HasCallbacks<Program, EpilogueContext>::value,
                "An epilogue Program needs `template <class Ctx> using Callbacks = <primitive tree>;` "
                "that is valid for this kernel's EpilogueContext (see docs/epilogue.md)");
  using Callbacks = typename Program::template Callbacks<EpilogueContext>;

  // C is void: D = program(acc). Inputs beyond A and B come in through the program's nodes.
  using EpilogueBuilder = detail::EpilogueBuilder<Schedule, TileShape, ClusterShape, EpilogueTile,
                                                  ElementD, LayoutD, kAlignmentD, Callbacks>;
  static constexpr bool kAccumulateIntoD = detail::AccumulatesIntoD<Program>::value;
  static_assert(!kAccumulateIntoD || std::is_same_v<ElementD, cutlass::bfloat16_t> ||
                    std::is_same_v<ElementD, float>,
                "kAccumulateIntoD: TMA reduce-add into D is supported for bf16 and fp32 D only");
  using DStoreOp = detail::TmaStoreOneLane<std::conditional_t<
      kAccumulateIntoD, cute::SM90_TMA_REDUCE_ADD, cute::SM90_TMA_STORE>>;
  using CollectiveEpilogue = typename detail::WithParts<
      typename detail::WithLoadStages<typename EpilogueBuilder::type, kEpilogueLoadStages>::type,
      DStoreOp, typename EpilogueBuilder::SmemAtom>::type;
  static_assert(detail::load_stages_agree<CollectiveEpilogue, EpilogueContext, Schedule::kSplitN>(),
                "the epilogue's load nodes and its load pipeline must have the same stage count");

  using BuiltMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignmentAB,
      ElementB, LayoutB, kAlignmentAB, ElementAccumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Schedule::Mainloop>::CollectiveOp;
  using CollectiveMainloop =
      typename detail::WithSplitN<BuiltMainloop, LayoutA, LayoutB, Schedule::kSplitN>::type;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
                                                      CollectiveMainloop, CollectiveEpilogue,
                                                      typename Tile::TileScheduler>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using Arguments = typename Device::Arguments;
  using FusionArguments = decltype(Arguments{}.epilogue.thread);
};

}  // namespace coda::gemm
