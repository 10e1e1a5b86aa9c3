// SPDX-License-Identifier: BSD-3-Clause
// error_of(f): the coda::Error message f throws, or "" if it throws none.
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

}  // namespace coda::testing
