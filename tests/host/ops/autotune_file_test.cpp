// SPDX-License-Identifier: BSD-3-Clause
// The autotuner's cache file is trusted only whole: a file written for this identity reads back
// the same winners; anything malformed, another identity, or a kernel that does not exist is
// refused with a reason. Also the M buckets and the candidate set the tuner times.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <tuple>

#include "coda/epilogue/program_launchers.hpp"
#include "coda/ops/autotune.hpp"
#include "src/ops/autotune_file.hpp"

namespace coda::ops::detail {
namespace {

using gemm::Decomposition;
using gemm::KernelChoice;
using gemm::RasterOrder;
using gemm::TileConfig;

const TuneIdentity kId{"NVIDIA H100 80GB HBM3", 132, 12080, "0.1.0+abc1234"};

TuneFile sample() {
  TuneFile f{kId, {}};
  f.winners[{"linear_swiglu", 28672, 4096, 16384}] = {
      {TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2, Decomposition::kHeuristic},
      6.5432};
  f.winners[{"linear_rmsnorm_qknorm_rope_save_pre", 3072, 2048, 512}] = {
      {TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, 8, Decomposition::kHeuristic},
      0.0123};
  return f;
}

std::string refusal(const std::string& text, const TuneIdentity& id = kId) {
  std::string why;
  const auto f = parse_tune_file(text, id, &why);
  if (f) return "accepted";
  EXPECT_FALSE(why.empty());
  return why;
}

// `text` with the first occurrence of `from` replaced by `to` (which must be there).
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(AutotuneFile, RoundTripsItsWinners) {
  const std::string text = format_tune_file(sample());
  std::string why;
  const auto f = parse_tune_file(text, kId, &why);
  ASSERT_TRUE(f) << why << "\n" << text;
  ASSERT_EQ(f->winners.size(), 2u);
  for (const auto& [key, w] : sample().winners) {
    const auto it = f->winners.find(key);
    ASSERT_NE(it, f->winners.end()) << key.op;
    EXPECT_EQ(it->second.choice, w.choice) << key.op;
    EXPECT_NEAR(it->second.ms, w.ms, 1e-4) << key.op;
  }
  EXPECT_TRUE(parse_tune_file(format_tune_file({kId, {}}), kId, &why)) << why;
}

TEST(AutotuneFile, AnotherIdentityIsRefused) {
  const std::string text = format_tune_file(sample());
  TuneIdentity others[4] = {kId, kId, kId, kId};
  others[0].device = "NVIDIA H200";
  others[1].sm_count = 114;
  others[2].driver = 12090;
  others[3].library = "0.1.0+def5678";
  for (const TuneIdentity& other : others)
    EXPECT_NE(refusal(text, other).find("written for NVIDIA H100 80GB HBM3 (132 SMs), driver "
                                        "12080, library 0.1.0+abc1234"),
              std::string::npos)
        << refusal(text, other);
}

TEST(AutotuneFile, MalformedFilesAreRefusedWithTheirReason) {
  const std::string good = format_tune_file(sample());
  const std::tuple<std::string, std::string> cases[] = {
      {"", "unexpected end"},
      {good.substr(0, good.size() / 2), ""},
      {good + "x", "text after the document"},
      {"[]", "not a JSON object"},
      {edited(good, "coda-autotune-1", "coda-autotune-0"), "format"},
      {edited(good, "\"pingpong_128x128_2x1\"", "\"pingpong_256x256_1x1\""),
       "unknown config \"pingpong_256x256_1x1\""},
      {edited(good, "\"coop_128x256_2x1\"", "\"skcoop_128x256_2x1\""), "unknown config"},
      // a program config, but not one the QK-norm program is compiled for
      {edited(good, "\"coop_128x256_2x1\"", "\"pingpong_128x192_2x1\""),
       "linear_rmsnorm_qknorm_rope_save_pre is not compiled for pingpong_128x192_2x1"},
      {edited(good, "\"along_n\"", "\"diagonal\""), "unknown raster"},
      {edited(good, "\"swizzle\": 2", "\"swizzle\": 3"), "swizzle 3"},
      {edited(good, "\"swizzle\": 2", "\"swizzle\": 16"), "\"swizzle\" is not an integer"},
      {edited(good, "\"m_bucket\": 16384", "\"m_bucket\": 12288"), "is not a bucket"},
      {edited(good, "\"n\": 28672", "\"n\": -1"), "\"n\" is not an integer"},
      {edited(good, "\"n\": 28672", "\"n\": 2.5"), "\"n\" is not an integer"},
      {edited(good, "\"k\": 4096, ", ""), "missing \"k\""},
      {edited(good, "\"op\": \"linear_swiglu\"", "\"op\": 7"), "\"op\" is not a string"},
      {edited(good, "\"op\": \"linear_swiglu\"", "\"op\": \"linear_gelu\""),
       "unknown op \"linear_gelu\""},
      {edited(good, "\"ms\": 6.5432", "\"ms\": -1"), "\"ms\" is not a time"},
      {edited(good, "\"sm_count\": 132", "\"sm_count\": \"132\""), "\"sm_count\" is not an integer"},
      {edited(good, "\"winners\": [", "\"winners\": {"), ""},
  };
  for (const auto& [text, reason] : cases) {
    const std::string why = refusal(text);
    EXPECT_NE(why, "accepted") << text;
    EXPECT_NE(why.find(reason), std::string::npos) << "reason: " << why << "\nexpected: " << reason;
  }
  // The same key twice is refused (which would the tuner trust?).
  std::string twice = good;
  const auto first = twice.find("    {\"op\"");
  const auto end = twice.find("}", first) + 1;
  twice.insert(first, twice.substr(first, end - first) + ",\n");
  EXPECT_NE(refusal(twice).find("a second entry for its key"), std::string::npos) << twice;
}

TEST(Autotune, MBucketsArePowersOfTwoFrom128) {
  EXPECT_EQ(autotune_m_bucket(1), 128);
  EXPECT_EQ(autotune_m_bucket(128), 128);
  EXPECT_EQ(autotune_m_bucket(129), 256);
  EXPECT_EQ(autotune_m_bucket(12288), 16384);
  EXPECT_EQ(autotune_m_bucket(16384), 16384);
  EXPECT_EQ(autotune_m_bucket(16385), 32768);
  for (std::int64_t m : {1, 300, 4096, 24576, 65536, 100000}) {
    const std::int64_t b = autotune_m_bucket(m);
    EXPECT_GE(b, m);
    EXPECT_EQ(autotune_m_bucket(b), b) << "a bucket is its own bucket";
    EXPECT_TRUE(b == 128 || b / 2 < m) << "the smallest bucket holding " << m;
  }
}

TEST(Autotune, CandidatesAreTheProgramConfigsEachOnce) {
  const auto& c = program_candidates();
  std::set<std::tuple<int, int, int>> seen;
  for (const KernelChoice& k : c) {
    EXPECT_NE(std::find(std::begin(epilogue::kProgramConfigs), std::end(epilogue::kProgramConfigs),
                        k.config),
              std::end(epilogue::kProgramConfigs));
    EXPECT_NE(k.raster, RasterOrder::kHeuristic);
    EXPECT_EQ(k.decomposition, Decomposition::kHeuristic);
    EXPECT_TRUE(seen.insert({int(k.config), int(k.raster), k.swizzle}).second);
  }
  EXPECT_EQ(c.size(), std::size(epilogue::kProgramConfigs) * 2 * 4);
}

TEST(Autotune, OffUnlessAsked) {
  set_autotune(true);
  EXPECT_TRUE(autotune_enabled());
  set_autotune(false);
  EXPECT_FALSE(autotune_enabled());
}

}  // namespace
}  // namespace coda::ops::detail
