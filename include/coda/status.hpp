// SPDX-License-Identifier: BSD-3-Clause
// coda::Error, the one exception every public entry point throws on bad input or a failed CUDA call.
#pragma once

#include <stdexcept>
#include <string>

namespace coda {

// Thrown before anything is launched when an argument breaks a constraint, and after a failed
// CUDA call. The message names the entry point, the argument and the constraint, e.g.
// "coda::gemm: A: row stride must be a multiple of 8 elements (16 bytes, for TMA); got 199".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws coda::Error("<where>: <what>") unless `ok`.
inline void require(bool ok, const std::string& where, const std::string& what) {
  if (!ok) throw Error(where + ": " + what);
}

}  // namespace coda
