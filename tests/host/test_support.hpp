// SPDX-License-Identifier: BSD-3-Clause
// Host-test helpers: error_of(f), and fake aligned device addresses for validation-only tests.
#pragma once

#include <string>

#include "coda/status.hpp"

namespace coda::testing {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Fake, 16-byte-aligned addresses: validation never dereferences them.
inline void* const kFakeA = reinterpret_cast<void*>(0x10000);
inline void* const kFakeB = reinterpret_cast<void*>(0x20000);
inline void* const kFakeD = reinterpret_cast<void*>(0x30000);

}  // namespace coda::testing
