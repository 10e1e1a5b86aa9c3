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
// `static constexpr int kEpilogueTileN = ...;`, narrow it under the Pingpong schedule with
// `static constexpr int kPingpongEpilogueTileN = ...;` (below), and cap the epilogue's load
// stages under the Cooperative schedule with `static constexpr int kCooperativeEpilogueLoadStages
// = ...;`. The epilogue is built first, and the mainloop gets the shared memory it leaves.
#pragma once

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
#include "coda/gemm/overlap_cooperative.hpp"
#include "coda/gemm/tma_store_one_lane.hpp"

namespace coda::gemm {

namespace detail {

struct Cooperative {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
  using EpilogueTile = cute::Shape<cute::_128, cute::_32>;  // what EpilogueTileAuto picks
};
struct Pingpong {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  using EpilogueTile = cute::Shape<cute::_64, cute::_32>;
};
// Cooperative's mainloop and tile, the epilogue in its own warp group on 64 x 128 virtual tiles
// (overlap_cooperative.hpp): the epilogue is built as a one-warp-group (Pingpong-shaped) one for
// the virtual tile.
struct OverlapCooperative {
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  using EpilogueTile = cute::Shape<cute::_64, cute::_32>;
  using VirtualTile = cute::Shape<cute::_64, cute::_128, cute::_64>;
};

template <class Schedule>
constexpr bool kOverlap = std::is_same_v<Schedule, OverlapCooperative>;
// The tile the epilogue is built for: the CTA tile, or OverlapCooperative's virtual tile.
template <class Tile, bool = kOverlap<typename Tile::Schedule>>
struct EpilogueTileShapeOf {
  using type = typename Tile::TileShape;
};
template <class Tile>
struct EpilogueTileShapeOf<Tile, true> {
  using type = typename Tile::Schedule::VirtualTile;
};

// The builder's mainloop with its TiledMma replaced. OverlapCooperative runs the 128 x 256 tile
// as two 64 x 128 wgmma atoms per warp group and k-step, not one 64 x 256: ptxas sizes a single
// instruction's operands by the kernel's entry register count (65,536 / 512 threads = 128; a
// 64 x 256 wgmma needs 154), whatever setmaxnreg later grants the warp group. It also orders each
// thread's accumulators as its two 64 x 128 virtual tiles, one after the other.
template <class T>
struct Identity {
  using type = T;
};
template <class Collective, class TiledMma>
struct WithTiledMma;
template <class Policy, class Tile, class EA, class SA, class EB, class SB, class OldMma, class GA,
          class LA, class CA, class TA, class GB, class LB, class CB, class TB, class TiledMma>
struct WithTiledMma<cutlass::gemm::collective::CollectiveMma<Policy, Tile, EA, SA, EB, SB, OldMma,
                                                             GA, LA, CA, TA, GB, LB, CB, TB>,
                    TiledMma> {
  using type = cutlass::gemm::collective::CollectiveMma<Policy, Tile, EA, SA, EB, SB, TiledMma, GA,
                                                        LA, CA, TA, GB, LB, CB, TB>;
};

template <int TileM, int TileN, int ClusterM, int ClusterN, class Schedule_, class Scheduler_>
struct TileConfigTypes {
  // K-block 64; a GemmKernel's own K-block is kMainloopKBlock (32 under OverlapCooperative).
  static constexpr int kTileM = TileM, kTileN = TileN;
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

// Program::kNeedsFp32Accumulator, false when the program does not declare it: its results match
// the framework's only when computed from the fp32 accumulator (the deferred RMSNorm's
// rstd[m] · acc and a linear layer's acc + b, which the framework rounds once; sums the framework
// takes at another rounding point: the residual RMSNorm's Σ (acc + R)², the backward ops'
// bias and z·dz sums over their bf16 gradients), so not from a bf16 handoff.
template <class Program, class = void>
struct NeedsFp32Accumulator : std::false_type {};
template <class Program>
struct NeedsFp32Accumulator<Program, std::void_t<decltype(Program::kNeedsFp32Accumulator)>>
    : std::bool_constant<Program::kNeedsFp32Accumulator> {};

// Program::kAccumulateIntoD, false when the program does not declare it.
template <class Program, class = void>
struct AccumulatesIntoD : std::false_type {};
template <class Program>
struct AccumulatesIntoD<Program, std::void_t<decltype(Program::kAccumulateIntoD)>>
    : std::bool_constant<Program::kAccumulateIntoD> {};

// The builder's collective with its D copy (smem -> gmem) replaced by `StoreOp`.
template <class Collective, class StoreOp>
struct WithStoreOp;
template <class Policy, class CtaTile, class EpiTile, class EC, class SC, class ED, class SD,
          class Fusion, class G2S, class AtomC, class S2R, class S2G, class AtomD, class R2S,
          class CopyAtomC, class R2R, class StoreOp>
struct WithStoreOp<cutlass::epilogue::collective::CollectiveEpilogue<
                       Policy, CtaTile, EpiTile, EC, SC, ED, SD, Fusion, G2S, AtomC, S2R, S2G,
                       AtomD, R2S, CopyAtomC, R2R>,
                   StoreOp> {
  using type = cutlass::epilogue::collective::CollectiveEpilogue<
      Policy, CtaTile, EpiTile, EC, SC, ED, SD, Fusion, G2S, AtomC, S2R, StoreOp, AtomD, R2S,
      CopyAtomC, R2R>;
};

// The epilogue's load stages for Program under Schedule: Program::kCooperativeEpilogueLoadStages
// under the Cooperative schedule when declared (its 128-row subtile doubles the bytes per load
// stage: a 32-bit tile's default 4 stages take 64 KB and leave the mainloop 2 stages); 2 under
// OverlapCooperative (its 64 KB handoff leaves the mainloop ~144 KB and the epilogue ~19 KB: the
// epilogue warp group waits on its own loads off the mainloop's path); else 0, the builder's count.
template <class Program, class Schedule, class = void>
struct EpilogueLoadStagesOf : std::integral_constant<int, 0> {};
template <class Program>
struct EpilogueLoadStagesOf<Program, Cooperative,
                            std::void_t<decltype(Program::kCooperativeEpilogueLoadStages)>>
    : std::integral_constant<int, Program::kCooperativeEpilogueLoadStages> {};
template <class Program>
struct EpilogueLoadStagesOf<Program, OverlapCooperative> : std::integral_constant<int, 2> {};

// The epilogue's store stages (D and tile-store buffers): 1 under OverlapCooperative (same
// budget), else 0, the builder's 2.
template <class Schedule>
constexpr int kEpilogueStoreStages = kOverlap<Schedule> ? 1 : 0;

// The collective with its load-pipeline depth (the dispatch policy's StagesC) set to StagesC and
// its store stages to StagesD; 0 keeps the builder's. C is void here, so the policy never reuses
// C's shared memory for D.
template <class Collective, int StagesC, int StagesD>
struct WithStages {
  using type = Collective;
};
template <int SC, int SD, int F, bool Reuse, bool Delay, class... Rest, int StagesC, int StagesD>
struct WithStages<cutlass::epilogue::collective::CollectiveEpilogue<
                      cutlass::epilogue::Sm90TmaWarpSpecialized<SC, SD, F, Reuse, Delay>, Rest...>,
                  StagesC, StagesD> {
  static_assert(StagesC == 0 || !Reuse, "the load-stage override needs ReuseSmemC off");
  using type = cutlass::epilogue::collective::CollectiveEpilogue<
      cutlass::epilogue::Sm90TmaWarpSpecialized<(StagesC == 0 ? SC : StagesC),
                                                (StagesD == 0 ? SD : StagesD), F, Reuse, Delay>,
      Rest...>;
};

// Trait<Program>::value: Program::member, or 0 where Program does not declare it.
#define CODA_DECLARED_INT(Trait, member)                                              \
  template <class Program, class = void>                                              \
  struct Trait : std::integral_constant<int, 0> {};                                   \
  template <class Program>                                                            \
  struct Trait<Program, std::void_t<decltype(Program::member)>>                       \
      : std::integral_constant<int, Program::member> {};
CODA_DECLARED_INT(DeclaredTileN, kEpilogueTileN)
CODA_DECLARED_INT(DeclaredPingpongTileN, kPingpongEpilogueTileN)
CODA_DECLARED_INT(DeclaredWidePingpongTileN, kWidePingpongEpilogueTileN)
CODA_DECLARED_INT(DeclaredOverlapKBlock, kOverlapKBlock)
#undef CODA_DECLARED_INT

// The mainloop's K-block for Program under Schedule. 64, but 32 under OverlapCooperative: its
// 64 KB handoff leaves the stages ~144 KB, three of 48 KB at K = 64 (the one the MMA warp groups
// read holds back a third) or six of 24 KB at K = 32, which keep more bytes in flight. H100,
// same rounds (tune-ops --epilogue-cost, M = 16384, thirty-fifth session): the plain twin
// 0.90-0.97 x the K = 64 one's time, the fused RoPE, QK-norm, SwiGLU and RMSNorm-backward
// kernels 0.90-0.99 x, the QK-norm save-Pre kernel (2 stages at K = 64, 5 at 32) 0.55-0.59 x.
// A program whose epilogue outlasts its mainloop may keep 64 (`kOverlapKBlock`): the loss-only
// cross-entropy's best candidate read 1.012-1.030 x cuBLAS at 64 and 1.075-1.126 at 32 (1B).
template <class Program, class Schedule>
constexpr int kMainloopKBlock =
    !kOverlap<Schedule> ? 64
    : DeclaredOverlapKBlock<Program>::value != 0 ? DeclaredOverlapKBlock<Program>::value
                                                 : 32;

// The subtile's N for Program under Tile: kEpilogueTileN when declared (a node that reduces
// across a head of columns needs the whole head in one subtile); else kPingpongEpilogueTileN when
// declared and Tile is Pingpong (kWidePingpongEpilogueTileN: only a Pingpong tile wider than 128
// columns, leaving 128 x 128's subtile as it is); else 0, the schedule's default. A Pingpong warp group holds its
// whole tile (128 or 192 accumulators a thread) and its subtile's tile buffers share shared memory
// with the mainloop's stages: a program with many values live per column (packed pairs, their
// gradients, partials) spills beside 192 accumulators at 32 columns, and its 64 x 32 load and
// store buffers can cost the 128 x 128 mainloop a stage (docs/design.md §10).
template <class Program, class Tile>
constexpr int epilogue_tile_n() {
  constexpr int widened = DeclaredTileN<Program>::value;
  constexpr int narrowed = DeclaredPingpongTileN<Program>::value;
  static_assert(widened == 0 || narrowed == 0,
                "a Program declares kEpilogueTileN or kPingpongEpilogueTileN, not both");
  constexpr int narrowed_wide = DeclaredWidePingpongTileN<Program>::value;
  static_assert(narrowed == 0 || narrowed_wide == 0,
                "a Program declares kPingpongEpilogueTileN or kWidePingpongEpilogueTileN, not both");
  if constexpr (widened != 0) return widened;
  if constexpr (std::is_same_v<typename Tile::Schedule, Pingpong>) {
    if constexpr (narrowed_wide != 0 && cute::size<1>(typename Tile::TileShape{}) > 128)
      return narrowed_wide;
    return narrowed;
  }
  return 0;
}

template <class Default, int TileN>
struct WithTileN {
  using type = cute::Shape<cute::remove_cvref_t<decltype(cute::get<0>(Default{}))>, cute::Int<TileN>>;
};
template <class Default>
struct WithTileN<Default, 0> {
  using type = Default;
};

// The schedule's epilogue subtile with N set by epilogue_tile_n when that is not 0.
template <class Program, class Tile>
using EpilogueTileOf =
    typename WithTileN<typename Tile::Schedule::EpilogueTile, epilogue_tile_n<Program, Tile>()>::type;

// Whether Program has `template <class Ctx> using Callbacks = ...;` for this Ctx.
template <class Program, class Ctx, class = void>
struct HasCallbacks : std::false_type {};
template <class Program, class Ctx>
struct HasCallbacks<Program, Ctx, std::void_t<typename Program::template Callbacks<Ctx>>>
    : std::true_type {};

}  // namespace detail

// The CUTLASS types of each config of config.hpp's list.
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
  static constexpr int kKBlock = detail::kMainloopKBlock<Program, typename Tile::Schedule>;
  static_assert(kKBlock == 32 || kKBlock == 64, "a mainloop K-block of 32 or 64 bf16");
  using TileShape = cute::Shape<cute::Int<Tile::kTileM>, cute::Int<Tile::kTileN>, cute::Int<kKBlock>>;
  using ClusterShape = typename Tile::ClusterShape;
  static constexpr bool kOverlap = detail::kOverlap<typename Tile::Schedule>;
  using EpilogueTileShape = typename detail::EpilogueTileShapeOf<Tile>::type;
  using EpilogueTile = detail::EpilogueTileOf<Program, Tile>;
  static constexpr bool kStreamK = std::is_same_v<typename Tile::TileScheduler, detail::StreamK>;

  static constexpr int kEpilogueLoadStages =
      detail::EpilogueLoadStagesOf<Program, typename Tile::Schedule>::value;
  static constexpr int kEpilogueStoreStages = detail::kEpilogueStoreStages<typename Tile::Schedule>;
  using EpilogueContext = epilogue::EpilogueContext<EpilogueTileShape, EpilogueTile, ElementD,
                                                    typename Tile::Schedule::Epilogue,
                                                    kEpilogueLoadStages, kEpilogueStoreStages>;
  static_assert(detail::HasCallbacks<Program, EpilogueContext>::value,
                "An epilogue Program needs `template <class Ctx> using Callbacks = <primitive tree>;` "
                "that is valid for this kernel's EpilogueContext (see docs/epilogue.md)");
  using Callbacks = typename Program::template Callbacks<EpilogueContext>;

  // C is void: D = program(acc). Inputs beyond A and B come in through the program's nodes.
  using BuiltEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, EpilogueTileShape, ClusterShape,
      EpilogueTile, ElementAccumulator, ElementAccumulator, void, LayoutD, kAlignmentD, ElementD,
      LayoutD, kAlignmentD, typename Tile::Schedule::Epilogue, Callbacks>::CollectiveOp;
  static constexpr bool kAccumulateIntoD = detail::AccumulatesIntoD<Program>::value;
  static_assert(!kAccumulateIntoD || std::is_same_v<ElementD, cutlass::bfloat16_t> ||
                    std::is_same_v<ElementD, float>,
                "kAccumulateIntoD: TMA reduce-add into D is supported for bf16 and fp32 D only");
  static_assert(!kOverlap || !std::is_same_v<ElementD, float>,
                "OverlapCooperative hands the tile over in bf16: no fp32 D");
  using DStoreOp = detail::TmaStoreOneLane<std::conditional_t<
      kAccumulateIntoD, cute::SM90_TMA_REDUCE_ADD, cute::SM90_TMA_STORE>>;
  using CollectiveEpilogue = typename detail::WithStoreOp<
      typename detail::WithStages<BuiltEpilogue, kEpilogueLoadStages, kEpilogueStoreStages>::type,
      DStoreOp>::type;
  static_assert(CollectiveEpilogue::DispatchPolicy::StagesC ==
                        EpilogueContext::Descriptor::StagesC &&
                    CollectiveEpilogue::DispatchPolicy::StagesD ==
                        EpilogueContext::Descriptor::StagesD,
                "the epilogue's load and store nodes and its collective must have the same stage "
                "counts");
  static_assert(!kOverlap || !detail::NeedsFp32Accumulator<Program>::value,
                "a program that needs the fp32 accumulator cannot take OverlapCooperative's bf16 "
                "handoff (it would round twice): scripts/instances.py leaves that config out for it");

  // The epilogue warp group's MMA shape, for OverlapCooperative: only its accumulator layout is
  // used (the operands' majors do not change it).
  using EpilogueTiledMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<ElementA, ElementB, ElementAccumulator, EpilogueTileShape,
                                 cute::GMMA::Major::K, cute::GMMA::Major::K>()));
  // The kernel's own shared memory beyond the collectives': OverlapCooperative's handoff and its
  // few extra barriers.
  static constexpr int kKernelSharedBytes =
      kOverlap ? detail::kOverlapHandoffBytes + 256 : 0;

  using BuiltMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignmentAB,
      ElementB, LayoutB, kAlignmentAB, ElementAccumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage)) + kKernelSharedBytes>,
      typename Tile::Schedule::Mainloop>::CollectiveOp;
  // OverlapCooperative: two warp groups along M, each a 64 x 128 atom (detail::WithTiledMma).
  // Operand majors as the builder reads them from the layouts.
  using OverlapMainloopMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<
          ElementA, ElementB, ElementAccumulator, EpilogueTileShape,
          cutlass::gemm::collective::detail::gmma_ss_tag_to_major_A<ElementA, LayoutA>(),
          cutlass::gemm::collective::detail::gmma_ss_tag_to_major_B<ElementB, LayoutB>()>(),
      cute::Layout<cute::Shape<cute::_2, cute::_1, cute::_1>>{}));
  using CollectiveMainloop =
      typename std::conditional_t<kOverlap, detail::WithTiledMma<BuiltMainloop, OverlapMainloopMma>,
                                  detail::Identity<BuiltMainloop>>::type;

  using Kernel = std::conditional_t<
      kOverlap,
      OverlapCooperativeKernel<cute::Shape<int, int, int, int>, CollectiveMainloop,
                               CollectiveEpilogue, EpilogueTiledMma, EpilogueTileShape>,
      cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, CollectiveMainloop,
                                           CollectiveEpilogue, typename Tile::TileScheduler>>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using Arguments = typename Device::Arguments;
  using FusionArguments = decltype(Arguments{}.epilogue.thread);
};

}  // namespace coda::gemm
