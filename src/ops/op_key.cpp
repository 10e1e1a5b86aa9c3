// SPDX-License-Identifier: BSD-3-Clause
#include "coda/ops/op_key.hpp"

#include <cstdio>

namespace coda::ops {

namespace {
struct Spelling {
  const char* name;
  const char* identifier;
};
constexpr Spelling kSpellings[] = {
#define CODA_OP_KEY_SPELLING(id, name) {name, #id},
    CODA_OP_KEYS(CODA_OP_KEY_SPELLING)
#undef CODA_OP_KEY_SPELLING
};
static_assert(sizeof(kSpellings) / sizeof(kSpellings[0]) == std::size_t(OpKey::kCount));
}  // namespace

const char* name(OpKey key) {
  return key < OpKey::kCount ? kSpellings[std::size_t(key)].name : "?";
}

const char* identifier(OpKey key) {
  return key < OpKey::kCount ? kSpellings[std::size_t(key)].identifier : "?";
}

std::optional<OpKey> op_key_from_name(std::string_view n) {
  for (std::size_t i = 0; i < std::size_t(OpKey::kCount); ++i)
    if (n == kSpellings[i].name) return OpKey(i);
  return std::nullopt;
}

std::string op_table_row(OpKey key, std::int64_t m, std::int64_t n, std::int64_t k,
                         const gemm::KernelChoice& choice) {
  const char* config = "?";
  if (choice.config == gemm::TileConfig::kPingpong128x128Cluster2x1)
    config = "kPingpong128x128Cluster2x1";
  else if (choice.config == gemm::TileConfig::kCoop128x256Cluster2x1)
    config = "kCoop128x256Cluster2x1";
  char row[256];
  std::snprintf(row, sizeof row,
                "{OpKey::%s, %lld, %lld, %lld, {TileConfig::%s, RasterOrder::%s, %d, "
                "Decomposition::kHeuristic}},",
                identifier(key), static_cast<long long>(m), static_cast<long long>(n),
                static_cast<long long>(k), config,
                choice.raster == gemm::RasterOrder::kAlongM ? "kAlongM" : "kAlongN", choice.swizzle);
  return row;
}

}  // namespace coda::ops
