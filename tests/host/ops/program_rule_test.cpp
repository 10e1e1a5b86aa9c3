// SPDX-License-Identifier: BSD-3-Clause
// The forward fused ops' rule for shapes no table row is near (detail::forward_program_rule): at
// every K it picks a kernel the programs are compiled for and the autotuner can time against it,
// and it trades the epilogue's overlap (Pingpong) for the mainloop's operand traffic (Cooperative)
// once, as K grows (docs/design.md §10.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "coda/epilogue/program_launchers.hpp"
#include "coda/ops/autotune.hpp"
#include "src/ops/op_checks.hpp"

namespace coda::ops::detail {
namespace {

// The tables of no GPU: an op's own fallback at every shape.
constexpr gemm::TunedGpu kHost = gemm::TunedGpu::kUntuned;

TEST(ForwardProgramRule, PicksACompiledCandidateAtEveryShape) {
  const auto& candidates = program_candidates();
  for (std::int64_t m : {1, 300, 1024, 2048, 5194, 16384, 65536})
    for (std::int64_t n : {8, 2048, 3072, 28672, 128256})
      for (std::int64_t k : {1, 8, 64, 2048, 4096, 8191, 8192, 16384, 57344, 1 << 20}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
        const gemm::KernelChoice c = forward_program_rule(m, n, k);
        for (int i = 0; i < int(OpKey::kCount); ++i)  // the rule serves every op
          EXPECT_TRUE(epilogue::has_program_instance(OpKey(i), c.config));
        EXPECT_EQ(c.decomposition, gemm::Decomposition::kHeuristic);
        EXPECT_NE(std::find(candidates.begin(), candidates.end(), c), candidates.end())
            << "the rule must be one of the autotuner's candidates, which it is timed against";
      }
}

TEST(ForwardProgramRule, SwitchesFromPingpongToCooperativeOnceAsKGrows) {
  bool cooperative = false;
  int switches = 0;
  for (std::int64_t k = 64; k <= (1 << 17); k += 64) {
    const bool coop =
        forward_program_rule(16384, 4096, k).config == gemm::TileConfig::kCoop128x256Cluster2x1;
    switches += coop != cooperative;
    cooperative = coop;
  }
  EXPECT_EQ(switches, 1);
  EXPECT_TRUE(cooperative) << "long K: the mainloop dominates, Cooperative's smaller traffic wins";
  EXPECT_EQ(forward_program_rule(16384, 4096, 64).config,
            gemm::TileConfig::kPingpong128x128Cluster2x1)
      << "short K: the epilogue's share is large, Pingpong hides it";
}

// Over fewer tile rows than columns, with A small enough to stay in L2, the rule walks along M
// (the shorter mode), Pingpong with swizzle 2; otherwise along N with the swizzle measured at
// M = 16384.
TEST(ForwardProgramRule, WalksTheShorterMode) {
  // M = 1024: 8 rows of 128; the 1B QKV's N = 3072 is 24 columns of 128 (Pingpong).
  const gemm::KernelChoice few_tokens = forward_program_rule(1024, 3072, 2048);
  EXPECT_EQ(few_tokens.config, gemm::TileConfig::kPingpong128x128Cluster2x1);
  EXPECT_EQ(few_tokens.raster, gemm::RasterOrder::kAlongM);
  EXPECT_EQ(few_tokens.swizzle, 2);
  // M = 16384: 128 rows against 24 columns.
  const gemm::KernelChoice many_tokens = forward_program_rule(16384, 3072, 2048);
  EXPECT_EQ(many_tokens.raster, gemm::RasterOrder::kAlongN);
  EXPECT_EQ(many_tokens.swizzle, 1);
  // Equal rows and columns (16384 × 16384 in 128 × 128 tiles) stay along N.
  EXPECT_EQ(forward_program_rule(16384, 16384, 2048).raster, gemm::RasterOrder::kAlongN);
  // Cooperative (K >= 8192): 128 × 256 tiles, the swizzle stays 4. M = 1024 against the 70B
  // QKV's 10240 columns (40 of 256): along M; M = 32768 (256 rows): along N.
  const gemm::KernelChoice coop = forward_program_rule(1024, 10240, 8192);
  EXPECT_EQ(coop.config, gemm::TileConfig::kCoop128x256Cluster2x1);
  EXPECT_EQ(coop.raster, gemm::RasterOrder::kAlongM);
  EXPECT_EQ(coop.swizzle, 4);
  EXPECT_EQ(forward_program_rule(32768, 10240, 8192).raster, gemm::RasterOrder::kAlongN);
  // Fewer rows than columns but an A past a third of L2 (M = 16384, K = 4096: 128 MB): along N,
  // as the wide-N ops measured best at M = 16384 (the 8B gate/up: 128 rows, 224 columns).
  const gemm::KernelChoice wide = forward_program_rule(16384, 28672, 4096);
  EXPECT_EQ(wide.raster, gemm::RasterOrder::kAlongN);
  EXPECT_EQ(wide.swizzle, 1);
  // A at 16 MiB still walks along M (M = 2048, K = 4096), one row more of tokens does not.
  EXPECT_EQ(forward_program_rule(2048, 28672, 4096).raster, gemm::RasterOrder::kAlongM);
  EXPECT_EQ(forward_program_rule(2049, 28672, 4096).raster, gemm::RasterOrder::kAlongN);
  // A ragged M rounds up to the 2 × 1 cluster: 3 tile rows schedule as 4, against 4 columns.
  EXPECT_EQ(forward_program_rule(300, 512, 64).raster, gemm::RasterOrder::kAlongN);
  EXPECT_EQ(forward_program_rule(300, 640, 64).raster, gemm::RasterOrder::kAlongM);
}

// The SwiGLU backward's own swizzle fit (swizzle_fit_of): the 8B row's Pingpong 128 × 192
// swizzle 4 falls to 2 at M = 13350 (106 × 75 cluster tiles: 112 × 76 is 7.1 % more, 108 × 76
// 3.2 %), a swizzle 8 at M = 5194 falls to 2 (42 tile rows of 128 rounded to 44: 4.8 %), and only where
// no swizzle fits does a Pingpong choice fall to 1 and walk the shorter mode; every other op
// keeps the defaults.
TEST(SwizzleFit, SwigluBackwardKeepsItsSwizzleAtSmallPadding) {
  const gemm::KernelChoice tuned{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                 gemm::RasterOrder::kAlongN, 8, gemm::Decomposition::kHeuristic};
  const gemm::SwizzleFit swiglu_bwd = swizzle_fit_of(OpKey::kLinearSwigluBwd);
  const gemm::KernelChoice at_12000 = gemm::fit_swizzle(tuned, 12000, 8192, swiglu_bwd);
  EXPECT_GT(at_12000.swizzle, 1);
  EXPECT_EQ(at_12000.raster, gemm::RasterOrder::kAlongN);
  const gemm::KernelChoice at_5194 = gemm::fit_swizzle(tuned, 5194, 8192, swiglu_bwd);
  EXPECT_EQ(at_5194.swizzle, 2);
  EXPECT_EQ(at_5194.raster, gemm::RasterOrder::kAlongN);
  const gemm::KernelChoice wide{gemm::TileConfig::kPingpong128x192Cluster2x1,
                                gemm::RasterOrder::kAlongN, 4, gemm::Decomposition::kHeuristic};
  EXPECT_EQ(gemm::fit_swizzle(wide, 13350, 14336, swiglu_bwd).swizzle, 2);
  EXPECT_EQ(gemm::fit_swizzle(wide, 12000, 14336, swiglu_bwd).swizzle, 4);  // 94 × 75: 3.5 %
  // 6 tile rows of 128 rounded to 8 for swizzle 2: 33 % padding, so swizzle 1 and the heuristic.
  const gemm::KernelChoice at_700 = gemm::fit_swizzle(tuned, 700, 8192, swiglu_bwd);
  EXPECT_EQ(at_700.swizzle, 1);
  EXPECT_EQ(at_700.raster, gemm::RasterOrder::kHeuristic);
  // Through op_choice (no table on this host: the op's fallback, fitted by its own policy).
  for (std::int64_t m : {5194, 12000}) {
    const gemm::KernelChoice fallback = fallback_of(kHost, OpKey::kLinearSwigluBwd, m, 8192, 2048);
    EXPECT_EQ(op_choice(kHost, OpKey::kLinearSwigluBwd, m, 8192, 2048),
              gemm::fit_swizzle(fallback, int(m), 8192, swiglu_bwd));
  }
  // The defaults: swizzle 1 at M = 12000, and a Pingpong choice keeps its raster.
  for (int i = 0; i < int(OpKey::kCount); ++i) {
    const OpKey op = OpKey(i);
    if (op == OpKey::kLinearSwigluBwd) continue;
    const gemm::KernelChoice c = gemm::fit_swizzle(tuned, 12000, 8192, swizzle_fit_of(op));
    EXPECT_EQ(c.swizzle, 1) << name(op);
    EXPECT_EQ(c.raster, gemm::RasterOrder::kAlongN) << name(op);
  }
}

// A row tuned along M whose swizzle the fit lowers walks along N, for every op (swizzle_fit_of);
// the plain GEMM's fit keeps the raster, and so does an op's where the swizzle stays.
TEST(SwizzleFit, LoweredSwizzleAlongMWalksAlongN) {
  const gemm::KernelChoice along_m{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                   gemm::RasterOrder::kAlongM, 8, gemm::Decomposition::kHeuristic};
  for (int i = 0; i < int(OpKey::kCount); ++i) {
    const gemm::SwizzleFit fit = swizzle_fit_of(OpKey(i));
    // 8B QKV at M = 13350: 106 × 48 cluster tiles; swizzle 8 pads them to 112 × 48 (5.7 %).
    const gemm::KernelChoice lowered = gemm::fit_swizzle(along_m, 13350, 6144, fit);
    EXPECT_EQ(lowered.swizzle, 2) << name(OpKey(i));
    EXPECT_EQ(lowered.raster, gemm::RasterOrder::kAlongN) << name(OpKey(i));
    EXPECT_EQ(gemm::fit_swizzle(along_m, 16384, 6144, fit), along_m) << name(OpKey(i));
  }
  const gemm::KernelChoice plain = gemm::fit_swizzle(along_m, 13350, 6144);
  EXPECT_EQ(plain.swizzle, 2);
  EXPECT_EQ(plain.raster, gemm::RasterOrder::kAlongM);
}

// Every op's choice (detail::op_choice and fallback_of), at every shape of a grid and with each
// GPU's tables, is a kernel the programs are compiled for, whatever the plain GEMM's table or rule picked for the
// dgrad ops (its menu has configs the programs lack: stream-K, split-N).
TEST(FallbackOf, IsAProgramKernelForEveryOpAndShape) {
  for (int i = 0; i < int(OpKey::kCount); ++i)
    for (std::int64_t m : {1, 300, 1024, 3000, 5194, 16384, 65536})
      for (std::int64_t n : {8, 2048, 8192, 28672, 128256})
        for (std::int64_t k : {64, 2048, 8192, 57344}) {
          const OpKey op = OpKey(i);
          SCOPED_TRACE(std::string(name(op)) + " " + std::to_string(m) + "x" + std::to_string(n) +
                       "x" + std::to_string(k));
          for (gemm::TunedGpu gpu :
               {gemm::TunedGpu::kUntuned, gemm::TunedGpu::kH100, gemm::TunedGpu::kH200}) {
            const gemm::KernelChoice c = op_choice(gpu, op, m, n, k);
            EXPECT_TRUE(epilogue::has_program_instance(op, c.config)) << gemm::to_string(gpu);
            EXPECT_NE(c.decomposition, gemm::Decomposition::kStreamK) << gemm::to_string(gpu);
            EXPECT_TRUE(epilogue::has_program_instance(op, fallback_of(gpu, op, m, n, k).config));
          }
        }
}

// On the H100, from K = 4096 and M = 4096, the fallback's Pingpong 128 x 128 along N widens to
// 128 x 192 (where the op's program has it), at every K below 8192 for an MLP's wide output, and
// so does the SwiGLU backward's kernel; below
// kFewTokens a forward op's Pingpong widens at every K (FallbackOf.WidensPingpongBelowFewTokens);
// everything else, and every other GPU, keeps the rule (wide_pingpong_where_measured).
TEST(FallbackOf, WidensPingpongOnTheH100FromK4096) {
  constexpr gemm::TunedGpu kH100 = gemm::TunedGpu::kH100;
  const gemm::KernelChoice wide{gemm::TileConfig::kPingpong128x192Cluster2x1,
                                gemm::RasterOrder::kAlongN, 2, gemm::Decomposition::kHeuristic};
  // Forward, K = 4096, along N (A past L2): widened; the same call on the other GPUs is the rule.
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearSwiglu, 12000, 24576, 4096), wide);
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearCrossEntropy, 12000, 151936, 4096), wide);
  EXPECT_EQ(fallback_of(gemm::TunedGpu::kUntuned, OpKey::kLinearSwiglu, 12000, 24576, 4096),
            forward_program_rule(12000, 24576, 4096));  // the H200's: WalksAlongMOnTheH200
  // An MLP's wide output (N >= 2K) widens at K below 4096 too, and over the rule's walk along M
  // of a small A (the 1B's gate/up at M = 4096: 16 MiB); the LM head's cross-entropy does not.
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearSwiglu, 12000, 24576, 3584), wide);
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRmsnormSwiglu, 4096, 16384, 2048), wide);
  EXPECT_EQ(forward_program_rule(4096, 16384, 2048).raster, gemm::RasterOrder::kAlongM);
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearBiasGelu, 8192, 8192, 2048), wide);
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearCrossEntropy, 8192, 128256, 2048),
            forward_program_rule(8192, 128256, 2048));
  // Not widened: K below 4096 for the QKV side (N < 2K), Cooperative from K = 8192, the walk along
  // M of a small A outside the MLP, and the QK-norm programs (not compiled for 128 x 192).
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRmsnorm, 12000, 4608, 3584),
            forward_program_rule(12000, 4608, 3584));
  using Mk = std::pair<std::int64_t, std::int64_t>;
  for (auto [m, k] : {Mk{12000, 8192}, Mk{1024, 8192}})
    EXPECT_EQ(fallback_of(kH100, OpKey::kLinearSwiglu, m, 24576, k),
              forward_program_rule(m, 24576, k))
        << m << " x " << k;
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRope, 1024 + kFewTokens, 6144, 2048),
            forward_program_rule(1024 + kFewTokens, 6144, 2048));
  EXPECT_FALSE(epilogue::has_program_instance(OpKey::kLinearQknormRope, wide.config));
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearQknormRope, 12000, 6144, 4096),
            forward_program_rule(12000, 6144, 4096));
  // An MLP's wide dgrad (the SwiGLU and bias-GELU backward): from kFewTokens, 128 x 192 along N
  // swizzle 2 at K = 4096 and 8192, Pingpong 128 x 128 along N swizzle 2 at K = 2048; below it,
  // 128 x 192 along the shorter mode from K = 4096 (FallbackOf.WidensPingpongBelowFewTokens) and
  // the dgrad GEMM's kernel in Pingpong at K = 2048.
  const gemm::KernelChoice narrow_along_n{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                          gemm::RasterOrder::kAlongN, 2,
                                          gemm::Decomposition::kHeuristic};
  for (OpKey op : {OpKey::kLinearSwigluBwd, OpKey::kLinearBiasGeluBwd}) {
    for (std::int64_t k : {4096, 8192})
      EXPECT_EQ(fallback_of(kH100, op, 12000, 12288, k), wide) << name(op) << " " << k;
    EXPECT_EQ(fallback_of(kH100, op, 12000, 12288, 2048), narrow_along_n) << name(op);
    EXPECT_EQ(fallback_of(kH100, op, 4095, 12288, 4096).config, wide.config) << name(op);
    EXPECT_EQ(fallback_of(kH100, op, 4095, 12288, 2048).config,
              gemm::TileConfig::kPingpong128x128Cluster2x1) << name(op);
  }
  // Through op_choice at widths and an M no H100 row is near (Llama-2-7B's FFN 11008, M = 11000):
  // the SwiGLU backward keeps swizzle 2 at 2.3 % padding (its own fit, 3 %), a forward op drops to
  // 1 (the default 2 %).
  const gemm::KernelChoice bwd = op_choice(kH100, OpKey::kLinearSwigluBwd, 11000, 11008, 4096);
  EXPECT_EQ(bwd.config, wide.config);
  EXPECT_EQ(bwd.swizzle, 2);
  const gemm::KernelChoice fwd = op_choice(kH100, OpKey::kLinearSwiglu, 11000, 22016, 4096);
  EXPECT_EQ(fwd.config, wide.config);
  EXPECT_EQ(fwd.swizzle, 1);
}

// Below kFewTokens, on the H100, a forward op's Pingpong 128 x 128 becomes 128 x 192 at every K
// below 8192, along the shorter mode of its tile grid, swizzle 2 where that pads no tile, else 1
// with the same raster (which op_choice's own fit then keeps).
TEST(FallbackOf, WidensPingpongBelowFewTokens) {
  constexpr gemm::TunedGpu kH100 = gemm::TunedGpu::kH100;
  using gemm::RasterOrder;
  const auto wide = [](RasterOrder raster, int swizzle) {
    return gemm::KernelChoice{gemm::TileConfig::kPingpong128x192Cluster2x1, raster, swizzle,
                              gemm::Decomposition::kHeuristic};
  };
  // 12 tile rows (a multiple of swizzle 2 x cluster 2) against 32 columns: along M, swizzle 2;
  // at K = 2048 too, and along M although A (2896 x 4096) is past the rule's L2 bound.
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRmsnorm, 1448, 6144, 4096), wide(RasterOrder::kAlongM, 2));
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRope, 1448, 6144, 2048), wide(RasterOrder::kAlongM, 2));
  EXPECT_EQ(forward_program_rule(2896, 6144, 4096).raster, RasterOrder::kAlongN);
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRmsnorm, 2896, 6144, 4096), wide(RasterOrder::kAlongM, 2));
  // 18 tile rows pad to 20 under swizzle 2 (11 %): swizzle 1, still along M; and op_choice keeps
  // it at widths no H100 row has (Llama-2-7B's FFN, 2 x 11008).
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearSwiglu, 2200, 28672, 4096), wide(RasterOrder::kAlongM, 1));
  EXPECT_EQ(op_choice(kH100, OpKey::kLinearSwiglu, 2200, 22016, 4096), wide(RasterOrder::kAlongM, 1));
  // More tile rows than columns: along N.
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearResidualRms, 3000, 1024, 2048).raster, RasterOrder::kAlongN);
  // Not widened: Cooperative (K = 8192), from kFewTokens at K = 2048, the QK-norm programs, and
  // every other GPU.
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearSwiglu, 1448, 57344, 8192),
            forward_program_rule(1448, 57344, 8192));
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearRope, kFewTokens, 3072, 2048),
            forward_program_rule(kFewTokens, 3072, 2048));
  EXPECT_EQ(fallback_of(kH100, OpKey::kLinearQknormRope, 1448, 6144, 4096),
            forward_program_rule(1448, 6144, 4096));
  // An MLP's wide dgrad widens the same way from K = 4096 (1448 rows: 12 tile rows against 75
  // columns, along M, swizzle 2), not at K = 2048.
  for (OpKey op : {OpKey::kLinearSwigluBwd, OpKey::kLinearBiasGeluBwd}) {
    EXPECT_EQ(fallback_of(kH100, op, 1448, 14336, 4096), wide(RasterOrder::kAlongM, 2)) << name(op);
    EXPECT_EQ(fallback_of(kH100, op, 1448, 8192, 2048).config,
              gemm::TileConfig::kPingpong128x128Cluster2x1) << name(op);
  }
  for (gemm::TunedGpu gpu : {gemm::TunedGpu::kUntuned, gemm::TunedGpu::kH200})
    EXPECT_EQ(fallback_of(gpu, OpKey::kLinearRmsnorm, 1448, 6144, 4096),
              forward_program_rule(1448, 6144, 4096)) << gemm::to_string(gpu);
}

// On the H200, a wide-output forward op (N >= 2K) walks along M with swizzle 1 where the rule
// walks along N over fewer tile rows than columns, up to 12288 rows (6144 for a vocabulary-wide
// N >= 16K); every other op, shape and GPU keeps what it had (along_m_where_measured).
TEST(FallbackOf, WalksAlongMForWideOutputsOnTheH200) {
  constexpr gemm::TunedGpu kH200 = gemm::TunedGpu::kH200;
  const gemm::KernelChoice along_m{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                   gemm::RasterOrder::kAlongM, 1, gemm::Decomposition::kHeuristic};
  for (OpKey op : {OpKey::kLinearSwiglu, OpKey::kLinearRmsnormSwiglu, OpKey::kLinearBiasGelu,
                   OpKey::kLinearBiasGeluSavePre}) {
    SCOPED_TRACE(name(op));
    for (std::int64_t m : {4096, 5793, 8192, 11585, 12288})
      EXPECT_EQ(fallback_of(kH200, op, m, 28672, 4096), along_m) << m;
    EXPECT_EQ(fallback_of(kH200, op, 12289, 28672, 4096), forward_program_rule(12289, 28672, 4096));
    EXPECT_EQ(fallback_of(kH200, op, 16384, 28672, 4096).raster, gemm::RasterOrder::kAlongN);
    EXPECT_EQ(fallback_of(kH200, op, 8192, 16384, 2048), along_m);  // the 1B's gate/up: N = 8K
    // N below 2K (an MLP narrower than twice its input), K = 8192 (Cooperative), a small A (the
    // rule's own walk along M, swizzle 2), and the other GPUs: as before.
    EXPECT_EQ(fallback_of(kH200, op, 8192, 7168, 4096), forward_program_rule(8192, 7168, 4096));
    EXPECT_EQ(fallback_of(kH200, op, 8192, 57344, 8192), forward_program_rule(8192, 57344, 8192));
    EXPECT_EQ(fallback_of(kH200, op, 1024, 28672, 4096), forward_program_rule(1024, 28672, 4096));
    EXPECT_EQ(fallback_of(gemm::TunedGpu::kUntuned, op, 8192, 28672, 4096),
              forward_program_rule(8192, 28672, 4096));
    EXPECT_EQ(fallback_of(gemm::TunedGpu::kH100, op, 8192, 28672, 4096).config,
              gemm::TileConfig::kPingpong128x192Cluster2x1);
  }
  // The loss-only cross-entropy (N = V >= 16K): along M up to 6144 rows.
  EXPECT_EQ(fallback_of(kH200, OpKey::kLinearCrossEntropy, 5793, 151936, 4096), along_m);
  EXPECT_EQ(fallback_of(kH200, OpKey::kLinearCrossEntropy, 6145, 151936, 4096),
            forward_program_rule(6145, 151936, 4096));
  // The QKV-side ops keep the rule (N = 1.5 K at Llama widths; along M lost there).
  for (OpKey op : {OpKey::kLinearRope, OpKey::kLinearRmsnorm, OpKey::kLinearRmsnormRope,
                   OpKey::kLinearQknormRope, OpKey::kLinearResidualRms})
    EXPECT_EQ(fallback_of(kH200, op, 8192, 12288, 4096), forward_program_rule(8192, 12288, 4096))
        << name(op);
  // Through op_choice at widths no H200 row has (Qwen2.5-7B's gate/up, 2 x 18944): along M, s1.
  EXPECT_EQ(op_choice(kH200, OpKey::kLinearSwiglu, 7000, 37888, 3584), along_m);
}

// What each op falls back to, where no tuned row is near.
TEST(FallbackOf, NamesEachOpsOwnKernel) {
  constexpr gemm::TunedGpu kH200 = gemm::TunedGpu::kH200;
  const std::int64_t m = 3000, n = 8192, k = 2048;
  EXPECT_EQ(fallback_of(kHost, OpKey::kLinearSwiglu, m, n, k), forward_program_rule(m, n, k));
  EXPECT_EQ(fallback_of(kHost, OpKey::kLinearSwigluBwd, m, n, k).config,
            gemm::TileConfig::kPingpong128x128Cluster2x1);
  // The RMSNorm backward: on the H200 below K = 8192 and 32768 rows (the QKV dgrad) Pingpong
  // 128 x 128 along N, swizzle 1; elsewhere, and on every other GPU, Cooperative 128 x 256, also
  // where the plain dgrad GEMM runs Pingpong.
  const gemm::KernelChoice rmsnorm_bwd_short_k{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                               gemm::RasterOrder::kAlongN, 1,
                                               gemm::Decomposition::kHeuristic};
  EXPECT_EQ(fallback_of(kH200, OpKey::kLinearRmsnormBwd, 16384, 4096, 6144), rmsnorm_bwd_short_k);
  EXPECT_EQ(fallback_of(kH200, OpKey::kLinearRmsnormBwd, m, n, k), rmsnorm_bwd_short_k);
  EXPECT_EQ(fallback_of(kH200, OpKey::kLinearRmsnormBwd, 32768, 4096, 6144).config,
            gemm::TileConfig::kCoop128x256Cluster2x1);
  EXPECT_EQ(fallback_of(kH200, OpKey::kLinearRmsnormBwd, 16384, 4096, 8192).config,
            gemm::TileConfig::kCoop128x256Cluster2x1);
  for (gemm::TunedGpu gpu : {gemm::TunedGpu::kUntuned, gemm::TunedGpu::kH100}) {
    EXPECT_EQ(fallback_of(gpu, OpKey::kLinearRmsnormBwd, 16384, 4096, 6144).config,
              gemm::TileConfig::kCoop128x256Cluster2x1) << gemm::to_string(gpu);
    EXPECT_EQ(fallback_of(gpu, OpKey::kLinearRmsnormBwd, m, n, k).config,
              gemm::TileConfig::kCoop128x256Cluster2x1) << gemm::to_string(gpu);
  }
  EXPECT_EQ(fallback_of(kHost, OpKey::kLinearCrossEntropy, m, 128256, k),
            forward_program_rule(m, 128256, k));
  // A QK-norm op that saves Pre runs its base op's choice in Pingpong.
  const gemm::KernelChoice base = op_choice(kHost, OpKey::kLinearQknormRope, 1024, 10240, 8192);
  EXPECT_EQ(base.config, gemm::TileConfig::kCoop128x256Cluster2x1);  // K = 8192: Cooperative
  gemm::KernelChoice expected = base;
  expected.config = gemm::TileConfig::kPingpong128x128Cluster2x1;
  EXPECT_EQ(fallback_of(kHost, OpKey::kLinearQknormRopeSavePre, 1024, 10240, 8192), expected);
  // Elsewhere the ops in a dgrad GEMM share the plain dgrad GEMM's raster and swizzle: the
  // RMSNorm backward's in Cooperative, an MLP's wide dgrad's in Pingpong (off the H100).
  const auto dgrad = [](std::int64_t m_, std::int64_t n_, std::int64_t k_) {
    return gemm::choose_data_parallel_kernel_for(kHost, gemm::OperandLayout::kAkBn, DType::kBF16,
                                                 int(m_), int(n_), int(k_));
  };
  gemm::KernelChoice expected_rms = dgrad(m, n, k);
  expected_rms.config = gemm::TileConfig::kCoop128x256Cluster2x1;
  EXPECT_EQ(fallback_of(kHost, OpKey::kLinearRmsnormBwd, m, n, k), expected_rms);
  for (OpKey op : {OpKey::kLinearBiasGeluBwd, OpKey::kLinearSwigluBwd}) {
    gemm::KernelChoice expected_mlp = dgrad(m, n, k);
    expected_mlp.config = gemm::TileConfig::kPingpong128x128Cluster2x1;
    EXPECT_EQ(fallback_of(kHost, op, m, n, k), expected_mlp) << name(op);
  }
}

}  // namespace
}  // namespace coda::ops::detail
