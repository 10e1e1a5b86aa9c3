// SPDX-License-Identifier: BSD-3-Clause
// The autotuner's cache file (one per device): what it holds, and its JSON text both ways. A file
// is trusted only whole: any malformed part, another identity or an unknown kernel rejects it.
// Host-only; no CUDA. Internal.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "coda/gemm/config.hpp"

namespace coda::ops::detail {

// Whose measurements these are: a winner is only valid on the same part, driver and build.
struct TuneIdentity {
  std::string device;  // cudaDeviceProp::name
  int sm_count = 0;
  int driver = 0;       // cudaDriverGetVersion
  std::string library;  // CODA_LIBRARY_VERSION (version + commit)
  bool operator==(const TuneIdentity& o) const {
    return std::tie(device, sm_count, driver, library) ==
           std::tie(o.device, o.sm_count, o.driver, o.library);
  }
};

// One tuned (op, shape bucket). `op` is the table's key (e.g. "linear_qknorm_rope_save_pre").
struct TuneKey {
  std::string op;
  std::int64_t n = 0, k = 0, m_bucket = 0;
  bool operator<(const TuneKey& o) const {
    return std::tie(op, n, k, m_bucket) < std::tie(o.op, o.n, o.k, o.m_bucket);
  }
};

struct TuneWinner {
  gemm::KernelChoice choice;
  double ms = 0;  // its time at the M it was tuned on (informative)
};

struct TuneFile {
  TuneIdentity identity;
  std::map<TuneKey, TuneWinner> winners;
};

std::string format_tune_file(const TuneFile& file);

// The file in `text` if it parses completely and belongs to `expect`; else nullopt, with the
// reason in *why ("not JSON: ...", "written for another device ...", "unknown config ...").
std::optional<TuneFile> parse_tune_file(const std::string& text, const TuneIdentity& expect,
                                        std::string* why);

}  // namespace coda::ops::detail
