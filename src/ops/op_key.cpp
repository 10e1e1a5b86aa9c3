// SPDX-License-Identifier: BSD-3-Clause
#include "coda/ops/op_key.hpp"

#include <string>

#include "coda/gemm/choose_config.hpp"

namespace coda::ops {

namespace {
struct Spelling {
  const char* name;
  const char* identifier;
};
constexpr Spelling kSpellings[] = {
#define CODA_OP_KEY_SPELLING(id, name, program) {name, #id},
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
  return std::string("{OpKey::") + identifier(key) + ", " + std::to_string(m) + ", " +
         std::to_string(n) + ", " + std::to_string(k) + ", " + gemm::choice_literal(choice) + "},";
}

}  // namespace coda::ops
