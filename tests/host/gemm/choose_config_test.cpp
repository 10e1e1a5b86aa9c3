// SPDX-License-Identifier: BSD-3-Clause
// choose_kernel: deterministic, always an instantiated kernel, and the rule's reasons hold.
#include <gtest/gtest.h>

#include "coda/gemm/choose_config.hpp"
#include "coda/gemm/instance.hpp"

namespace coda::gemm {
namespace {

const OperandLayout kLayouts[] = {OperandLayout::kAkBk, OperandLayout::kAkBn, OperandLayout::kAmBn};
const DType kOutputs[] = {DType::kBF16, DType::kF32};

// The Llama-3 GEMMs at M = 16384 tokens (docs/benchmarks.md §1), forward (M, N, K) =
// (tokens, out, in).
struct Linear { int out, in; };
const Linear kLinears[] = {
    {3072, 2048}, {2048, 2048}, {16384, 2048}, {2048, 8192}, {128256, 2048},     // 1B
    {6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}, {128256, 4096},    // 8B
    {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}, {128256, 8192}};  // 70B

TEST(ChooseKernel, EveryChoiceIsCompiledIn) {
  const int tokens = 16384;
  for (const Linear& l : kLinears)
    for (DType out : kOutputs) {
      const struct { OperandLayout layout; int m, n, k; } gemms[] = {
          {OperandLayout::kAkBk, tokens, l.out, l.in},   // forward
          {OperandLayout::kAkBn, tokens, l.in, l.out},   // dgrad
          {OperandLayout::kAmBn, l.out, l.in, tokens}};  // wgrad
      for (auto g : gemms) {
        KernelChoice c = choose_kernel(g.layout, out, g.m, g.n, g.k);
        EXPECT_TRUE(has_instance(g.layout, out, c.config))
            << to_string(g.layout) << " " << g.m << "x" << g.n << "x" << g.k << " -> "
            << to_string(c.config);
        EXPECT_TRUE(c.swizzle == 1 || c.swizzle == 2 || c.swizzle == 4 || c.swizzle == 8);
      }
    }
  for (OperandLayout layout : kLayouts)
    for (DType out : kOutputs)
      for (int m : {1, 199, 1000, 4095})
        for (int n : {1, 199, 1000, 4095})
          for (int k : {1, 199, 4095, 65536})
            EXPECT_TRUE(has_instance(layout, out, choose_kernel(layout, out, m, n, k).config));
}

TEST(ChooseKernel, Deterministic) {
  for (OperandLayout layout : kLayouts)
    EXPECT_EQ(choose_kernel(layout, DType::kBF16, 16384, 28672, 4096),
              choose_kernel(layout, DType::kBF16, 16384, 28672, 4096));
}

TEST(ChooseKernel, RuleForUntunedShapes) {
  // Long K against the output: stream-K.
  EXPECT_TRUE(is_stream_k(choose_kernel(OperandLayout::kAkBk, DType::kBF16, 1024, 1024, 65536).config));
  // Wide N: raster along M with a swizzle, so CTAs in flight share B tiles in L2.
  KernelChoice wide = choose_kernel(OperandLayout::kAkBk, DType::kBF16, 8192, 100000, 1024);
  EXPECT_EQ(wide.raster, RasterOrder::kAlongM);
  EXPECT_GT(wide.swizzle, 1);
}

TEST(ChooseKernel, Float32OutputKeepsTheScheduleFamily) {
  for (OperandLayout layout : kLayouts) {
    KernelChoice bf16 = choose_kernel(layout, DType::kBF16, 16384, 4096, 14336);
    KernelChoice f32 = choose_kernel(layout, DType::kF32, 16384, 4096, 14336);
    EXPECT_EQ(is_stream_k(bf16.config), is_stream_k(f32.config));
    EXPECT_EQ(bf16.raster, f32.raster);
    EXPECT_EQ(bf16.swizzle, f32.swizzle);
  }
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
