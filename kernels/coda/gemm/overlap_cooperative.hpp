// SPDX-License-Identifier: BSD-3-Clause
// OverlapCooperativeKernel: a persistent SM90 GEMM kernel whose epilogue runs in its own warp group,
// overlapping the next tile's mainloop (docs/design.md §10.2). Device-side header (CUTLASS);
// included only through gemm/kernel.hpp.
//
// Why. CUTLASS's Cooperative kernel (two MMA warp groups split a 128 × 256 tile) reads half the
// operand bytes per FLOP of Pingpong's 128 × 128, but its MMA warp groups run the epilogue while
// the tensor cores idle; Pingpong hides the epilogue behind the other warp group's mainloop but
// pays the smaller tile. This kernel keeps Cooperative's tile and mainloop (CUTLASS's collective,
// untouched) and hands each finished tile to a third, epilogue-only warp group:
//
//   warp group 0  producer: warp 0 loads A and B (TMA), warp 2 the epilogue's own loads
//   warp groups 1, 2  MMA: the 128 × 256 tile, 64 rows each, as Cooperative
//   warp group 3  epilogue: CUTLASS's collective epilogue and the program's EVT, run on the tile
//                 as four 64 × 128 "virtual tiles" (a Pingpong-shaped one-warp-group epilogue)
//
// The handoff. The accumulators (128 fp32 a thread) cannot move between warp groups in
// registers, so the MMA warp groups round them to bf16 (what the framework's matmul stores; the
// numerics contract's reference rounds there too) and write them to one 64 KB shared-memory
// buffer: thread t of MMA warp group h writes its values in order, chunk c at [h][q][c][t]
// (16-byte chunks, consecutive threads adjacent: conflict-free), and thread t of the epilogue
// warp group reads the same chunks back into the
// accumulator fragment of a 64 x 128 wgmma tile. The MMA warp groups run 64 x 128 wgmma atoms
// (two per k-step; gemm/kernel.hpp says why), so a thread's 128 values are exactly its two
// virtual tiles' fragments, one after the other (static_asserts below). Two named barriers order
// it: "full" (MMA arrives, epilogue waits) and "empty" (the reverse); the epilogue releases the
// buffer as soon as it has read the last quarter, before running that quarter's epilogue. The
// MMA warp groups wait on "empty" only when an epilogue outlasts a mainloop.
//
// What it costs: 64 KB of shared memory (the mainloop keeps ~144 KB, six stages of K = 32:
// gemm/kernel.hpp, kMainloopKBlock) and the register split below. fp32 D (weight gradients) cannot
// take the bf16 handoff, so this kernel is compiled for bf16 and void D only (scripts/instances.py).
// Static persistent scheduling only (no stream-K, no dynamic scheduler); batch L = 1.
#pragma once

#include <cute/arch/cluster_sm90.hpp>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/grid_dependency_control.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/gemm.h>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/pipeline/pipeline.hpp>

namespace coda::gemm {

namespace detail {
// The 128 x 256 tile in bf16: 64 KB of shared memory the mainloop's stages give up.
constexpr int kOverlapHandoffBytes = 128 * 256 * 2;

// Named barriers with a compiler memory fence: the handoff's shared-memory writes and reads must
// stay on their side of the arrive and the sync (CUTLASS's NamedBarrier has no "memory" clobber).
// IDs after CUTLASS's reserved ones (the collective epilogue uses its own).
CUTLASS_DEVICE void handoff_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" : : "r"(id), "r"(threads) : "memory");
}
CUTLASS_DEVICE void handoff_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

// Eight fp32 accumulators rounded to bf16 (nearest even; NaN stays NaN) in one 16-byte chunk, and
// back.
CUTLASS_DEVICE uint4 pack_bf16x8(float const* v) {
  uint32_t w[4];
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < 4; ++i) {
    cutlass::Array<cutlass::bfloat16_t, 2> pair;
    pair[0] = cutlass::bfloat16_t(v[2 * i]);
    pair[1] = cutlass::bfloat16_t(v[2 * i + 1]);
    w[i] = reinterpret_cast<uint32_t const&>(pair);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}
CUTLASS_DEVICE void unpack_bf16x8(uint4 chunk, float* v) {
  const uint32_t w[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < 4; ++i) {
    auto pair = reinterpret_cast<cutlass::Array<cutlass::bfloat16_t, 2> const&>(w[i]);
    v[2 * i] = float(pair[0]);
    v[2 * i + 1] = float(pair[1]);
  }
}
}  // namespace detail

// ProblemShape: (M, N, K, L). Mainloop: CUTLASS's Cooperative collective for the whole tile.
// Epilogue: CUTLASS's one-warp-group collective built for the 64 × 128 virtual tile.
template <class ProblemShape_, class CollectiveMainloop_, class CollectiveEpilogue_,
          class EpilogueTiledMma_, class VirtualTileShape_>
class OverlapCooperativeKernel {
 public:
  using ProblemShape = ProblemShape_;
  using CollectiveMainloop = CollectiveMainloop_;
  using TileShape = typename CollectiveMainloop::TileShape;
  using TiledMma = typename CollectiveMainloop::TiledMma;
  using ArchTag = typename CollectiveMainloop::ArchTag;
  using ElementA = typename CollectiveMainloop::ElementA;
  using StrideA = typename CollectiveMainloop::StrideA;
  using ElementB = typename CollectiveMainloop::ElementB;
  using StrideB = typename CollectiveMainloop::StrideB;
  using DispatchPolicy = typename CollectiveMainloop::DispatchPolicy;
  using ElementAccumulator = typename CollectiveMainloop::ElementAccumulator;
  using ClusterShape = typename DispatchPolicy::ClusterShape;
  using MainloopArguments = typename CollectiveMainloop::Arguments;
  using MainloopParams = typename CollectiveMainloop::Params;

  using CollectiveEpilogue = CollectiveEpilogue_;
  using EpilogueTiledMma = EpilogueTiledMma_;
  using VirtualTileShape = VirtualTileShape_;  // (64, 128, K-tile)
  using ElementC = typename CollectiveEpilogue::ElementC;
  using StrideC = typename CollectiveEpilogue::StrideC;
  using ElementD = typename CollectiveEpilogue::ElementD;
  using StrideD = typename CollectiveEpilogue::StrideD;
  using EpilogueArguments = typename CollectiveEpilogue::Arguments;
  using EpilogueParams = typename CollectiveEpilogue::Params;

  using TileSchedulerTag = cutlass::gemm::PersistentScheduler;
  using TileScheduler =
      typename cutlass::gemm::kernel::detail::TileSchedulerSelector<TileSchedulerTag, ArchTag,
                                                                    TileShape, ClusterShape>::Scheduler;
  using TileSchedulerArguments = typename TileScheduler::Arguments;
  using TileSchedulerParams = typename TileScheduler::Params;
  static_assert(!TileScheduler::IsDynamicPersistent, "OverlapCooperative: static scheduling only");

  static constexpr int kTileM = cute::size<0>(TileShape{});
  static constexpr int kTileN = cute::size<1>(TileShape{});
  static constexpr int kVirtualM = cute::size<0>(VirtualTileShape{});
  static constexpr int kVirtualN = cute::size<1>(VirtualTileShape{});
  static constexpr int kHalvesM = kTileM / kVirtualM;  // one per MMA warp group
  static constexpr int kQuartersN = kTileN / kVirtualN;
  static_assert(kTileM == 128 && kTileN == 256 && kVirtualM == 64 && kVirtualN == 128,
                "OverlapCooperative: a 128 x 256 tile handed over as 64 x 128 virtual tiles");

  static constexpr uint32_t NumThreadsPerWarpGroup = cutlass::NumThreadsPerWarpGroup;
  static constexpr uint32_t NumMMAThreads = cute::size(TiledMma{});
  static constexpr uint32_t NumEpilogueThreads = cute::size(EpilogueTiledMma{});
  static_assert(NumMMAThreads == 2 * NumThreadsPerWarpGroup, "two MMA warp groups");
  static_assert(NumEpilogueThreads == NumThreadsPerWarpGroup, "one epilogue warp group");
  static constexpr uint32_t MaxThreadsPerBlock =
      NumThreadsPerWarpGroup + NumMMAThreads + NumEpilogueThreads;  // 512
  static constexpr uint32_t MinBlocksPerMultiprocessor = 1;

  // 65,536 registers over 512 threads: producer 128 × 24, MMA 256 × 168 (128 accumulators),
  // epilogue 128 × 152 (64 accumulators and the program's state). ptxas compiles the kernel for
  // its entry count (128: one instruction's operands must fit it) and each warp group's code for
  // what setmaxnreg grants it.
  static constexpr uint32_t LoadRegisterRequirement = 24;
  static constexpr uint32_t MmaRegisterRequirement = 168;
  static constexpr uint32_t EpilogueRegisterRequirement = 152;
  static_assert(NumThreadsPerWarpGroup * LoadRegisterRequirement +
                        NumMMAThreads * MmaRegisterRequirement +
                        NumEpilogueThreads * EpilogueRegisterRequirement <=
                    65536,
                "register split");

  // Accumulator fragments: the MMA warp group's (whole 64 × 256 slice) and the epilogue's (one
  // 64 × 128 virtual tile).
  using MmaFragment = decltype(cute::partition_fragment_C(
      TiledMma{}, cute::take<0, 2>(TileShape{})));
  using EpilogueFragment = decltype(cute::partition_fragment_C(
      EpilogueTiledMma{}, cute::take<0, 2>(VirtualTileShape{})));
  static constexpr int kMmaValues = cute::size(MmaFragment{});
  static constexpr int kEpilogueValues = cute::size(EpilogueFragment{});
  // A wgmma fragment is ((2 columns, 2 row halves, N / 8 column groups), MMA_M, MMA_N), compact
  // and column-major. The MMA warp groups run 64 x 128 atoms (gemm/kernel.hpp), so a thread's
  // 64 x 256 slice is MMA_N = 2 atoms, each a virtual tile's fragment, one after the other.
  static_assert(cute::rank(MmaFragment{}) == 3 && cute::size<1>(MmaFragment{}) == 1 &&
                    cute::size<2>(MmaFragment{}) == kQuartersN &&
                    cute::size<0>(MmaFragment{}) == cute::size<0>(EpilogueFragment{}) &&
                    cute::size<1>(EpilogueFragment{}) == 1 && cute::size<2>(EpilogueFragment{}) == 1,
                "the MMA fragment is not its virtual tiles' fragments in order");
  static_assert(kMmaValues == kQuartersN * kEpilogueValues && kEpilogueValues % 2 == 0,
                "a thread's MMA fragment is its virtual tiles' fragments in order");
  static constexpr int kWordsPerQuarter = kEpilogueValues / 2;  // bf16 pairs
  static constexpr int kChunksPerQuarter = kWordsPerQuarter / 4;  // 16-byte chunks
  static_assert(kWordsPerQuarter % 4 == 0, "16-byte chunks");

  using LoadWarpOrderBarrier = cutlass::OrderedSequenceBarrier<1, 2>;

  struct SharedStorage {
    struct PipelineStorage : cute::aligned_struct<16, cute::_1> {
      alignas(16) typename CollectiveMainloop::PipelineStorage mainloop;
      alignas(16) typename CollectiveEpilogue::PipelineStorage epi_load;
      alignas(16) typename LoadWarpOrderBarrier::SharedStorage load_order;
    } pipelines;

    struct TensorStorage : cute::aligned_struct<128, cute::_1> {
      typename CollectiveEpilogue::TensorStorage epilogue;
      typename CollectiveMainloop::TensorStorage mainloop;
    } tensors;

    // [half h][quarter q][chunk c][thread t]: 16-byte chunks (4 bf16 pairs) of the finished tile.
    alignas(128) uint4 handoff[kHalvesM * kQuartersN * kChunksPerQuarter * NumThreadsPerWarpGroup];
  };
  static constexpr int SharedStorageSize = sizeof(SharedStorage);
  static constexpr int kHandoffBytes =
      kHalvesM * kQuartersN * kChunksPerQuarter * NumThreadsPerWarpGroup * sizeof(uint4);
  static_assert(kHandoffBytes == detail::kOverlapHandoffBytes,
                "gemm/kernel.hpp's mainloop carve-out must hold the handoff");

  struct Arguments {
    cutlass::gemm::GemmUniversalMode mode{};
    ProblemShape problem_shape{};
    MainloopArguments mainloop{};
    EpilogueArguments epilogue{};
    cutlass::KernelHardwareInfo hw_info{};
    TileSchedulerArguments scheduler{};
  };

  struct Params {
    cutlass::gemm::GemmUniversalMode mode{};
    ProblemShape problem_shape{};
    MainloopParams mainloop{};
    EpilogueParams epilogue{};
    cutlass::KernelHardwareInfo hw_info{};
    TileSchedulerParams scheduler{};
    void* workspace{nullptr};
  };

  static Params to_underlying_arguments(Arguments const& args, void* workspace) {
    int sm_count = args.hw_info.sm_count;
    if (sm_count <= 0)
      sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(args.hw_info.device_id);
    cutlass::KernelHardwareInfo hw_info{args.hw_info.device_id, sm_count,
                                        cute::max(args.hw_info.max_active_clusters, 0)};
    auto problem_shape_MNKL = cute::append<4>(args.problem_shape, 1);
    // The epilogue's workspace first, then the scheduler's (none for the static scheduler).
    TileSchedulerParams scheduler = TileScheduler::to_underlying_arguments(
        problem_shape_MNKL, TileShape{}, ClusterShape{}, hw_info, args.scheduler, nullptr);
    return {args.mode,
            args.problem_shape,
            CollectiveMainloop::to_underlying_arguments(args.problem_shape, args.mainloop, nullptr),
            CollectiveEpilogue::to_underlying_arguments(args.problem_shape, args.epilogue, workspace),
            hw_info,
            scheduler,
            workspace};
  }

  static bool can_implement(Arguments const& args) {
    bool ok = args.mode == cutlass::gemm::GemmUniversalMode::kGemm &&
              cute::get<3>(cute::append<4>(args.problem_shape, 1)) == 1;
    ok &= CollectiveMainloop::can_implement(args.problem_shape, args.mainloop);
    ok &= CollectiveEpilogue::can_implement(args.problem_shape, args.epilogue);
    ok &= TileScheduler::can_implement(args.scheduler);
    return ok;
  }

  static size_t get_workspace_size(Arguments const& args) {
    return CollectiveEpilogue::get_workspace_size(args.problem_shape, args.epilogue);
  }

  static cutlass::Status initialize_workspace(Arguments const& args, void* workspace = nullptr,
                                              cudaStream_t stream = nullptr,
                                              cutlass::CudaHostAdapter* adapter = nullptr) {
    return CollectiveEpilogue::initialize_workspace(args.problem_shape, args.epilogue, workspace,
                                                    stream, adapter);
  }

  static dim3 get_grid_shape(Params const& params) {
    TileSchedulerArguments args{};
    args.max_swizzle_size = 1 << params.scheduler.log_swizzle_size_;
    args.raster_order = params.scheduler.raster_order_ == TileScheduler::RasterOrder::AlongN
                            ? TileScheduler::RasterOrderOptions::AlongN
                            : TileScheduler::RasterOrderOptions::AlongM;
    return TileScheduler::get_grid_shape(params.scheduler, params.problem_shape, TileShape{},
                                         ClusterShape{}, params.hw_info, args);
  }

  static dim3 get_block_shape() { return dim3(MaxThreadsPerBlock, 1, 1); }

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    run(params, smem_buf);
#else
    printf("ERROR: OverlapCooperativeKernel needs sm_90a.\n");
#endif
  }

 private:
  enum class WarpGroupRole { Producer = 0, Mma0 = 1, Mma1 = 2, Epilogue = 3 };
  enum class ProducerWarpRole { Mainloop = 0, Idle = 1, EpilogueLoad = 2, Idle3 = 3 };

  static constexpr uint32_t kHandoffFullBarrier =
      uint32_t(cutlass::arch::ReservedNamedBarriers::FirstUserBarrier);
  static constexpr uint32_t kHandoffEmptyBarrier = kHandoffFullBarrier + 1;
  static constexpr uint32_t kHandoffThreads = NumMMAThreads + NumEpilogueThreads;

  // The virtual tile (h, q) of the tile at (m, n): its coordinate in virtual-tile units.
  template <class M, class N, class L>
  CUTLASS_DEVICE static auto virtual_coord(M m, N n, L l, int h, int q) {
    return cute::make_coord(m * kHalvesM + h, n * kQuartersN + q, cute::_, l);
  }

  CUTLASS_DEVICE void run(Params const& params, char* smem_buf) {
    using namespace cute;
    SharedStorage& shared_storage = *reinterpret_cast<SharedStorage*>(smem_buf);

    const int thread_idx = int(threadIdx.x);
    const int lane_idx = cutlass::canonical_lane_idx();
    const int warp_idx = cutlass::canonical_warp_idx_sync();
    const int warp_group_thread_idx = thread_idx % NumThreadsPerWarpGroup;
    const auto role = WarpGroupRole(cutlass::canonical_warp_group_idx());
    const auto producer_role = ProducerWarpRole(warp_idx % cutlass::NumWarpsPerWarpGroup);
    const int lane_predicate = cute::elect_one_sync();
    const uint32_t block_rank_in_cluster = cute::block_rank_in_cluster();

    if (warp_idx == 0 && lane_predicate) {
      CollectiveMainloop::prefetch_tma_descriptors(params.mainloop);
      CollectiveEpilogue::prefetch_tma_descriptors(params.epilogue);
    }

    // Mainloop pipeline: producer warp 0, consumers the MMA warp groups.
    using MainloopPipeline = typename CollectiveMainloop::MainloopPipeline;
    typename MainloopPipeline::Params mainloop_pipeline_params;
    if (role == WarpGroupRole::Producer && producer_role == ProducerWarpRole::Mainloop)
      mainloop_pipeline_params.role = MainloopPipeline::ThreadCategory::Producer;
    if (role == WarpGroupRole::Mma0 || role == WarpGroupRole::Mma1)
      mainloop_pipeline_params.role = MainloopPipeline::ThreadCategory::Consumer;
    mainloop_pipeline_params.is_leader = warp_group_thread_idx == 0;
    mainloop_pipeline_params.num_consumers = NumMMAThreads;
    mainloop_pipeline_params.num_producers = CollectiveMainloop::NumProducerThreadEvents;
    mainloop_pipeline_params.transaction_bytes = params.mainloop.tma_transaction_bytes;
    MainloopPipeline mainloop_pipeline(shared_storage.pipelines.mainloop, mainloop_pipeline_params,
                                       ClusterShape{});

    // Epilogue load pipeline: producer warp 2, consumer the epilogue warp group.
    using EpiLoadPipeline = typename CollectiveEpilogue::LoadPipeline;
    typename EpiLoadPipeline::Params epi_load_pipeline_params;
    if (role == WarpGroupRole::Producer && producer_role == ProducerWarpRole::EpilogueLoad)
      epi_load_pipeline_params.role = EpiLoadPipeline::ThreadCategory::Producer;
    if (role == WarpGroupRole::Epilogue)
      epi_load_pipeline_params.role = EpiLoadPipeline::ThreadCategory::Consumer;
    epi_load_pipeline_params.dst_blockid = block_rank_in_cluster;
    epi_load_pipeline_params.producer_arv_count = cutlass::NumThreadsPerWarp;
    epi_load_pipeline_params.consumer_arv_count = NumEpilogueThreads;
    if constexpr (CollectiveEpilogue::RequiresTransactionBytes)
      epi_load_pipeline_params.transaction_bytes = params.epilogue.tma_transaction_bytes;
    EpiLoadPipeline epi_load_pipeline(shared_storage.pipelines.epi_load, epi_load_pipeline_params);

    using EpiStorePipeline = typename CollectiveEpilogue::StorePipeline;
    typename EpiStorePipeline::Params epi_store_pipeline_params;
    epi_store_pipeline_params.always_wait = true;
    EpiStorePipeline epi_store_pipeline(epi_store_pipeline_params);

    typename LoadWarpOrderBarrier::Params load_order_params;
    load_order_params.group_id = producer_role == ProducerWarpRole::Mainloop ? 0 : 1;
    load_order_params.group_size = cutlass::NumThreadsPerWarp;
    LoadWarpOrderBarrier load_order_barrier(shared_storage.pipelines.load_order, load_order_params);

    // Pipeline init visible to every CTA of the cluster before anyone uses it.
    if constexpr (size(ClusterShape{}) > 1) {
      cute::cluster_arrive_relaxed();
    } else {
      __syncthreads();
    }

    auto problem_shape_MNKL = append<4>(params.problem_shape, Int<1>{});
    TileScheduler scheduler{params.scheduler};
    CollectiveMainloop collective_mainloop;
    auto load_inputs = collective_mainloop.load_init(problem_shape_MNKL, params.mainloop);
    Tensor gA_mkl = get<0>(load_inputs);
    Tensor gB_nkl = get<1>(load_inputs);
    auto tile_coord = [&](auto const& work) {
      return make_coord(idx2crd(work.M_idx, shape<2>(gA_mkl)), idx2crd(work.N_idx, shape<2>(gB_nkl)),
                        _, idx2crd(work.L_idx, shape<4>(gB_nkl)));
    };

    if constexpr (size(ClusterShape{}) > 1) cute::cluster_wait();

    if (role == WarpGroupRole::Producer) {
      cutlass::arch::warpgroup_reg_dealloc<LoadRegisterRequirement>();
      auto work = scheduler.initial_work_tile_info(ClusterShape{});

      if (producer_role == ProducerWarpRole::Mainloop) {
        cutlass::arch::wait_on_dependent_grids();
        typename CollectiveMainloop::PipelineState state =
            cutlass::make_producer_start_state<MainloopPipeline>();
        bool first = true;
        while (work.is_valid()) {
          auto k_tiles = TileScheduler::get_work_k_tile_count(work, problem_shape_MNKL, TileShape{});
          auto k_start = TileScheduler::get_work_k_tile_start(work);
          auto k_tile_iter =
              cute::make_coord_iterator(idx2crd(k_start, shape<3>(gA_mkl)), shape<3>(gA_mkl));
          collective_mainloop.load(params.mainloop, mainloop_pipeline, state, load_inputs,
                                   tile_coord(work), k_tile_iter, k_tiles, lane_idx,
                                   block_rank_in_cluster, shared_storage.tensors.mainloop);
          state.advance(k_tiles);
          if (first) {  // the epilogue's loads start after the first tile's operand loads
            load_order_barrier.arrive();
            first = false;
          }
          work = get<0>(scheduler.fetch_next_work(work));
        }
        collective_mainloop.load_tail(mainloop_pipeline, state);
      } else if (producer_role == ProducerWarpRole::EpilogueLoad) {
        CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
        if (collective_epilogue.is_producer_load_needed()) {
          cutlass::arch::wait_on_dependent_grids();
          if (work.is_valid()) load_order_barrier.wait();
          EpilogueTiledMma epi_tiled_mma;
          typename CollectiveEpilogue::LoadPipelineState state =
              cutlass::make_producer_start_state<EpiLoadPipeline>();
          while (work.is_valid()) {
            auto [m, n, k, l] = tile_coord(work);
            CUTLASS_PRAGMA_NO_UNROLL
            for (int h = 0; h < kHalvesM; ++h) {
              CUTLASS_PRAGMA_NO_UNROLL
              for (int q = 0; q < kQuartersN; ++q) {
                state = collective_epilogue.load(epi_load_pipeline, state, problem_shape_MNKL,
                                                 VirtualTileShape{}, virtual_coord(m, n, l, h, q),
                                                 epi_tiled_mma, lane_idx,
                                                 shared_storage.tensors.epilogue);
              }
            }
            work = get<0>(scheduler.fetch_next_work(work));
          }
          collective_epilogue.load_tail(epi_load_pipeline, state);
        }
      }
    } else if (role == WarpGroupRole::Mma0 || role == WarpGroupRole::Mma1) {
      cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();
      const int mma_thread_idx = thread_idx - int(NumThreadsPerWarpGroup);
      const int half = int(role) - int(WarpGroupRole::Mma0);
      uint4* handoff = shared_storage.handoff +
                       half * kQuartersN * kChunksPerQuarter * NumThreadsPerWarpGroup +
                       warp_group_thread_idx;
      TiledMma tiled_mma;
      typename CollectiveMainloop::PipelineState state;
      auto work = scheduler.initial_work_tile_info(ClusterShape{});
      while (work.is_valid()) {
        auto k_tiles = TileScheduler::get_work_k_tile_count(work, problem_shape_MNKL, TileShape{});
        auto accumulators = partition_fragment_C(tiled_mma, take<0, 2>(TileShape{}));
        collective_mainloop.mma(mainloop_pipeline, state, accumulators, k_tiles, mma_thread_idx,
                                shared_storage.tensors.mainloop, params.mainloop);
        collective_mainloop.mma_tail(mainloop_pipeline, state, k_tiles);
        state.advance(k_tiles);

        // The buffer is free once the epilogue has read the previous tile.
        detail::handoff_sync(kHandoffEmptyBarrier, kHandoffThreads);
        CUTLASS_PRAGMA_UNROLL
        for (int c = 0; c < kMmaValues / 8; ++c)
          handoff[c * NumThreadsPerWarpGroup] = detail::pack_bf16x8(&accumulators(8 * c));
        detail::handoff_arrive(kHandoffFullBarrier, kHandoffThreads);
        work = get<0>(scheduler.fetch_next_work(work));
      }
      // Matches the epilogue's last release, so no barrier is left mid-phase.
      detail::handoff_sync(kHandoffEmptyBarrier, kHandoffThreads);
    } else {  // WarpGroupRole::Epilogue
      cutlass::arch::warpgroup_reg_alloc<EpilogueRegisterRequirement>();
      CollectiveEpilogue collective_epilogue(params.epilogue, shared_storage.tensors.epilogue);
      EpilogueTiledMma epi_tiled_mma;
      typename CollectiveEpilogue::LoadPipelineState load_state;
      typename CollectiveEpilogue::StorePipelineState store_state =
          cutlass::make_producer_start_state<EpiStorePipeline>();
      const uint4* handoff = shared_storage.handoff + warp_group_thread_idx;
      detail::handoff_arrive(kHandoffEmptyBarrier, kHandoffThreads);  // starts empty
      bool stored = false;
      auto work = scheduler.initial_work_tile_info(ClusterShape{});
      while (work.is_valid()) {
        auto [m, n, k, l] = tile_coord(work);
        detail::handoff_sync(kHandoffFullBarrier, kHandoffThreads);
        CUTLASS_PRAGMA_NO_UNROLL
        for (int v = 0; v < kHalvesM * kQuartersN; ++v) {
          auto accumulators = partition_fragment_C(epi_tiled_mma, take<0, 2>(VirtualTileShape{}));
          CUTLASS_PRAGMA_UNROLL
          for (int c = 0; c < kChunksPerQuarter; ++c)
            detail::unpack_bf16x8(handoff[(v * kChunksPerQuarter + c) * NumThreadsPerWarpGroup],
                                  &accumulators(8 * c));
          if (v == kHalvesM * kQuartersN - 1)
            detail::handoff_arrive(kHandoffEmptyBarrier, kHandoffThreads);
          const int h = v / kQuartersN, q = v % kQuartersN;
          auto [load_next, store_next] = collective_epilogue.store(
              epi_load_pipeline, load_state, epi_store_pipeline, store_state, problem_shape_MNKL,
              VirtualTileShape{}, virtual_coord(m, n, l, h, q), accumulators, epi_tiled_mma,
              warp_group_thread_idx, shared_storage.tensors.epilogue);
          load_state = load_next;
          store_state = store_next;
          stored = true;
        }
        work = get<0>(scheduler.fetch_next_work(work));
      }
      if (stored)
        collective_epilogue.store_tail(epi_load_pipeline, load_state, epi_store_pipeline,
                                       store_state);
    }
  }
};

}  // namespace coda::gemm
