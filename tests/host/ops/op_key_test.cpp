// SPDX-License-Identifier: BSD-3-Clause
// The op keys: one name and one identifier each, both unique, and names that read back; the
// umbrella header compiles on its own in a host-only translation unit (no CUDA compiler).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "coda/ops.hpp"

namespace coda::ops {
namespace {

TEST(OpKey, NamesAndIdentifiersAreUniqueAndReadBack) {
  std::set<std::string> names, identifiers;
  for (int i = 0; i < int(OpKey::kCount); ++i) {
    const OpKey key = OpKey(i);
    EXPECT_TRUE(names.insert(name(key)).second) << name(key);
    EXPECT_TRUE(identifiers.insert(identifier(key)).second) << identifier(key);
    EXPECT_EQ(op_key_from_name(name(key)), key) << name(key);
    EXPECT_EQ(std::string(identifier(key)).rfind("kLinear", 0), 0u) << identifier(key);
  }
  EXPECT_EQ(names.size(), std::size_t(OpKey::kCount));
  EXPECT_FALSE(op_key_from_name("linear_swiglu_no_z"));  // a bench variant, not a key
  EXPECT_FALSE(op_key_from_name(""));
  EXPECT_STREQ(name(OpKey::kCount), "?");
}

// The table row both tuners write and scripts/merge_table.py reads (its KEY pattern).
TEST(OpKey, TableRowSpellsTheKeyShapeAndKernel) {
  const gemm::KernelChoice c{gemm::TileConfig::kPingpong128x128Cluster2x1, gemm::RasterOrder::kAlongM, 8};
  EXPECT_EQ(op_table_row(OpKey::kLinearSwiglu, 16384, 28672, 4096, c),
            "{OpKey::kLinearSwiglu, 16384, 28672, 4096, {TileConfig::kPingpong128x128Cluster2x1, "
            "RasterOrder::kAlongM, 8, Decomposition::kHeuristic}},");
  const gemm::KernelChoice d{gemm::TileConfig::kCoop128x256Cluster2x1, gemm::RasterOrder::kAlongN, 1};
  EXPECT_EQ(op_table_row(OpKey::kLinearRope, 2048, 6144, 4096, d),
            "{OpKey::kLinearRope, 2048, 6144, 4096, {TileConfig::kCoop128x256Cluster2x1, "
            "RasterOrder::kAlongN, 1, Decomposition::kHeuristic}},");
}

}  // namespace
}  // namespace coda::ops
