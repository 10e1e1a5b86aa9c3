// SPDX-License-Identifier: BSD-3-Clause
// choose_kernel: every tuned shape gets its table entry, a pure function of the GPU and the shape,
// always an instantiated kernel, and the rule's reasons hold. Every tuned GPU's table is checked
// (choose_kernel_for), not only the current device's: a host without a GPU gets the rule alone.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <vector>

#include "coda/gemm/choose_config.hpp"
#include "coda/gemm/instance.hpp"

namespace coda::gemm {
namespace {

const OperandLayout kLayouts[] = {OperandLayout::kAkBk, OperandLayout::kAkBn, OperandLayout::kAmBn};
const DType kOutputs[] = {DType::kBF16, DType::kF32};

// Each GPU's tuned table as choose_kernel reads it (gemm::tuned_table; none for kUntuned).
const TunedKernel kNoTable[] = {{OperandLayout::kAkBk, 0, 0, 0, {}}};
const TunedKernel* table_or_none(TunedGpu gpu) {
  const TunedKernel* t = tuned_table(gpu);
  return t != nullptr ? t : kNoTable;
}
const struct {
  TunedGpu gpu;
  const TunedKernel* table;
} kGpus[] = {{TunedGpu::kUntuned, table_or_none(TunedGpu::kUntuned)},
             {TunedGpu::kH100, table_or_none(TunedGpu::kH100)},
             {TunedGpu::kH200, table_or_none(TunedGpu::kH200)}};

// The Llama-3 GEMMs at M = 16384 tokens (docs/benchmarks.md §1), forward (M, N, K) =
// (tokens, out, in).
struct Linear {
  int out, in;
};
const Linear kLinears[] = {
    {3072, 2048},  {2048, 2048}, {16384, 2048}, {2048, 8192},  {128256, 2048},   // 1B
    {6144, 4096},  {4096, 4096}, {28672, 4096}, {4096, 14336}, {128256, 4096},   // 8B
    {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}, {128256, 8192}};  // 70B

TEST(ChooseKernel, EveryChoiceIsCompiledIn) {
  // Token counts with a short last wave too: there fill_last_wave picks another grid, which an
  // fp32 D may lack.
  for (int tokens : {1024, 1536, 3000, 5194, 16384})
  for (const auto& [gpu, table] : kGpus) {
    SCOPED_TRACE(std::string(to_string(gpu)) + " M = " + std::to_string(tokens));
    for (const Linear& l : kLinears)
      for (DType out : kOutputs) {
        const struct {
          OperandLayout layout;
          int m, n, k;
        } gemms[] = {{OperandLayout::kAkBk, tokens, l.out, l.in},   // forward
                     {OperandLayout::kAkBn, tokens, l.in, l.out},   // dgrad
                     {OperandLayout::kAmBn, l.out, l.in, tokens}};  // wgrad
        for (auto g : gemms) {
          KernelChoice c = choose_kernel_for(gpu, g.layout, out, g.m, g.n, g.k);
          EXPECT_TRUE(has_instance(g.layout, out, c.config))
              << to_string(g.layout) << " " << g.m << "x" << g.n << "x" << g.k << " -> "
              << to_string(c.config);
          EXPECT_TRUE(c.swizzle == 1 || c.swizzle == 2 || c.swizzle == 4 || c.swizzle == 8);
        }
      }
  }
  for (OperandLayout layout : kLayouts)
    for (DType out : kOutputs)
      for (int m : {1, 199, 1000, 4095})
        for (int n : {1, 199, 1000, 4095})
          for (int k : {1, 199, 4095, 65536})
            EXPECT_TRUE(has_instance(layout, out, choose_kernel(layout, out, m, n, k).config));
}

// Every tuned shape gets exactly its table entry's choice for bf16 D (the tables are tuned for
// it): a later row for the same shape, or a lookup on the wrong keys or GPU, fails here.
TEST(ChooseKernel, EveryTableEntryRoundTrips) {
  for (const auto& [gpu, table] : kGpus)
    for (const TunedKernel* e = table; e->m != 0; ++e) {
      const KernelChoice got = choose_kernel_for(gpu, e->layout, DType::kBF16, e->m, e->n, e->k);
      EXPECT_EQ(got, e->choice) << to_string(gpu) << " " << to_string(e->layout) << " " << e->m
                                << "x" << e->n << "x" << e->k << ": table says "
                                << to_string(e->choice.config) << ", got " << to_string(got.config);
    }
  for (TunedGpu gpu : {TunedGpu::kH100, TunedGpu::kH200})
    EXPECT_GT(tuned_table(gpu)->m, 0) << to_string(gpu) << ": the table is not empty";
}

// The choice is a pure function of (GPU, layout, D dtype, M, N, K): the same answers again in
// reverse order, with another GPU's or shape's call in between, for the tuned shapes, their
// neighbours and untuned ones.
TEST(ChooseKernel, Deterministic) {
  struct Call {
    TunedGpu gpu;
    OperandLayout layout;
    DType out;
    int m, n, k;
    KernelChoice choose() const { return choose_kernel_for(gpu, layout, out, m, n, k); }
  };
  std::vector<Call> calls;
  for (const auto& [gpu, unused] : kGpus) {
    for (const auto& [other_gpu, table] : kGpus)  // every table's shapes on every GPU
      for (const TunedKernel* e = table; e->m != 0; ++e)
        for (DType out : kOutputs)
          for (int dm : {-1, 0, 1}) calls.push_back({gpu, e->layout, out, e->m + dm, e->n, e->k});
    for (OperandLayout layout : kLayouts)
      for (DType out : kOutputs)
        for (int m : {1, 199, 16384})
          for (int k : {1, 4095, 65536}) calls.push_back({gpu, layout, out, m, 1000, k});
  }
  std::vector<KernelChoice> first;
  for (const Call& c : calls) first.push_back(c.choose());
  for (std::size_t i = calls.size(); i-- > 0;) {
    calls[(i * 7 + 3) % calls.size()].choose();  // another call in between
    EXPECT_EQ(calls[i].choose(), first[i])
        << to_string(calls[i].gpu) << " " << to_string(calls[i].layout) << " " << calls[i].m << "x"
        << calls[i].n << "x" << calls[i].k;
  }
}

TEST(TunedShapeDistance, NearestTokenCountServes) {
  EXPECT_EQ(tuned_shape_distance(16384, 4096, 4096, 16384, 4096, 4096), 0.0);
  // Within 2× in the differing dim: |log2| of the ratio (M, or K for a wgrad).
  EXPECT_DOUBLE_EQ(tuned_shape_distance(8192, 4096, 4096, 16384, 4096, 4096), 1.0);
  EXPECT_DOUBLE_EQ(tuned_shape_distance(4096, 4096, 8192, 4096, 4096, 16384), 1.0);
  // Beyond 2× in M where both run ≥ 4 waves of 128 × 256 tiles: the LM head at 5194 tokens is
  // served by its 16384 entry, farther than any entry within 2×.
  EXPECT_NEAR(tuned_shape_distance(5194, 128256, 2048, 16384, 128256, 2048),
              std::log2(16384.0 / 5194), 1e-12);
  EXPECT_NEAR(tuned_shape_distance(65536, 16384, 2048, 16384, 16384, 2048), 2.0, 1e-12);
  // Few tiles at the query (41 × 8 at N = 2048: under 4 waves): the rule, not a far entry.
  EXPECT_TRUE(std::isinf(tuned_shape_distance(5194, 2048, 2048, 16384, 2048, 2048)));
  // Beyond 2× in K (a wgrad's token count) or in N (another width), or two dims apart: never.
  EXPECT_TRUE(std::isinf(tuned_shape_distance(4096, 4096, 65536, 4096, 4096, 16384)));
  EXPECT_TRUE(std::isinf(tuned_shape_distance(16384, 16384, 4096, 16384, 4096, 4096)));
  EXPECT_TRUE(std::isinf(tuned_shape_distance(12288, 6144, 4096, 16384, 4096, 4096)));
}

TEST(ChooseKernel, RuleForUntunedShapes) {
  // Long K against the output: stream-K.
  EXPECT_TRUE(
      is_stream_k(choose_kernel(OperandLayout::kAkBk, DType::kBF16, 1024, 1024, 65536).config));
  // Wide N: raster along M with a swizzle, so CTAs in flight share B tiles in L2.
  KernelChoice wide = choose_kernel(OperandLayout::kAkBk, DType::kBF16, 8192, 100000, 1024);
  EXPECT_EQ(wide.raster, RasterOrder::kAlongM);
  EXPECT_GT(wide.swizzle, 1);
}

// CUTLASS's persistent scheduler rounds the tile grid up to swizzle × cluster tiles in both modes
// and runs the padding tiles (scheduled_tiles); a choice made for another token count gets a
// swizzle whose padding fits this grid (fit_swizzle).
TEST(FitSwizzle, PaddingAsCutlassSchedulesIt) {
  const KernelChoice lm_head{TileConfig::kCoop256x128Cluster1x2, RasterOrder::kAlongM, 8};
  EXPECT_EQ(scheduled_tiles(lm_head, 16384, 128256), 64L * 1008);  // 1002 columns of 128 -> 1008
  EXPECT_EQ(scheduled_tiles(lm_head, 9216, 128256), 40L * 1008);   // 36 rows of 256 -> 40
  EXPECT_EQ(fit_swizzle(lm_head, 16384, 128256).swizzle, 8);
  EXPECT_EQ(fit_swizzle(lm_head, 9216, 128256).swizzle, 4);        // 36 rows -> 36, 1008 columns
  // Under 6 tiles in a mode CUTLASS caps swizzle 8 at 4: 5 × 5 tiles, cluster 2 × 1 -> 6 × 5 rows
  // and columns, then rounded to 4 × 2 = 8 rows and 4 columns -> 8 × 8.
  const KernelChoice small{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongN, 8};
  EXPECT_EQ(scheduled_tiles(small, 5 * 128, 5 * 256), 8L * 8);
  EXPECT_EQ(fit_swizzle(small, 5 * 128, 5 * 256).swizzle, 1);
  // Only the swizzle changes while it stays above 1.
  const KernelChoice fitted = fit_swizzle(lm_head, 9216, 128256);
  EXPECT_EQ(fitted.config, lm_head.config);
  EXPECT_EQ(fitted.raster, lm_head.raster);
  // Fitted down to 1 (94 rows of 128 at M = 11951: swizzle 2 with the 2 × 1 cluster pads to 96),
  // the walk goes along the shorter mode: the tuned raster was for bands of 4.
  const KernelChoice gate_up{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongN, 4};
  const KernelChoice at_11951 = fit_swizzle(gate_up, 11951, 57344);
  EXPECT_EQ(at_11951.swizzle, 1);
  EXPECT_EQ(at_11951.raster, RasterOrder::kHeuristic);
  EXPECT_EQ(at_11951.config, gate_up.config);
  // A row tuned with swizzle 1 keeps its raster.
  const KernelChoice plain{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongN, 1};
  EXPECT_EQ(fit_swizzle(plain, 11951, 57344).raster, RasterOrder::kAlongN);
  // A Pingpong row keeps its raster too (the 1B LM head's cross-entropy: 94 rows of 128 pad to
  // 96 under swizzle 2, so the swizzle falls to 1).
  const KernelChoice pingpong{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2};
  const KernelChoice pingpong_fitted = fit_swizzle(pingpong, 12000, 128256);
  EXPECT_EQ(pingpong_fitted.swizzle, 1);
  EXPECT_EQ(pingpong_fitted.raster, RasterOrder::kAlongN);
  // Every Pingpong config, by its schedule: the 128 × 192 tile too.
  const KernelChoice pingpong_192{TileConfig::kPingpong128x192Cluster2x1, RasterOrder::kAlongN, 2};
  EXPECT_EQ(fit_swizzle(pingpong_192, 12000, 128256).swizzle, 1);
  EXPECT_EQ(fit_swizzle(pingpong_192, 12000, 128256).raster, RasterOrder::kAlongN);
  EXPECT_TRUE(is_pingpong(TileConfig::kPingpong128x192Cluster2x1));
  EXPECT_FALSE(is_pingpong(TileConfig::kCoop128x256Cluster2x1));
  EXPECT_FALSE(is_pingpong(TileConfig::kStreamKCoop128x256Cluster2x1));
}

// The share of the SM waves a choice's tiles fill, and what replaces a choice whose last wave
// would run mostly empty (fill_last_wave): a tile grid that fills its waves, else stream-K (its
// own decomposition from K = 8192).
TEST(FillLastWave, ReplacesAChoiceWhoseLastWaveIsMostlyEmpty) {
  const KernelChoice coop{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kHeuristic, 1};
  // 1B o_proj N = K = 2048: M = 4096 is 32 × 8 = 256 tiles, 0.97 of two waves of 132.
  EXPECT_NEAR(wave_fill(coop, 4096, 2048), 256.0 / 264.0, 1e-12);
  EXPECT_EQ(fill_last_wave(coop, 4096, 2048, 2048), coop);
  // M = 3000: 24 × 8 = 192 tiles, 0.73 of two waves; Pingpong's 24 × 16 tiles keep 384 of 396
  // SM slots busy, at any K.
  EXPECT_NEAR(wave_fill(coop, 3000, 2048), 192.0 / 264.0, 1e-12);
  for (int k : {2048, 16384}) {
    const KernelChoice pp = fill_last_wave(coop, 3000, 2048, k);
    EXPECT_EQ(pp.config, TileConfig::kPingpong128x128Cluster2x1);
    EXPECT_NEAR(sm_fill(pp, 3000, 2048), 384.0 / 396.0, 1e-12);
  }
  // M = 1536, N = 2048: no grid fills (Pingpong 192 tiles of 264); with K = 16384 stream-K with
  // the stream-K decomposition.
  const KernelChoice sk = fill_last_wave(coop, 1536, 2048, 16384);
  EXPECT_EQ(sk.config, TileConfig::kStreamKCoop128x256Cluster2x1);
  EXPECT_EQ(sk.decomposition, Decomposition::kStreamK);
  EXPECT_EQ(sk.swizzle, 1);
  // M = 1536, N = 3072: no grid fills its waves (Pingpong's 12 × 24 tiles 288 of 396): stream-K
  // with CUTLASS's heuristic decomposition.
  const KernelChoice short_k = fill_last_wave(coop, 1536, 3072, 2048);
  EXPECT_EQ(short_k.config, TileConfig::kStreamKCoop128x256Cluster2x1);
  EXPECT_EQ(short_k.decomposition, Decomposition::kHeuristic);
  // M = 5194, N = 4096: the 2 × 1 cluster pads 41 tile rows to 42 (672 tiles, 0.85 of 6 waves),
  // the 1 × 2 one does not (656 of 660).
  const KernelChoice pingpong_8b{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 1};
  const KernelChoice coop_1x2 = fill_last_wave(pingpong_8b, 5194, 4096, 4096);
  EXPECT_EQ(coop_1x2.config, TileConfig::kCoop128x256Cluster1x2);
  EXPECT_EQ(coop_1x2.raster, RasterOrder::kHeuristic);
  // A Pingpong tile of 128 × 128 is half the work: 64 × 16 tiles at 8192 × 2048 fill 512 / 528.
  const KernelChoice pingpong{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2};
  EXPECT_NEAR(wave_fill(pingpong, 8192, 2048), 512.0 / 528.0, 1e-12);
  // A Pingpong choice whose tiles fill the SMs stays as it is (M = 1024: 8 × 16 tiles on 132).
  EXPECT_LT(wave_fill(pingpong, 1024, 2048), 0.9);
  EXPECT_EQ(fill_last_wave(pingpong, 1024, 2048, 2048), pingpong);
  // A stream-K choice stays as it is.
  const KernelChoice tuned_sk{TileConfig::kStreamKCoop128x256Cluster2x1, RasterOrder::kAlongN, 2,
                              Decomposition::kStreamK};
  EXPECT_EQ(fill_last_wave(tuned_sk, 3000, 2048, 2048), tuned_sk);
  // Through choose_kernel, shapes no row names with a short last wave: stream-K where no grid
  // fills (M = 1536, N = 2048, K = 16384), Pingpong where its grid does (M = 3000).
  for (const auto& [gpu, table] : kGpus) {
    EXPECT_TRUE(is_stream_k(choose_kernel_for(gpu, OperandLayout::kAkBk, DType::kBF16, 1536, 2048,
                                              16384).config))
        << to_string(gpu);
    EXPECT_EQ(choose_kernel_for(gpu, OperandLayout::kAkBk, DType::kBF16, 3000, 2048, 2048).config,
              TileConfig::kPingpong128x128Cluster2x1)
        << to_string(gpu);
  }
}

// The data-parallel choice for the fused dgrad programs and the cross-entropy chunk GEMMs: the
// same tile, raster and swizzle choose_kernel picks before fill_last_wave; never stream-K.
TEST(ChooseKernel, DataParallelChoiceIsTheChoiceBeforeTheLastWaveFill) {
  for (const auto& [gpu, table] : kGpus)
    for (const Linear& l : kLinears)
      for (int tokens : {1000, 3000, 5194, 12000, 16384}) {
        const KernelChoice full =
            choose_kernel_for(gpu, OperandLayout::kAkBn, DType::kBF16, tokens, l.in, l.out);
        const KernelChoice dp =
            choose_data_parallel_kernel_for(gpu, OperandLayout::kAkBn, DType::kBF16, tokens, l.in,
                                            l.out);
        const std::string where = std::string(to_string(gpu)) + " " + std::to_string(tokens) + "x" +
                                  std::to_string(l.in) + "x" + std::to_string(l.out);
        EXPECT_FALSE(is_stream_k(dp.config)) << where;
        EXPECT_EQ(dp.decomposition, Decomposition::kHeuristic) << where;
        // The plain GEMM runs the same choice, or what fill_last_wave made of it.
        if (!is_stream_k(full.config))
          EXPECT_TRUE(full == dp || full == fill_last_wave(dp, tokens, l.in, l.out)) << where;
      }
  // 1B o_proj dgrad at M = 3000 fills 0.73 of two waves: the plain GEMM runs Pingpong (K = 2048),
  // the data-parallel choice keeps the Cooperative tile with its fitted scheduler settings.
  const KernelChoice dp =
      choose_data_parallel_kernel_for(TunedGpu::kUntuned, OperandLayout::kAkBn, DType::kBF16,
                                      3000, 2048, 2048);
  EXPECT_EQ(
      choose_kernel_for(TunedGpu::kUntuned, OperandLayout::kAkBn, DType::kBF16, 3000, 2048, 2048)
          .config,
      TileConfig::kPingpong128x128Cluster2x1);
  EXPECT_EQ(dp, fit_swizzle(dp, 3000, 2048));
  EXPECT_FALSE(is_stream_k(dp.config));
}

// Every choice at a token count no table row was timed at pads at most 2 % over swizzle 1, while
// a table row's own shape gets the row as tuned (EveryTableEntryRoundTrips).
TEST(FitSwizzle, ChoicesAtUntunedTokenCountsFitTheirGrid) {
  for (const auto& [gpu, table] : kGpus)
    for (const Linear& l : kLinears)
      for (int tokens : {1000, 6225, 9216, 13392, 17774, 40000}) {
        const struct {
          OperandLayout layout;
          int m, n, k;
        } gemms[] = {{OperandLayout::kAkBk, tokens, l.out, l.in},
                     {OperandLayout::kAkBn, tokens, l.in, l.out}};
        for (auto g : gemms) {
          KernelChoice c = choose_kernel_for(gpu, g.layout, DType::kBF16, g.m, g.n, g.k);
          KernelChoice one = c;
          one.swizzle = 1;
          EXPECT_LE(double(scheduled_tiles(c, g.m, g.n)), 1.02 * double(scheduled_tiles(one, g.m, g.n)))
              << to_string(gpu) << " " << to_string(g.layout) << " " << g.m << "x" << g.n << "x"
              << g.k << " swizzle " << c.swizzle;
        }
      }
}

TEST(ChooseKernel, Float32OutputKeepsTheScheduleFamily) {
  for (const auto& [gpu, table] : kGpus)
    for (OperandLayout layout : kLayouts) {
      KernelChoice bf16 = choose_kernel_for(gpu, layout, DType::kBF16, 16384, 4096, 14336);
      KernelChoice f32 = choose_kernel_for(gpu, layout, DType::kF32, 16384, 4096, 14336);
      EXPECT_EQ(is_stream_k(bf16.config), is_stream_k(f32.config)) << to_string(gpu);
      EXPECT_EQ(bf16.raster, f32.raster) << to_string(gpu);
      EXPECT_EQ(bf16.swizzle, f32.swizzle) << to_string(gpu);
    }
}

TEST(TunedGpu, OnlyThePartsTheTablesWereTunedOn) {
  EXPECT_EQ(tuned_gpu_from("NVIDIA H100 80GB HBM3", 132), TunedGpu::kH100);
  EXPECT_EQ(tuned_gpu_from("NVIDIA H200", 132), TunedGpu::kH200);
  EXPECT_EQ(tuned_gpu_from("NVIDIA GH200 480GB", 132), TunedGpu::kH200);
  EXPECT_EQ(tuned_gpu_from("NVIDIA H100 PCIe", 114), TunedGpu::kUntuned);
  EXPECT_EQ(tuned_gpu_from("NVIDIA H100 NVL", 132), TunedGpu::kUntuned);
  EXPECT_EQ(tuned_gpu_from("NVIDIA H100 80GB HBM3", 114), TunedGpu::kUntuned);  // a MIG slice
  EXPECT_EQ(tuned_gpu_from("NVIDIA A100-SXM4-80GB", 108), TunedGpu::kUntuned);
}

TEST(Instances, EveryBf16ConfigInEveryLayout) {
  for (OperandLayout layout : kLayouts)
    for (int c = 0; c < kNumTileConfigs; ++c) {
      const GemmInstance* inst = find_instance(layout, DType::kBF16, static_cast<TileConfig>(c));
      ASSERT_NE(inst, nullptr) << to_string(layout) << " " << to_string(static_cast<TileConfig>(c));
      EXPECT_EQ(inst->layout, layout);
      EXPECT_NE(inst->run, nullptr);
      EXPECT_NE(inst->workspace_bytes, nullptr);
    }
  EXPECT_EQ(find_instance(OperandLayout::kAkBk, DType::kF16, TileConfig::kCoop128x256Cluster2x1),
            nullptr);
}

}  // namespace
}  // namespace coda::gemm
